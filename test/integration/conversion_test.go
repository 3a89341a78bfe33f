// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	platformv1alpha1 "github.com/example/platform-operator/api/v1alpha1"
	"github.com/example/platform-operator/internal/testutil"
)

func TestConversion_V1alpha1TaskIsReadAsV1WithDefaultPolicy(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	old := &platformv1alpha1.ScheduleTask{}
	old.Namespace, old.Name = ns, "legacy"
	old.Spec = platformv1alpha1.ScheduleTaskSpec{
		Schedule: "@hourly", Image: "busybox:1.36", BackoffLimit: ptr.To[int32](2)}
	g.Expect(k8sClient.Create(ctx, old)).To(Succeed())

	var v1 platformv1.ScheduleTask
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(old), &v1)).To(Succeed())
	g.Expect(v1.Spec.Schedule).To(Equal("@hourly"))
	g.Expect(v1.Spec.BackoffLimit).To(Equal(ptr.To[int32](2)))
	g.Expect(v1.Spec.ConcurrencyPolicy).To(Equal(platformv1.AllowConcurrent))
	g.Expect(v1.Annotations).NotTo(HaveKey(platformv1alpha1.HubDataAnnotation))
}

func TestConversion_V1OnlyFieldsSurviveAWriteThroughV1alpha1(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "modern", testutil.WithConcurrencyPolicy(platformv1.ReplaceConcurrent))
	st.Spec.TimeZone = ptr.To("Europe/Berlin")
	st.Spec.Args = []string{"--verbose"}
	g.Expect(k8sClient.Create(ctx, st)).To(Succeed())

	// An old client reads the task as v1alpha1, changes the image, writes it back.
	g.Eventually(func() error {
		var old platformv1alpha1.ScheduleTask
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(st), &old); err != nil {
			return err
		}
		old.Spec.Image = "busybox:1.37"
		return k8sClient.Update(ctx, &old)
	}, timeout, poll).Should(Succeed())

	var v1 platformv1.ScheduleTask
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(st), &v1)).To(Succeed())
	g.Expect(v1.Spec.Image).To(Equal("busybox:1.37"))
	g.Expect(v1.Spec.TimeZone).To(Equal(ptr.To("Europe/Berlin")))
	g.Expect(v1.Spec.ConcurrencyPolicy).To(Equal(platformv1.ReplaceConcurrent))
	g.Expect(v1.Spec.Args).To(Equal([]string{"--verbose"}))
	g.Expect(v1.Annotations).NotTo(HaveKey(platformv1alpha1.HubDataAnnotation))
}
