// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/example/platform-operator/internal/certs"
)

// emptyCertSecret creates the Secret as the installs ship it.
func emptyCertSecret(t *testing.T, ns string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certs.SecretName}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: {}, corev1.TLSPrivateKeyKey: {}}}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), s)).To(Succeed())
	return s
}

// mountSecret plays the kubelet until ctx ends: it writes the Secret's keys
// into dir whenever it holds a certificate.
func mountSecret(ctx context.Context, secret client.ObjectKey, dir string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var s corev1.Secret
			if k8sClient.Get(ctx, secret, &s) == nil && len(s.Data[corev1.TLSCertKey]) > 0 {
				for k, v := range s.Data {
					_ = os.WriteFile(filepath.Join(dir, k), v, 0o600)
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	return done
}

// startManager starts a manager with the rotator and returns its Ready
// channel; the manager stops with the test.
func startManager(t *testing.T, cfg *rest.Config, opts ctrl.Options, o certs.Options) chan struct{} {
	t.Helper()
	g := NewWithT(t)
	opts.Scheme = testEnv.Scheme
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	// Controller names are unique per process, and every test's manager
	// runs a rotator.
	o.ControllerName = "cert-rotator-" + o.Namespace
	mgr, err := ctrl.NewManager(cfg, opts)
	g.Expect(err).NotTo(HaveOccurred())
	o.Ready = make(chan struct{})
	g.Expect(certs.AddRotator(mgr, o)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = mgr.Start(ctx)
	}()
	mounted := mountSecret(ctx, client.ObjectKey{Namespace: o.Namespace, Name: certs.SecretName}, o.CertDir)
	// Both write into the test's certificate directory: they must have
	// stopped before its cleanup removes it.
	t.Cleanup(func() {
		cancel()
		<-mounted
		<-stopped
	})
	return o.Ready
}

// Two replicas making the first CA at once would each inject their own, so
// only the leader rotates; a follower serves the certificate the leader
// wrote, and is ready once the kubelet mounted it.
func TestCerts_OnlyTheLeaderRotatesAndAFollowerIsReadyOnTheMountedCertificate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	secret := emptyCertSecret(t, ns)

	// Another replica holds the Lease, for an hour.
	now := metav1.NewMicroTime(time.Now())
	g.Expect(k8sClient.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "certs-test"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("another-replica"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now},
	})).To(Succeed())
	ready := startManager(t, testEnv.Config, ctrl.Options{
		LeaderElection: true, LeaderElectionID: "certs-test", LeaderElectionNamespace: ns,
	}, certs.Options{Namespace: ns, CertDir: t.TempDir(), Webhooks: []rotator.WebhookInfo{}})

	g.Consistently(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		g.Expect(secret.Data[corev1.TLSCertKey]).To(BeEmpty(), "a follower wrote the Secret")
		g.Expect(ready).NotTo(BeClosed(), "ready without a certificate")
	}, 3*time.Second, poll).Should(Succeed())

	// The leader writes a certificate; the follower's webhook server may
	// start once the kubelet has mounted it.
	crt, key, err := certutil.GenerateSelfSignedCertKey(certs.ServiceName+"."+ns+".svc", nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	secret.Data = map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}
	g.Expect(k8sClient.Update(ctx, secret)).To(Succeed())
	g.Eventually(ready, timeout).Should(BeClosed())
	g.Consistently(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		g.Expect(secret.Data[corev1.TLSCertKey]).To(Equal(crt), "a follower replaced the leader's certificate")
	}, time.Second, poll).Should(Succeed())
}

// The manager's RBAC names the Secret, webhook configurations and CRD the
// rotator keeps; the rotator's lists and watches carry a name selector, so
// those rights are enough.
func TestCerts_RotatorWorksWithTheGeneratedRBACOnly(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	secret := emptyCertSecret(t, ns)
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

	// A user holding exactly the rules of config/rbac/role.yaml, the Role's
	// in the test's namespace.
	user := "rotator-" + ns
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	m := readManifests(t, "config/rbac/role.yaml")
	each(t, m, "ClusterRole", func(_ string, cr *rbacv1.ClusterRole) {
		cr.ObjectMeta = metav1.ObjectMeta{Name: user}
		g.Expect(k8sClient.Create(ctx, cr)).To(Succeed())
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user}}
		g.Expect(k8sClient.Create(ctx, crb)).To(Succeed())
		t.Cleanup(func() {
			_ = k8sClient.Delete(context.Background(), crb)
			_ = k8sClient.Delete(context.Background(), cr)
		})
	})
	each(t, m, "Role", func(_ string, r *rbacv1.Role) {
		r.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: user}
		g.Expect(k8sClient.Create(ctx, r)).To(Succeed())
		g.Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
			Subjects: subjects, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user}})).To(Succeed())
	})
	u, err := testEnv.AddUser(envtest.User{Name: user}, nil)
	g.Expect(err).NotTo(HaveOccurred())

	ready := startManager(t, u.Config(), ctrl.Options{}, certs.Options{Namespace: ns, CertDir: t.TempDir(),
		Webhooks: []rotator.WebhookInfo{{Name: certs.ValidatingWebhookName, Type: rotator.Validating}}})

	g.Eventually(ready, 60*time.Second).Should(BeClosed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		g.Expect(secret.Data["ca.crt"]).NotTo(BeEmpty())
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(vwc), vwc)).To(Succeed())
		g.Expect(bytes.TrimSpace(vwc.Webhooks[0].ClientConfig.CABundle)).To(Equal(bytes.TrimSpace(secret.Data["ca.crt"])))
		// The serving key made ECDSA needs nothing more either.
		servingCert(g, secret.Data[corev1.TLSCertKey])
	}, timeout, poll).Should(Succeed())
}
