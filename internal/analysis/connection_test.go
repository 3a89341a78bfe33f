/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package analysis

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestConnection_TokenCertificatesAndHeadersReachPrometheus: a Prometheus
// behind TLS with a private CA, asking for a client certificate, a bearer
// token and a tenant header answers the operator's queries, and a token
// rotated in its file is the one the next query sends.
func TestConnection_TokenCertificatesAndHeadersReachPrometheus(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := newCA(t)
	writePEM(t, filepath.Join(dir, "ca.crt"), "CERTIFICATE", ca.Raw)
	serverCert := issue(t, ca, caKey, "prometheus", []net.IP{net.ParseIP("127.0.0.1")}, x509.ExtKeyUsageServerAuth)
	clientCert := issue(t, ca, caKey, "platform-operator", nil, x509.ExtKeyUsageClientAuth)
	writePEM(t, filepath.Join(dir, "tls.crt"), "CERTIFICATE", clientCert.Certificate[0])
	keyDER, err := x509.MarshalECPrivateKey(clientCert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "tls.key"), "EC PRIVATE KEY", keyDER)
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
	pool.AddCert(ca)
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

// newCA is a self-signed CA.
func newCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// issue is a certificate of ca for name.
func issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string, ips []net.IP,
	usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: ips,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// writePEM writes one PEM block.
func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
