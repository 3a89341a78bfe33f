// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/example/platform-operator/internal/certs"
)

func TestCerts_ManagerMakesInjectsAndMountsItsOwnCertificate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	// What config/default installs: an empty Secret and a webhook
	// configuration without a CA. (The CRD is left out: envtest's own
	// certificate serves its conversion in the other tests.)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certs.SecretName}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: {}, corev1.TLSPrivateKeyKey: {}}}
	g.Expect(k8sClient.Create(ctx, secret)).To(Succeed())
	none := admissionregistrationv1.SideEffectClassNone
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: certs.ValidatingWebhookName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "vnothing.platform.example.com", AdmissionReviewVersions: []string{"v1"}, SideEffects: &none,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: ns, Name: certs.ServiceName, Path: ptr.To("/validate-nothing")}},
		}},
	}
	g.Expect(k8sClient.Create(ctx, vwc)).To(Succeed())
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), vwc) })

	certDir := t.TempDir()
	mgr, err := ctrl.NewManager(testEnv.Config, ctrl.Options{
		Scheme: testEnv.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	g.Expect(err).NotTo(HaveOccurred())
	ready := make(chan struct{})
	g.Expect(certs.AddRotator(mgr, certs.Options{
		Namespace: ns, CertDir: certDir, Ready: ready,
		Webhooks: []rotator.WebhookInfo{{Name: certs.ValidatingWebhookName, Type: rotator.Validating}},
	})).To(Succeed())
	mctx, cancel := context.WithCancel(ctx)
	// The manager and the kubelet below write into certDir: both must have
	// stopped before the test's cleanup removes it (cleanups run after the
	// function returns, in reverse order, so this one runs first).
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() { _ = mgr.Start(mctx) })

	// Play the kubelet: mount the Secret's keys as files once it has them.
	// The rotator says ready only after it sees them on disk.
	wg.Go(func() {
		for mctx.Err() == nil {
			var s corev1.Secret
			if k8sClient.Get(mctx, client.ObjectKeyFromObject(secret), &s) == nil && len(s.Data[corev1.TLSCertKey]) > 0 {
				for k, v := range s.Data {
					_ = os.WriteFile(filepath.Join(certDir, k), v, 0o600)
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	g.Eventually(ready, 60*time.Second).Should(BeClosed())

	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	caPEM := secret.Data["ca.crt"]
	g.Expect(caPEM).NotTo(BeEmpty())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(vwc), vwc)).To(Succeed())
		g.Expect(bytes.TrimSpace(vwc.Webhooks[0].ClientConfig.CABundle)).To(Equal(bytes.TrimSpace(caPEM)))
	}, timeout, poll).Should(Succeed())

	// The serving certificate on disk is for the Service and signed by that CA.
	certPEM, err := os.ReadFile(filepath.Join(certDir, "tls.crt"))
	g.Expect(err).NotTo(HaveOccurred())
	block, _ := pem.Decode(certPEM)
	g.Expect(block).NotTo(BeNil())
	cert, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(caPEM)).To(BeTrue())
	_, err = cert.Verify(x509.VerifyOptions{DNSName: certs.ServiceName + "." + ns + ".svc", Roots: pool})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cert.NotAfter).To(BeTemporally(">", time.Now().Add(24*time.Hour)))

	// The pair served comes to be ECDSA, from the same CA, and
	// cert-controller leaves it there: the Secret is written no more.
	g.Eventually(func(g Gomega) {
		certPEM, err := os.ReadFile(filepath.Join(certDir, "tls.crt"))
		g.Expect(err).NotTo(HaveOccurred())
		cert := servingCert(g, certPEM)
		_, err = cert.Verify(x509.VerifyOptions{DNSName: certs.ServiceName + "." + ns + ".svc", Roots: pool})
		g.Expect(err).NotTo(HaveOccurred())
	}, timeout, poll).Should(Succeed())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	written := secret.ResourceVersion
	g.Expect(secret.Data["ca.crt"]).To(Equal(caPEM), "the CA is cert-controller's still")
	g.Consistently(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		g.Expect(secret.ResourceVersion).To(Equal(written), "the Secret was written again")
	}, 3*time.Second, poll).Should(Succeed())
}

// servingCert parses a serving certificate in PEM and expects its key to be
// ECDSA, as the manager makes it.
func servingCert(g Gomega, certPEM []byte) *x509.Certificate {
	block, _ := pem.Decode(certPEM)
	g.Expect(block).NotTo(BeNil(), "a certificate in PEM")
	cert, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cert.PublicKeyAlgorithm).To(Equal(x509.ECDSA), "the serving key")
	return cert
}
