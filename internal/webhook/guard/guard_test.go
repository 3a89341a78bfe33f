// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package guard

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/example/platform-operator/internal/testutil"
)

const (
	validatePath = "/validate-platform-example-com-v1-scheduletask"
	mutatePath   = "/mutate-platform-example-com-v1-scheduletask"
	convertPath  = "/convert"
)

// recordingServer is a webhook.Server that keeps what is registered on it
// in a mux, so that a test can serve it with httptest.
type recordingServer struct {
	webhook.Server
	mux *http.ServeMux
}

func (s *recordingServer) Register(path string, hook http.Handler) { s.mux.Handle(path, hook) }

// guarded registers each handler of hooks on a guarded server with opts and
// returns the mux that serves them.
func guarded(opts Options, hooks map[string]http.Handler) *http.ServeMux {
	rec := &recordingServer{mux: http.NewServeMux()}
	s := Server(rec, opts)
	for path, h := range hooks {
		s.Register(path, h)
	}
	return rec.mux
}

// blocking is a handler that signals each request it starts on started and
// answers only once release is closed.
func blocking(started chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		started <- struct{}{}
		<-release
		w.WriteHeader(http.StatusOK)
	})
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

func TestServer_AdmissionRequestBeyondMaxInFlightGets429WithRetryAfter(t *testing.T) {
	const limit = 3
	// Buffered, so that a request the server fails to refuse does not
	// block the handler: the test then fails instead of hanging.
	started, release := make(chan struct{}, 2*limit), make(chan struct{})
	srv := httptest.NewServer(guarded(Options{MaxInFlight: limit}, map[string]http.Handler{
		validatePath: blocking(started, release), mutatePath: blocking(started, release), convertPath: ok,
	}))
	defer srv.Close()
	before := promtestutil.ToFloat64(Rejected.WithLabelValues(PathAdmission, ReasonTooManyRequests))

	// limit slow requests, on both admission paths: they share the limit.
	var wg sync.WaitGroup
	codes := make(chan int, limit)
	for i := range limit {
		path := validatePath
		if i%2 == 1 {
			path = mutatePath
		}
		wg.Go(func() {
			resp, err := http.Post(srv.URL+path, "application/json", nil)
			if err != nil {
				t.Error(err)
				return
			}
			_ = resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	for range limit {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the first requests did not all start")
		}
	}

	// One more is refused at once, and says when to come back.
	impatient := &http.Client{Timeout: 5 * time.Second}
	resp, err := impatient.Post(srv.URL+validatePath, "application/json", nil)
	if err != nil {
		close(release)
		t.Fatalf("request %d was not refused at once: %v", limit+1, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("request %d: got %d with Retry-After %q, want 429 with Retry-After 1", limit+1, resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if got := promtestutil.ToFloat64(Rejected.WithLabelValues(PathAdmission, ReasonTooManyRequests)) - before; got != 1 {
		t.Errorf("rejections counted: %v, want 1", got)
	}

	// Conversion has a limit of its own: the full admission paths do not
	// stop it.
	resp, err = http.Post(srv.URL+convertPath, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/convert while admission is full: got %d, want 200", resp.StatusCode)
	}

	close(release)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Errorf("a request within the limit got %d", code)
		}
	}
	// The slots are given back.
	go func() { <-started }()
	resp, err = http.Post(srv.URL+validatePath, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the slow requests ended: got %d, want 200", resp.StatusCode)
	}
}

func TestServer_ZeroMaxInFlightLimitsNothing(t *testing.T) {
	started, release := make(chan struct{}, 100), make(chan struct{})
	srv := httptest.NewServer(guarded(Options{}, map[string]http.Handler{validatePath: blocking(started, release)}))
	defer srv.Close()
	defer close(release)
	for range 100 {
		go func() {
			if resp, err := http.Post(srv.URL+validatePath, "application/json", nil); err == nil {
				_ = resp.Body.Close()
			}
		}()
	}
	for range 100 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("not every request was served at once")
		}
	}
}

// newCA makes a CA for a test.
func newCA(t *testing.T, name string) *testutil.CA {
	t.Helper()
	ca, err := testutil.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// clientCert is a client certificate for user signed by ca.
func clientCert(t *testing.T, ca *testutil.CA, user string) tls.Certificate {
	t.Helper()
	cert, err := ca.Issue(user, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// tlsServer serves the guarded handlers over TLS with the client CA of
// caFile, as the manager does with --webhook-client-ca.
func tlsServer(t *testing.T, caFile string) *httptest.Server {
	t.Helper()
	opt, err := ClientCATLSOption(caFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(guarded(Options{MaxInFlight: DefaultMaxInFlight, RequireClientCert: true},
		map[string]http.Handler{validatePath: ok, mutatePath: ok, convertPath: ok}))
	// The refused handshakes are expected: not in the test's output.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	opt(srv.TLS)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// post sends an empty POST to path of srv, with cert as the client
// certificate unless it is nil, and returns the status code, or the
// error of a refused handshake.
func post(srv *httptest.Server, path string, cert *tls.Certificate) (int, error) {
	// A client of its own each time, so that no connection or certificate
	// of an earlier call is reused.
	tr := srv.Client().Transport.(*http.Transport).Clone()
	if cert != nil {
		// Offered whatever CAs the server names, as a hostile client would.
		tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	c := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	resp, err := c.Post(srv.URL+path, "application/json", nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func TestServer_WithClientCAAdmissionPathsNeedACertificateOfThatCA(t *testing.T) {
	apiserverCA, otherCA := newCA(t, "apiserver-client-ca"), newCA(t, "someone-else")
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, apiserverCA.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := tlsServer(t, caFile)
	good, foreign := clientCert(t, apiserverCA, "kube-apiserver"), clientCert(t, otherCA, "kube-apiserver")
	before := promtestutil.ToFloat64(Rejected.WithLabelValues(PathAdmission, ReasonNoClientCertificate))

	for _, path := range []string{validatePath, mutatePath} {
		if code, err := post(srv, path, nil); err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s without a client certificate: got %d, %v; want 401", path, code, err)
		}
		if code, err := post(srv, path, &good); err != nil || code != http.StatusOK {
			t.Errorf("%s with a certificate of the CA: got %d, %v; want 200", path, code, err)
		}
		if code, err := post(srv, path, &foreign); err == nil {
			t.Errorf("%s with a certificate of another CA: served with %d, want the handshake refused", path, code)
		}
	}
	if got := promtestutil.ToFloat64(Rejected.WithLabelValues(PathAdmission, ReasonNoClientCertificate)) - before; got != 2 {
		t.Errorf("rejections counted: %v, want 2", got)
	}
	// The API server sends no client certificate to conversion webhooks.
	if code, err := post(srv, convertPath, nil); err != nil || code != http.StatusOK {
		t.Errorf("/convert without a client certificate: got %d, %v; want 200", code, err)
	}
}

func TestClientCATLSOption_RefusesAFileWithoutACertificate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(file, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ClientCATLSOption(file); err == nil {
		t.Error("a file without a PEM certificate was accepted")
	}
	if _, err := ClientCATLSOption(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file was accepted")
	}
}

func TestReadBody_ReadsTheBodyItsSizeSaysAndNoOther(t *testing.T) {
	body := []byte(`{"kind":"AdmissionReview"}`)
	n := int64(len(body))
	for _, c := range []struct {
		name      string
		body      []byte
		size, max int64
		want      string // "" when body is read whole
	}{
		{"its size", body, n, 100, ""},
		{"size unknown", body, -1, 100, ""},
		{"size past the cap, read as it comes", body, 1000, 100, ""},
		{"shorter than its size", body, n + 5, 100, "unexpected EOF"},
		{"longer than its size", body, n - 5, 100, "longer than its Content-Length"},
		{"empty", nil, 0, 100, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadBody(bytes.NewReader(c.body), c.size, c.max)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want the body, got %v", err)
			case c.want == "" && !bytes.Equal(got, c.body):
				t.Fatalf("read %q, want %q", got, c.body)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want an error saying %q, got %v", c.want, err)
			}
		})
	}
	t.Run("past a MaxBytesReader's cap", func(t *testing.T) {
		rec := httptest.NewRecorder()
		_, err := ReadBody(http.MaxBytesReader(rec, io.NopCloser(bytes.NewReader(body)), 10), n, 10)
		if tooLarge := (*http.MaxBytesError)(nil); !errors.As(err, &tooLarge) {
			t.Fatalf("want an *http.MaxBytesError, got %v", err)
		}
	})
}
