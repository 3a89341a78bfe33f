// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"sync/atomic"
	"time"
)

// CA is a certificate authority of a test: it signs the server and client
// certificates of the TLS a test sets up (a webhook server, Prometheus, an
// API server presenting a client certificate). Its certificates are valid
// from an hour ago for a day, or for the validity NewCAValidFor was given.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// PEM is Cert, PEM-encoded: the content of a CA bundle file.
	PEM []byte
	// validity is how long the CA and the certificates it issues last.
	validity time.Duration
}

// serial numbers the certificates of every CA of the process.
var serial atomic.Int64

// NewCA makes a self-signed CA named name, valid for a day.
func NewCA(name string) (*CA, error) {
	return NewCAValidFor(name, 24*time.Hour)
}

// NewCAValidFor makes a self-signed CA named name whose certificate, and
// every certificate it issues, is valid from an hour ago for validity.
func NewCAValidFor(name string, validity time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(validity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		validity: validity}, nil
}

// newSerial is a serial number no other certificate of the process has,
// nor (the time in it) one of an earlier process: a CA written to disk
// (the local webhook's) may meet certificates of its predecessors.
func newSerial() *big.Int {
	return big.NewInt(time.Now().UnixNano() + serial.Add(1))
}

// Issue signs a certificate for name, for usage (x509.ExtKeyUsageServerAuth
// or x509.ExtKeyUsageClientAuth), valid for the IP addresses ips.
func (c *CA) Issue(name string, usage x509.ExtKeyUsage, ips ...net.IP) (tls.Certificate, error) {
	return c.issue(name, usage, ips, nil)
}

// IssueForHosts is Issue for hosts that are IP addresses or DNS names.
func (c *CA) IssueForHosts(name string, usage x509.ExtKeyUsage, hosts ...string) (tls.Certificate, error) {
	var ips []net.IP
	var dns []string
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, h)
		}
	}
	return c.issue(name, usage, ips, dns)
}

// issue signs a certificate for name, valid for ips and dns.
func (c *CA) issue(name string, usage x509.ExtKeyUsage, ips []net.IP, dns []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(c.validity),
		IPAddresses: ips, DNSNames: dns,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.Cert, &key.PublicKey, c.Key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// PEMs are a certificate of Issue and its key, PEM-encoded: the contents of
// the tls.crt and tls.key files that take it.
func PEMs(cert tls.Certificate) (certPEM, keyPEM []byte, err error) {
	key, ok := cert.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("a key of type %T, want ECDSA", cert.PrivateKey)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
