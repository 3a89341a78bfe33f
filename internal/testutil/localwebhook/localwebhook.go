// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package localwebhook points the project's admission webhooks at a manager
// running on this machine, for `make run` and the e2e tests: it makes a CA
// and a serving certificate for 127.0.0.1 and rewrites the generated webhook
// configurations to call https://127.0.0.1:<port><path> with that CA, so the
// local API server calls the local manager over real TLS.
package localwebhook

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	certutil "k8s.io/client-go/util/cert"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/yamldoc"
)

// Host is where the local manager serves its webhooks.
const Host = "127.0.0.1"

// EnsureCerts writes tls.crt and tls.key for Host into dir unless an ECDSA
// pair valid for at least another day is there, and returns the PEM bundle
// to trust (the serving certificate and its CA).
//
// The keys are ECDSA P-256, not RSA: the API server opens a new connection
// for a webhook call whenever its 25 idle ones per host are busy, and under
// load the server's half of those handshakes, an RSA-2048 signature each,
// was a third of the replicas' admission CPU; a P-256 signature costs a
// small fraction of that.
func EnsureCerts(dir string) ([]byte, error) {
	certPath, keyPath := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if bundle, err := os.ReadFile(certPath); err == nil {
		if certs, err := certutil.ParseCertsPEM(bundle); err == nil && len(certs) > 0 &&
			certs[0].PublicKeyAlgorithm == x509.ECDSA && time.Until(certs[0].NotAfter) > 24*time.Hour {
			if _, err := os.Stat(keyPath); err == nil {
				return bundle, nil
			}
		}
	}
	bundle, key, err := selfSigned()
	if err != nil {
		return nil, fmt.Errorf("generate webhook serving certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyPath, key, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(certPath, bundle, 0o644); err != nil {
		return nil, err
	}
	return bundle, nil
}

// certValidity is how long the local CA and serving certificate last.
const certValidity = 365 * 24 * time.Hour

// selfSigned makes a CA and a serving certificate for Host and localhost
// that it signs, both valid for certValidity, and returns the certificate
// followed by the CA in PEM, and the serving key in PEM.
func selfSigned() (bundle, keyPEM []byte, err error) {
	ca, err := testutil.NewCAValidFor("platform-operator local webhook CA", certValidity)
	if err != nil {
		return nil, nil, err
	}
	serving, err := ca.IssueForHosts(Host, x509.ExtKeyUsageServerAuth, Host, "localhost")
	if err != nil {
		return nil, nil, err
	}
	certPEM, keyPEM, err := testutil.PEMs(serving)
	if err != nil {
		return nil, nil, err
	}
	return append(certPEM, ca.PEM...), keyPEM, nil
}

// Render reads the generated webhook configurations (config/webhook/manifests.yaml)
// and returns them as YAML, every webhook calling https://Host:port<its path>
// and trusting caBundle.
func Render(manifests string, port int, caBundle []byte) ([]byte, error) {
	raws, err := yamldoc.ReadFile(manifests)
	if err != nil {
		return nil, err
	}
	objs := make([]any, 0, len(raws))
	for _, raw := range raws {
		var obj metav1.Object
		var configs []*admissionregistrationv1.WebhookClientConfig
		switch yamldoc.Kind(raw) {
		case "MutatingWebhookConfiguration":
			c := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, c); err != nil {
				return nil, fmt.Errorf("read %s: %w", manifests, err)
			}
			for i := range c.Webhooks {
				configs = append(configs, &c.Webhooks[i].ClientConfig)
			}
			obj = c
		case "ValidatingWebhookConfiguration":
			c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, c); err != nil {
				return nil, fmt.Errorf("read %s: %w", manifests, err)
			}
			for i := range c.Webhooks {
				configs = append(configs, &c.Webhooks[i].ClientConfig)
			}
			obj = c
		default:
			continue
		}
		// A name of its own, so that it never replaces an installed
		// operator's configuration.
		obj.SetName("platform-operator-dev-" + obj.GetName())
		for _, cc := range configs {
			if cc.Service == nil || cc.Service.Path == nil {
				return nil, fmt.Errorf("%s %s: webhook without a service path", yamldoc.Kind(raw), obj.GetName())
			}
			u := fmt.Sprintf("https://%s:%d%s", Host, port, *cc.Service.Path)
			*cc = admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
		}
		objs = append(objs, obj)
	}
	return yamldoc.Encode(objs...)
}

// RenderCRDs reads the CRDs in dir and returns them as YAML, each CRD that
// serves more than one version set to convert through the local manager's
// /convert endpoint, trusting caBundle.
func RenderCRDs(dir string, port int, caBundle []byte) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	crds := make([]any, 0, len(files))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := sigsyaml.UnmarshalStrict(data, &crd); err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		if len(crd.Spec.Versions) > 1 {
			u := fmt.Sprintf("https://%s:%d/convert", Host, port)
			crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &u, CABundle: caBundle},
					ConversionReviewVersions: []string{"v1"},
				},
			}
		}
		crds = append(crds, &crd)
	}
	return yamldoc.Encode(crds...)
}
