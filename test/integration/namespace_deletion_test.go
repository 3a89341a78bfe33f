// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/platform-operator/internal/chain"
)

// The refusal the API server gives a create in a namespace being deleted
// is the one every reconciler's chain stops retrying on
// (chain.NamespaceTerminating): envtest runs no namespace controller, so
// the deleted namespace stays Terminating, as one with many objects does
// for a while in a cluster. A create refused for another reason is not.
func TestNamespaceDeletion_ItsRefusalOfACreateIsToldApart(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cronJob := func(name string) *batchv1.CronJob {
		return &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: batchv1.CronJobSpec{Schedule: "0 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
			}}},
		}
	}
	invalid := cronJob("invalid")
	invalid.Spec.Schedule = "not a schedule"
	err := k8sClient.Create(ctx, invalid)
	g.Expect(err).To(HaveOccurred(), "an invalid CronJob is refused")
	g.Expect(chain.NamespaceTerminating(err)).To(BeFalse(), "refused for its schedule: %v", err)

	g.Expect(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := k8sClient.Create(ctx, cronJob("late"))
		g.Expect(err).To(HaveOccurred(), "a create in the namespace being deleted is refused")
		g.Expect(chain.NamespaceTerminating(err)).To(BeTrue(), "told apart as the namespace's deletion: %v", err)
	}, timeout, poll).Should(Succeed())
}
