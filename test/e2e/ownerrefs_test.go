//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

// ownerRefsTest runs on a cluster whose API server enforces owner-reference
// permissions, as OpenShift's does.
const ownerRefsTest = "TestOwnerReferencesPermissionEnforcement_RunsAndCanariesGoToTheEnd"

func init() {
	// Setting blockOwnerDeletion on an owner reference then needs update
	// on the owner's finalizers subresource.
	ownClusterOptions[ownerRefsTest] = harness.ClusterOptions{KwokctlArgs: []string{
		"--extra-args=kube-apiserver=enable-admission-plugins=OwnerReferencesPermissionEnforcement",
	}}
}

// TestOwnerReferencesPermissionEnforcement_RunsAndCanariesGoToTheEnd runs,
// with the manager holding only the install's RBAC, a ScheduleTask's manual
// run (a Job owned by the task's CronJob, a TaskRun owned by the task) and
// an AppDeployment's canary (Deployments and a Service owned by it) to the
// end, on an API server with the OwnerReferencesPermissionEnforcement
// admission plugin.
func TestOwnerReferencesPermissionEnforcement_RunsAndCanariesGoToTheEnd(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	own, _, ns := ownOperator(t)

	task := testutil.NewScheduleTask(ns, "report", testutil.WithSchedule("0 0 1 1 *"))
	g.Expect(own.Client.Create(ctx, task)).To(Succeed())
	g.Expect(own.Client.Create(ctx, testutil.NewManualTaskRun(ns, "report-now", "report"))).To(Succeed())
	waitRunSucceeded(t, own, ns, "report-now")

	ad := app(ns, func(ad *platformv1.AppDeployment) { ad.Spec.Port = 8080 })
	g.Expect(own.Client.Create(ctx, ad)).To(Succeed())
	wait := func(check func(Gomega, *platformv1.AppDeployment)) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			got := &platformv1.AppDeployment{}
			g.Expect(own.Client.Get(ctx, client.ObjectKeyFromObject(ad), got)).To(Succeed())
			check(g, got)
		}).WithTimeout(releaseTimeout).WithPolling(250 * time.Millisecond).Should(Succeed())
	}
	ready := func(version string) func(Gomega, *platformv1.AppDeployment) {
		return func(g Gomega, got *platformv1.AppDeployment) {
			c := meta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionReady)
			g.Expect(c).NotTo(BeNil(), got.Status.Message)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), got.Status.Message)
			g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(got.Status.StableVersion).To(Equal(version))
		}
	}
	wait(ready(v123))
	edit := func(e func(*platformv1.AppDeployment)) {
		t.Helper()
		got := &platformv1.AppDeployment{}
		got.Namespace, got.Name = ad.Namespace, ad.Name
		g.Expect(harness.Edit(ctx, own.Client, got, e)).To(Succeed())
	}
	edit(func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	wait(func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseApproval), got.Status.Message)
	})
	edit(func(got *platformv1.AppDeployment) {
		if got.Annotations == nil {
			got.Annotations = map[string]string{}
		}
		got.Annotations[platformv1.PromoteAnnotation] = "1"
	})
	wait(ready(v124))
}
