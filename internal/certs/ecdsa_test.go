// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
)

// serviceName is the name the test's pairs are made for.
const serviceName = "platform-operator-webhook-service.system.svc"

// usages are cert-controller's default extended key usages.
var usages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}

// certControllerSecret returns the Secret's data as cert-controller fills
// it: its RSA CA and an RSA pair the CA signs.
func certControllerSecret(t *testing.T, now time.Time) map[string][]byte {
	t.Helper()
	cr := &rotator.CertRotator{
		CAName: "platform-operator-ca", CAOrganization: "platform-operator",
		DNSName: serviceName, ExtraDNSNames: []string{serviceName + ".cluster.local"},
		ExtKeyUsages: &usages,
	}
	ca, err := cr.CreateCACert(now.Add(-time.Hour), now.Add(10*365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := cr.CreateCertPEM(ca, now.Add(-time.Hour), now.Add(365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		caCertKey: ca.CertPEM, caKeyKey: ca.KeyPEM,
		corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key,
	}
}

// parse returns the first certificate of a PEM bundle.
func parse(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The pair that replaces cert-controller's is ECDSA P-256, loads, is signed
// by the same CA for the same names and validity, and cert-controller's own
// check finds it valid: it leaves it in place until it would have renewed
// its own.
func TestReissueECDSA_ReplacesCertControllersRSAPairWithOneItKeeps(t *testing.T) {
	now := time.Now()
	data := certControllerSecret(t, now)
	certPEM, keyPEM, state, err := reissueECDSA(data, now)
	if err != nil || state != pairReplaced || certPEM == nil {
		t.Fatalf("an RSA pair was not replaced: %v, %v", state, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("the new pair does not load: %v", err)
	}
	if k, ok := pair.PrivateKey.(*ecdsa.PrivateKey); !ok || k.Curve != elliptic.P256() {
		t.Errorf("serving key %T, want an ECDSA P-256 key", pair.PrivateKey)
	}
	old, got := parse(t, data[corev1.TLSCertKey]), parse(t, certPEM)
	if got.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithm %v, want ECDSA", got.PublicKeyAlgorithm)
	}
	if got.SerialNumber.Cmp(old.SerialNumber) == 0 {
		t.Error("the new certificate has the old one's serial number")
	}
	if !got.NotBefore.Equal(old.NotBefore) || !got.NotAfter.Equal(old.NotAfter) {
		t.Errorf("validity %s–%s, want the replaced one's %s–%s", got.NotBefore, got.NotAfter, old.NotBefore, old.NotAfter)
	}
	if len(got.DNSNames) != 2 || got.DNSNames[0] != old.DNSNames[0] || got.DNSNames[1] != old.DNSNames[1] {
		t.Errorf("names %v, want %v", got.DNSNames, old.DNSNames)
	}
	for _, at := range []time.Time{now, now.Add(200 * 24 * time.Hour)} {
		valid, err := rotator.ValidCert(data[caCertKey], certPEM, keyPEM, serviceName, &usages, at)
		if !valid {
			t.Errorf("cert-controller finds the new pair invalid at %s: %v", at, err)
		}
	}
	// cert-controller renews 90 days before the end, as it would its own.
	if valid, _ := rotator.ValidCert(data[caCertKey], certPEM, keyPEM, serviceName, &usages,
		old.NotAfter.Add(time.Hour)); valid {
		t.Error("the new pair outlives the one it replaced")
	}
}

// Nothing is replaced before cert-controller has filled the Secret, nor a
// pair another CA signed (cert-controller renews that), nor an ECDSA pair,
// which is current.
func TestReissueECDSA_LeavesWhatIsNotAnRSAPairOfTheCA(t *testing.T) {
	now := time.Now()
	data := certControllerSecret(t, now)
	certPEM, keyPEM, _, err := reissueECDSA(data, now)
	if err != nil || certPEM == nil {
		t.Fatalf("setting up: %v", err)
	}
	ecdsaData := map[string][]byte{
		caCertKey: data[caCertKey], caKeyKey: data[caKeyKey],
		corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM,
	}
	other := certControllerSecret(t, now)
	otherCA := map[string][]byte{
		caCertKey: other[caCertKey], caKeyKey: other[caKeyKey],
		corev1.TLSCertKey: data[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: data[corev1.TLSPrivateKeyKey],
	}
	for name, c := range map[string]struct {
		data map[string][]byte
		want pairState
	}{
		"as installed":      {map[string][]byte{corev1.TLSCertKey: {}, corev1.TLSPrivateKeyKey: {}}, pairPending},
		"no CA":             {map[string][]byte{corev1.TLSCertKey: data[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: data[corev1.TLSPrivateKeyKey]}, pairPending},
		"another CA's":      {otherCA, pairPending},
		"a key not its own": {map[string][]byte{caCertKey: data[caCertKey], caKeyKey: data[caKeyKey], corev1.TLSCertKey: data[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: other[corev1.TLSPrivateKeyKey]}, pairPending},
		"ECDSA already":     {ecdsaData, pairCurrent},
	} {
		got, _, state, err := reissueECDSA(c.data, now)
		if err != nil || got != nil || state != c.want {
			t.Errorf("%s: %v (pair %t, %v), want %v and left", name, state, got != nil, err, c.want)
		}
	}
}
