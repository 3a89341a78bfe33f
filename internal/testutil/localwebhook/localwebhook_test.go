// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package localwebhook

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"

	certutil "k8s.io/client-go/util/cert"
)

// The pair EnsureCerts writes loads as a TLS certificate, is ECDSA, and is
// trusted for Host and localhost by the CA of the bundle it returns.
func TestEnsureCerts_WritesAnECDSAPairTheBundleTrusts(t *testing.T) {
	dir := t.TempDir()
	bundle, err := EnsureCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatalf("the written pair does not load: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("serving key is %v, want ECDSA", leaf.PublicKeyAlgorithm)
	}
	certs, err := certutil.ParseCertsPEM(bundle)
	if err != nil || len(certs) != 2 {
		t.Fatalf("bundle: %d certificates, %v; want the serving certificate and its CA", len(certs), err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(certs[1])
	for _, name := range []string{Host, "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
			t.Errorf("not trusted for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: roots}); err == nil {
		t.Error("trusted for a name it was not made for")
	}
	if net.ParseIP(Host) == nil {
		t.Fatalf("Host %q is not an address", Host)
	}
}

// A valid ECDSA pair is kept; an RSA one (what earlier versions wrote) is
// replaced.
func TestEnsureCerts_KeepsAnECDSAPairAndReplacesAnRSAOne(t *testing.T) {
	dir := t.TempDir()
	first, err := EnsureCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EnsureCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Error("a valid pair was replaced")
	}

	rsaCert, rsaKey, err := certutil.GenerateSelfSignedCertKey(Host, []net.IP{net.ParseIP(Host)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), rsaCert, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), rsaKey, 0o600); err != nil {
		t.Fatal(err)
	}
	replaced, err := EnsureCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(replaced, rsaCert) {
		t.Fatal("the RSA pair was kept")
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")); err != nil {
		t.Fatalf("the replacing pair does not load: %v", err)
	}
}
