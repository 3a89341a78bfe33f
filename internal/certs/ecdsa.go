// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package certs

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the Secret cert-controller keeps: its CA beside the pair served.
const (
	caCertKey = "ca.crt"
	caKeyKey  = "ca.key"
)

// Periods of servingKey: how often it looks at the Secret until the pair
// served is ECDSA, and after that (cert-controller replaces the pair with an
// RSA one when it renews it, months apart).
const (
	servingKeyFirstPoll = time.Second
	servingKeyPoll      = time.Minute
)

// servingKey gives the webhook server an ECDSA P-256 key in place of the
// RSA-2048 one cert-controller makes (it generates no other and offers no
// hook). Each connection the API server opens to a webhook costs the server
// a signature in its TLS handshake, and the API server opens one for every
// call in flight beyond the 25 idle connections it keeps per host: under a
// burst of writes those handshakes, RSA signatures, were a third of the
// replicas' admission CPU, and a P-256 signature costs a small fraction of
// one.
//
// cert-controller stays in charge of the CA, its injection and the pair's
// renewal: the pair servingKey writes is signed by the Secret's CA, for the
// same names and the same validity as the one it replaces, so that
// cert-controller finds it valid, leaves it, and renews it when it would
// have renewed its own; servingKey then replaces the renewed one in turn.
// It runs on the leader only, as cert-controller does, and writes with the
// Secret's resourceVersion, so that a write of cert-controller's in between
// is never lost.
type servingKey struct {
	reader client.Reader
	writer client.Writer
	secret types.NamespacedName
}

// NeedLeaderElection: only the leader writes the Secret, as only it runs
// cert-controller.
func (s *servingKey) NeedLeaderElection() bool { return true }

// Start looks at the Secret until ctx ends: every second until its pair is
// ECDSA, then once a minute.
func (s *servingKey) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("certs").WithValues("secret", s.secret)
	for {
		state, err := s.ensure(ctx)
		period := servingKeyFirstPoll
		switch {
		case err != nil:
			log.Error(err, "Replacing the webhook serving key with an ECDSA one")
		case state == pairReplaced:
			log.Info("Webhook serving key replaced with an ECDSA P-256 one")
		case state == pairCurrent:
			period = servingKeyPoll
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(period):
		}
	}
}

// pairState is what servingKey found in the Secret.
type pairState int

const (
	// pairPending: no valid pair of the Secret's CA yet (cert-controller
	// has not filled the Secret, or is renewing it).
	pairPending pairState = iota
	// pairReplaced: an RSA pair was there and is replaced.
	pairReplaced
	// pairCurrent: the pair is ECDSA already.
	pairCurrent
)

// ensure replaces the Secret's pair with an ECDSA one when it holds a valid
// RSA pair of its CA, and says what it found.
func (s *servingKey) ensure(ctx context.Context) (pairState, error) {
	secret := &corev1.Secret{}
	if err := s.reader.Get(ctx, s.secret, secret); err != nil {
		return pairPending, err
	}
	certPEM, keyPEM, state, err := reissueECDSA(secret.Data, time.Now())
	if err != nil || state != pairReplaced {
		return state, err
	}
	secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey] = certPEM, keyPEM
	if err := s.writer.Update(ctx, secret); err != nil {
		return pairPending, err
	}
	return pairReplaced, nil
}

// reissueECDSA returns an ECDSA P-256 certificate and key in PEM in place of
// the RSA pair in data (the keys cert-controller writes), signed by the CA
// in data, with the names, usages and validity of the certificate it
// replaces, and pairReplaced. It returns no pair and pairPending before
// there is a valid pair of the CA (cert-controller makes one), and
// pairCurrent when the pair's key is ECDSA already.
func reissueECDSA(data map[string][]byte, now time.Time) (certPEM, keyPEM []byte, state pairState, err error) {
	if len(data[corev1.TLSCertKey]) == 0 || len(data[caCertKey]) == 0 || len(data[caKeyKey]) == 0 {
		return nil, nil, pairPending, nil
	}
	pair, err := tls.X509KeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey])
	if err != nil {
		// cert-controller replaces an invalid pair.
		return nil, nil, pairPending, nil
	}
	old, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, pairPending, err
	}
	ca, err := tls.X509KeyPair(data[caCertKey], data[caKeyKey])
	if err != nil {
		return nil, nil, pairPending, fmt.Errorf("the Secret's CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return nil, nil, pairPending, fmt.Errorf("the Secret's CA: %w", err)
	}
	if err := old.CheckSignatureFrom(caCert); err != nil {
		// A pair of a CA since replaced: cert-controller renews it.
		return nil, nil, pairPending, nil
	}
	if _, ok := pair.PrivateKey.(*rsa.PrivateKey); !ok {
		return nil, nil, pairCurrent, nil
	}
	signer, ok := ca.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, nil, pairPending, errors.New("the Secret's CA key cannot sign")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, pairPending, err
	}
	template := &x509.Certificate{
		// Unique per issue: a client that cached the old certificate
		// must not take the new one for it.
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               old.Subject,
		DNSNames:              old.DNSNames,
		IPAddresses:           old.IPAddresses,
		NotBefore:             old.NotBefore,
		NotAfter:              old.NotAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           old.ExtKeyUsage,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, caCert, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, pairPending, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, pairPending, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), pairReplaced, nil
}
