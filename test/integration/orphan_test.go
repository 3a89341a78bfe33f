// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// refuseCronJobs makes the API server refuse every new CronJob in ns, as a
// ResourceQuota of zero CronJobs does in a real cluster; the quota's status
// is written by hand because envtest runs no quota controller. It returns
// once a CronJob is really refused.
func refuseCronJobs(t *testing.T, ns string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	zero := corev1.ResourceList{"count/cronjobs.batch": resource.MustParse("0")}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-cronjobs"},
		Spec: corev1.ResourceQuotaSpec{Hard: zero}}
	g.Expect(k8sClient.Create(ctx, q)).To(Succeed())
	q.Status = corev1.ResourceQuotaStatus{Hard: zero, Used: zero}
	g.Expect(k8sClient.Status().Update(ctx, q)).To(Succeed())
	probe := testutil.NewScheduleTask(ns, "probe")
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
		Spec: batchv1.CronJobSpec{Schedule: probe.Spec.Schedule, JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: probe.Spec.Image}},
			}}},
		}},
	}
	g.Eventually(func() bool {
		err := k8sClient.Create(ctx, cj.DeepCopy())
		if err == nil {
			_ = k8sClient.Delete(ctx, cj)
		}
		return apierrors.IsForbidden(err)
	}, timeout, poll).Should(BeTrue(), "the quota refuses CronJobs")
}

// createUnrunnableTask creates a task in ns (where CronJobs are refused) and
// waits until it reports Ready False because its CronJob was refused.
func createUnrunnableTask(t *testing.T, ns, name string) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(k8sClient.Create(context.Background(), testutil.NewScheduleTask(ns, name))).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := getTask(g, client.ObjectKey{Namespace: ns, Name: name})
		c := meta.FindStatusCondition(st.Status.Conditions, platformv1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(platformv1.ReasonCronJobError))
	}, timeout, poll).Should(Succeed())
}

// expectRunFailed waits until the run ends Failed with reason, no sooner
// than the grace period after its creation, and returns it.
func expectRunFailed(t *testing.T, key client.ObjectKey, reason string) *platformv1.TaskRun {
	t.Helper()
	g := NewWithT(t)
	tr := &platformv1.TaskRun{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(context.Background(), key, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunFailed))
	}, timeout, poll).Should(Succeed(), "the run ends instead of staying Pending")
	g.Expect(tr.Status.Reason).To(Equal(reason))
	g.Expect(tr.Spec.JobRef).To(BeNil(), "no Job was started")
	c := meta.FindStatusCondition(tr.Status.Conditions, platformv1.ConditionSucceeded)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(c.Reason).To(Equal(reason))
	g.Expect(tr.Status.CompletionTime).NotTo(BeNil())
	// Times are stored to the second.
	g.Expect(tr.Status.CompletionTime.Sub(tr.CreationTimestamp.Time)).To(
		BeNumerically(">=", manualRunGrace-time.Second), "the run waited out the grace period")
	return tr
}

func TestManualRun_OfATaskThatCannotRunFailsAfterTheGrace(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ns := newNamespace(t)
	refuseCronJobs(t, ns)
	createUnrunnableTask(t, ns, "blocked")

	g.Expect(k8sClient.Create(context.Background(), testutil.NewManualTaskRun(ns, "blocked-now", "blocked"))).To(Succeed())

	tr := expectRunFailed(t, client.ObjectKey{Namespace: ns, Name: "blocked-now"}, platformv1.ReasonTaskCannotRun)
	g.Expect(tr.Status.Message).To(And(ContainSubstring("blocked"), ContainSubstring(platformv1.ReasonCronJobError)),
		"the message says which task and why")
}

func TestManualRun_OfATaskDeletedAfterAdmissionFailsAfterTheGrace(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	// The task must exist when the run is admitted (the TaskRun webhook
	// refuses a run of a missing task); it is deleted before the run could
	// start, which the refused CronJob makes certain.
	refuseCronJobs(t, ns)
	createUnrunnableTask(t, ns, "gone")
	g.Expect(k8sClient.Create(ctx, testutil.NewManualTaskRun(ns, "gone-now", "gone"))).To(Succeed())
	gone := &platformv1.ScheduleTask{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone"}}
	g.Expect(k8sClient.Delete(ctx, gone)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(gone), &platformv1.ScheduleTask{}))
	}, timeout, poll).Should(BeTrue())

	tr := expectRunFailed(t, client.ObjectKey{Namespace: ns, Name: "gone-now"}, platformv1.ReasonTaskNotFound)
	g.Expect(tr.Status.Message).To(ContainSubstring("gone"))
}
