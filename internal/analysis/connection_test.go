// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/example/platform-operator/internal/testutil"
)

// TestConnection_TokenCertificatesAndHeadersReachPrometheus: a Prometheus
// behind TLS with a private CA, asking for a client certificate, a bearer
// token and a tenant header answers the operator's queries, and a token
// rotated in its file is the one the next query sends.
func TestConnection_TokenCertificatesAndHeadersReachPrometheus(t *testing.T) {
	dir := t.TempDir()
	ca, err := testutil.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	serverCert, err := ca.Issue("prometheus", x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	clientCert, err := ca.Issue("platform-operator", x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := testutil.PEMs(clientCert)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ca.crt": ca.PEM, "tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var seen []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "client certificate required", http.StatusUnauthorized)
			return
		}
		if r.Header.Get("X-Scope-OrgID") != "team-a" {
			http.Error(w, "no tenant", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(scalar("1").body))
	}))
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	p, err := NewPrometheus(Connection{
		Address: srv.URL, Timeout: 5 * time.Second, BearerTokenFile: token,
		CAFile: filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"),
		Headers: map[string]string{"X-Scope-OrgID": "team-a"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := p.Query(t.Context(), "vector(1)", time.Now()); err != nil || v.Number != 1 {
		t.Fatalf("query with the first token: %v, %v", v, err)
	}
	if err := os.WriteFile(token, []byte("second\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Query(t.Context(), "vector(1)", time.Now()); err != nil {
		t.Fatalf("query with the rotated token: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "Bearer first" || seen[1] != "Bearer second" {
		t.Errorf("Authorization headers %q, want Bearer first then Bearer second", seen)
	}
}

func TestConnection_RefusesHalfACertificateAndBadHeaders(t *testing.T) {
	if _, err := NewPrometheus(Connection{Address: "https://p:9090", Timeout: time.Second, CertFile: "c"}); err == nil {
		t.Error("a certificate without its key: want an error")
	}
	for _, bad := range []string{"", "X", "=v", "a b=c", "X=a\nb"} {
		if err := ParseHeader(map[string]string{}, bad); err == nil {
			t.Errorf("ParseHeader(%q) = nil, want an error", bad)
		}
	}
	h := map[string]string{}
	if err := ParseHeader(h, "x-scope-orgid=team-a"); err != nil || h["X-Scope-Orgid"] != "team-a" {
		t.Errorf("ParseHeader: %v, %v", err, h)
	}
}
