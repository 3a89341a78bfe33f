//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/podsecurity"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

// TestPodSecurity_ARestrictedNamespaceRunsTheDesignDocumentsManifests
// labels a namespace to enforce the restricted Pod Security Standard, as
// many platform teams do, and runs there, as written, the design
// documents' AppDeployment to Ready and a ScheduleTask's manual run to
// Succeeded: the kube-apiserver's Pod Security admission judges the pods.
func TestPodSecurity_ARestrictedNamespaceRunsTheDesignDocumentsManifests(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	enforceRestricted(t, cluster, ns)

	ad := app(ns, nil)
	released(t, ad)

	task := testutil.NewScheduleTask(ns, "report", testutil.WithSchedule("0 0 1 1 *"), kwokPod(0, "1s"))
	g.Expect(cluster.Client.Create(ctx, task)).To(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewManualTaskRun(ns, "report-now", "report"))).To(Succeed())
	waitRunSucceeded(t, cluster, ns, "report-now")
}

// enforceRestricted labels namespace ns of c to enforce the restricted Pod
// Security Standard.
func enforceRestricted(t *testing.T, c *harness.Cluster, ns string) {
	t.Helper()
	namespace := &corev1.Namespace{}
	namespace.Name = ns
	NewWithT(t).Expect(harness.Edit(t.Context(), c.Client, namespace, func(n *corev1.Namespace) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[podsecurity.EnforceLabel] = podsecurity.Restricted
	})).To(Succeed())
	// The webhooks read the label from the manager's cache: what the test
	// creates next must meet it there.
	NewWithT(t).Eventually(func() (bool, error) {
		return testutil.RestrictedAdmitted(t.Context(), c.Client, ns)
	}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(BeTrue(), "admission sees %s restricted", ns)
}

// waitRunSucceeded waits until TaskRun name in namespace ns of c has
// Succeeded.
func waitRunSucceeded(t *testing.T, c *harness.Cluster, ns, name string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(c.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunSucceeded), tr.Status.Message)
	}).WithTimeout(releaseTimeout).WithPolling(250 * time.Millisecond).Should(Succeed())
}

// TestAppDeployment_PodsThatCannotBeCreatedAreSaidWithTheReason runs two
// releases whose pods the API server refuses, under the real Deployment
// and ReplicaSet controllers: a privileged template in a restricted
// namespace (PodsForbidden) and a third pod beyond a ResourceQuota of two
// (QuotaExceeded). Each is in status, in get with its event, and in the
// exit code of status: 2, still progressing, for it may clear.
func TestAppDeployment_PodsThatCannotBeCreatedAreSaidWithTheReason(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()

	restricted := newNamespace(t)
	enforceRestricted(t, cluster, restricted)
	privileged := app(restricted, func(ad *platformv1.AppDeployment) {
		ad.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}}
	})
	g.Expect(cluster.Client.Create(ctx, privileged)).To(Succeed())

	quota := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: quota, Name: "two-pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}},
	})).To(Succeed())
	overQuota := app(quota, nil)
	g.Expect(cluster.Client.Create(ctx, overQuota)).To(Succeed())

	for _, tt := range []struct {
		ad      *platformv1.AppDeployment
		reason  string
		message string
	}{
		{privileged, platformv1.ReasonPodsForbidden, `violates PodSecurity "restricted:latest": privileged`},
		{overQuota, platformv1.ReasonQuotaExceeded, "exceeded quota: two-pods"},
	} {
		waitApp(t, tt.ad, func(g Gomega, got *platformv1.AppDeployment) {
			g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseProgressing))
			progressing := meta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionProgressing)
			g.Expect(progressing).NotTo(BeNil())
			g.Expect(progressing.Reason).To(Equal(tt.reason), got.Status.Message)
			g.Expect(got.Status.Message).To(ContainSubstring(tt.message))
		})
		out, code := appdeploy(t, tt.ad.Namespace, "status", tt.ad.Name)
		g.Expect(code).To(Equal(2), "still progressing: it may clear\n%s", out)
		g.Eventually(func(g Gomega) {
			out, code := appdeploy(t, tt.ad.Namespace, "get", tt.ad.Name)
			g.Expect(code).To(Equal(0), out)
			g.Expect(out).To(ContainSubstring(tt.message))
			g.Expect(out).To(ContainSubstring(tt.reason), "the event")
		}).WithTimeout(settleTimeout).Should(Succeed())
	}
}
