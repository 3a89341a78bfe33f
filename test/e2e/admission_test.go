//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	platformv1alpha1 "github.com/example/platform-operator/api/v1alpha1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

func TestAdmission_APIServerCallsTheOperatorsWebhookOverTLS(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)

	bad := testutil.NewScheduleTask(ns, "bad", testutil.WithSchedule("every day"))
	bad.Spec.TimeZone = ptr.To("Mars/Olympus")
	err := cluster.Client.Create(ctx, bad)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	// Both problems, found by the webhook's code (the schema cannot parse
	// cron or know time zones), in one answer.
	g.Expect(err.Error()).To(And(ContainSubstring("spec.schedule"), ContainSubstring("spec.timeZone")))
	g.Expect(strings.Count(err.Error(), "spec.")).To(BeNumerically(">=", 2))

	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "good"))).To(Succeed())

	// The test client is the cluster admin, not the operator's
	// ServiceAccount, so the TaskRun webhook treats it as a user.
	err = cluster.Client.Create(ctx, testutil.NewManualTaskRun(ns, "orphan", "no-such-task"))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.scheduleTaskName"))
	forged := testutil.NewManualTaskRun(ns, "forged", "good")
	forged.Spec.Trigger = "Scheduled"
	err = cluster.Client.Create(ctx, forged)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.trigger"))
}

func TestConversion_V1alpha1AndV1ReadEachOtherThroughTheWebhook(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)

	old := &platformv1alpha1.ScheduleTask{}
	old.Namespace, old.Name = ns, "legacy"
	old.Spec = platformv1alpha1.ScheduleTaskSpec{Schedule: "@daily", Image: "busybox:1.36"}
	g.Expect(cluster.Client.Create(ctx, old)).To(Succeed())
	var v1 platformv1.ScheduleTask
	g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(old), &v1)).To(Succeed())
	g.Expect(v1.Spec.ConcurrencyPolicy).To(Equal(platformv1.AllowConcurrent))

	st := testutil.NewScheduleTask(ns, "modern", testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent))
	st.Spec.TimeZone = ptr.To("Asia/Tokyo")
	g.Expect(cluster.Client.Create(ctx, st)).To(Succeed())
	a := &platformv1alpha1.ScheduleTask{}
	a.Namespace, a.Name = st.Namespace, st.Name
	g.Expect(harness.Edit(ctx, cluster.Client, a, func(a *platformv1alpha1.ScheduleTask) {
		a.Spec.Image = "busybox:1.37"
	})).To(Succeed())
	g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(st), &v1)).To(Succeed())
	g.Expect(v1.Spec.Image).To(Equal("busybox:1.37"))
	g.Expect(v1.Spec.TimeZone).To(Equal(ptr.To("Asia/Tokyo")))
	g.Expect(v1.Spec.ConcurrencyPolicy).To(Equal(platformv1.ForbidConcurrent))
}
