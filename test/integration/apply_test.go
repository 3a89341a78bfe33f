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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/testutil"
)

// cronJobOf reads a task's CronJob fresh from the API server.
func cronJobOf(g Gomega, st *platformv1.ScheduleTask) *batchv1.CronJob {
	cj := &batchv1.CronJob{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(st), cj)).To(Succeed())
	return cj
}

func TestScheduleTask_CronJobIsAppliedUnderTheOperatorsFieldManager(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "applied")
	createTask(t, st)

	cj := cronJobOf(g, st)
	managers := make([]string, 0, len(cj.ManagedFields))
	for _, mf := range cj.ManagedFields {
		if mf.Manager == scheduletask.FieldManager {
			g.Expect(mf.Operation).To(Equal(metav1.ManagedFieldsOperationApply))
		}
		managers = append(managers, mf.Manager)
	}
	g.Expect(managers).To(ContainElement(scheduletask.FieldManager))
	g.Expect(cj.Annotations).To(HaveKey(apply.AppliedHashAnnotation))
	g.Expect(cj.Labels).To(HaveKeyWithValue(platformv1.ManagedByLabel, platformv1.ManagedByValue))
	g.Expect(cj.Spec.JobTemplate.Spec.Template.Labels).To(
		HaveKeyWithValue(platformv1.ManagedByLabel, platformv1.ManagedByValue))
}

func TestScheduleTask_FieldsRemovedFromTheTaskLeaveTheCronJob(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "shrinking")
	st.Spec.ServiceAccountName = ptr.To("runner")
	st.Spec.TimeZone = ptr.To("Europe/Paris")
	st.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
	createTask(t, st)
	g.Eventually(func(g Gomega) {
		ps := cronJobOf(g, st).Spec.JobTemplate.Spec.Template.Spec
		g.Expect(ps.ServiceAccountName).To(Equal("runner"))
	}, timeout, poll).Should(Succeed())

	key := client.ObjectKeyFromObject(st)
	g.Expect(editTask(context.Background(), k8sClient, key, func(task *platformv1.ScheduleTask) {
		task.Spec.ServiceAccountName = nil
		task.Spec.TimeZone = nil
		task.Spec.Env = nil
	})).To(Succeed())

	g.Eventually(func(g Gomega) {
		cj := cronJobOf(g, st)
		ps := cj.Spec.JobTemplate.Spec.Template.Spec
		// The API server mirrors serviceAccountName into the deprecated
		// field and back; both must be gone, or the old name returns.
		g.Expect(ps.ServiceAccountName).To(BeEmpty())
		g.Expect(ps.DeprecatedServiceAccount).To(BeEmpty())
		g.Expect(cj.Spec.TimeZone).To(BeNil())
		g.Expect(ps.Containers[0].Env).To(BeEmpty())
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_CronJobWrittenByAnEarlierVersionIsAdopted(t *testing.T) {
	// An operator of an earlier version created the CronJob with a plain
	// create and update: its fields belong to an Update manager and it
	// carries no applied-configuration hash. The task's first pass must take
	// the fields over, so a field later removed from the task goes too.
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "legacy", testutil.WithSuspend(true))
	st.Spec.Env = []corev1.EnvVar{{Name: "OLD", Value: "1"}}
	// The CronJob exists before the task, or the operator's first pass would
	// create it and there would be nothing to adopt; without an owner it is
	// someone else's, which the operator leaves alone, until the owner
	// reference an earlier version wrote is added below.
	legacy := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: st.Name,
			Labels: map[string]string{platformv1.ScheduleTaskLabel: st.Name}},
		Spec: batchv1.CronJobSpec{Schedule: st.Spec.Schedule, JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{platformv1.ScheduleTaskLabel: st.Name}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{platformv1.ScheduleTaskLabel: st.Name}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
					Name: platformv1.TaskContainerName, Image: st.Spec.Image, Env: st.Spec.Env}}}}}}},
	}
	g.Expect(k8sClient.Create(ctx, legacy, client.FieldOwner("manager"))).To(Succeed())
	g.Expect(k8sClient.Create(ctx, st)).To(Succeed())
	task := getTask(g, client.ObjectKeyFromObject(st))
	owned := legacy.DeepCopy()
	owned.OwnerReferences = []metav1.OwnerReference{
		*metav1.NewControllerRef(task, platformv1.GroupVersion.WithKind("ScheduleTask"))}
	g.Expect(k8sClient.Patch(ctx, owned, client.MergeFrom(legacy), client.FieldOwner("manager"))).To(Succeed())

	g.Eventually(func(g Gomega) {
		cj := cronJobOf(g, st)
		g.Expect(cj.Annotations).To(HaveKey(apply.AppliedHashAnnotation))
		g.Expect(cj.Labels).To(HaveKeyWithValue(platformv1.ManagedByLabel, platformv1.ManagedByValue))
		g.Expect(cj.Spec.Suspend).To(Equal(ptr.To(true)))
	}, timeout, poll).Should(Succeed())

	g.Expect(editTask(ctx, k8sClient, client.ObjectKeyFromObject(st), func(task *platformv1.ScheduleTask) {
		task.Spec.Env = nil
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(cronJobOf(g, st).Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env).To(BeEmpty())
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_CronJobOfSomeoneElseIsNeverTakenOver(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	theirs := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"},
		Spec: batchv1.CronJobSpec{Schedule: "0 0 1 1 *", JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "theirs", Image: "theirs:1"}}}}}}},
	}
	g.Expect(k8sClient.Create(ctx, theirs)).To(Succeed())
	st := testutil.NewScheduleTask(ns, "taken")
	g.Expect(k8sClient.Create(ctx, st)).To(Succeed())

	g.Eventually(func(g Gomega) {
		task := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(task.Status.Conditions).To(ContainElement(And(
			HaveField("Type", platformv1.ConditionReady), HaveField("Status", metav1.ConditionFalse),
			HaveField("Message", ContainSubstring("not controlled")))))
	}, timeout, poll).Should(Succeed())
	cj := cronJobOf(g, st)
	g.Expect(cj.OwnerReferences).To(BeEmpty())
	g.Expect(cj.Spec.Schedule).To(Equal("0 0 1 1 *"))
	g.Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image).To(Equal("theirs:1"))
}

func TestScheduleTask_NextScheduleTimeNeverLagsTheClock(t *testing.T) {
	// A Forbid task whose run outlasts a period: the CronJob starts no Job at
	// the fire time, so nothing but the operator's own timer wakes the task
	// to move nextScheduleTime on. (envtest runs no Job controller, so the
	// manual run stays active. This suite's 3-second resync would move the
	// field on too; the unit test of untilNextScheduleMoves pins the timer.)
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "ticking", testutil.WithSchedule("* * * * *"),
		testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent))
	createTask(t, st)
	g.Expect(k8sClient.Create(t.Context(), testutil.NewManualTaskRun(ns, "long", st.Name))).To(Succeed())

	var first time.Time
	g.Eventually(func(g Gomega) {
		task := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(task.Status.Active).To(BeTrue())
		g.Expect(task.Status.NextScheduleTime).NotTo(BeNil())
		first = task.Status.NextScheduleTime.Time
	}, timeout, poll).Should(Succeed())

	// The task is set up while the serial tests run; the wait for its fire
	// time is a parallel test's (suite_test.go). With the whole suite the
	// fire time has passed by the time the parallel tests start, so the
	// layer no longer ends waiting up to a minute for this test alone.
	t.Parallel()

	// Past that fire time, the field moves on at once (within 10 s, what
	// two busy cores guarantee): it names the first fire time after now,
	// never one already gone, however many have passed.
	time.Sleep(time.Until(first))
	g.Eventually(func(g Gomega) {
		task := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(task.Status.Active).To(BeTrue())
		next, now := task.Status.NextScheduleTime.Time, time.Now()
		g.Expect(next).To(BeTemporally(">", first))
		g.Expect(next).To(BeTemporally(">", now.Add(-time.Second)), "nextScheduleTime lags the clock")
		g.Expect(next).To(BeTemporally("<=", now.Add(time.Minute)), "nextScheduleTime skips a fire time")
		g.Expect(next.Second()).To(BeZero(), "a fire time of * * * * *")
	}, 10*time.Second, 200*time.Millisecond).Should(Succeed())
}
