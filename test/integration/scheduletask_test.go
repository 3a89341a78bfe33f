// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/tracing"
)

const (
	timeout = 20 * time.Second
	poll    = 100 * time.Millisecond
)

// spanNamed returns the name of an ended span of the trace, if any.
func spanNamed(traceID string) string {
	for _, s := range spans.GetSpans() {
		if s.SpanContext.TraceID().String() == traceID {
			return s.Name
		}
	}
	return ""
}

// createTask creates a task and waits for its CronJob.
func createTask(t *testing.T, st *platformv1.ScheduleTask) *batchv1.CronJob {
	t.Helper()
	g := NewWithT(t)
	g.Expect(k8sClient.Create(context.Background(), st)).To(Succeed())
	cj := &batchv1.CronJob{}
	g.Eventually(func() error {
		return k8sClient.Get(context.Background(), client.ObjectKeyFromObject(st), cj)
	}, timeout, poll).Should(Succeed())
	return cj
}

// getTask reads a task fresh from the API server.
func getTask(g Gomega, key client.ObjectKey) *platformv1.ScheduleTask {
	st := &platformv1.ScheduleTask{}
	g.Expect(k8sClient.Get(context.Background(), key, st)).To(Succeed())
	return st
}

// taskRuns lists the TaskRuns in a namespace.
func taskRuns(g Gomega, ns string) []platformv1.TaskRun {
	var l platformv1.TaskRunList
	g.Expect(k8sClient.List(context.Background(), &l, client.InNamespace(ns))).To(Succeed())
	return l.Items
}

func TestScheduleTask_CreatesOwnedCronJobFromSpec(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "nightly",
		testutil.WithSchedule("30 2 * * *"),
		testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent),
		testutil.WithBackoffLimit(2))
	st.Spec.TimeZone = ptr.To("Europe/Berlin")
	st.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
	st.Spec.StartingDeadlineSeconds = ptr.To[int64](120)
	st.Spec.Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
	cj := createTask(t, st)

	task := getTask(g, client.ObjectKeyFromObject(st))
	g.Expect(metav1.IsControlledBy(cj, task)).To(BeTrue(), "CronJob is controlled by the task")
	g.Expect(cj.Spec.Schedule).To(Equal("30 2 * * *"))
	g.Expect(cj.Spec.TimeZone).To(Equal(ptr.To("Europe/Berlin")))
	g.Expect(cj.Spec.ConcurrencyPolicy).To(Equal(batchv1.ForbidConcurrent))
	g.Expect(cj.Spec.StartingDeadlineSeconds).To(Equal(ptr.To[int64](120)))
	g.Expect(cj.Spec.Suspend).To(Equal(ptr.To(false)))
	jt := cj.Spec.JobTemplate
	g.Expect(jt.Labels).To(HaveKeyWithValue(platformv1.ScheduleTaskLabel, "nightly"))
	g.Expect(jt.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.ScheduleTaskLabel, "nightly"))
	g.Expect(jt.Spec.BackoffLimit).To(Equal(ptr.To[int32](2)))
	g.Expect(jt.Spec.ActiveDeadlineSeconds).To(Equal(ptr.To[int64](600)))
	g.Expect(jt.Spec.Template.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	g.Expect(jt.Spec.Template.Spec.Containers).To(HaveLen(1))
	c := jt.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(Equal("busybox:1.36"))
	g.Expect(c.Command).To(Equal(st.Spec.Command))

	g.Eventually(func(g Gomega) {
		task := getTask(g, client.ObjectKeyFromObject(st))
		ready := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.Reason).To(Equal(platformv1.ReasonCronJobReady))
		g.Expect(ready.ObservedGeneration).To(Equal(task.Generation))
		g.Expect(task.Status.ObservedGeneration).To(Equal(task.Generation))
		g.Expect(task.Status.NextScheduleTime).NotTo(BeNil())
		berlin, _ := time.LoadLocation("Europe/Berlin")
		next := task.Status.NextScheduleTime.In(berlin)
		g.Expect([]int{next.Hour(), next.Minute()}).To(Equal([]int{2, 30}), "next run is 02:30 Berlin time")
		g.Expect(task.Finalizers).To(ContainElement("platform.example.com/cancel-runs"))
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_SpecChangeUpdatesCronJob(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "changing")
	createTask(t, st)

	key := client.ObjectKeyFromObject(st)
	g.Expect(editTask(context.Background(), k8sClient, key, func(task *platformv1.ScheduleTask) {
		task.Spec.Schedule = "@hourly"
		task.Spec.Image = "busybox:1.37"
		task.Spec.Suspend = ptr.To(true)
	})).To(Succeed())

	g.Eventually(func(g Gomega) {
		cj := &batchv1.CronJob{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(st), cj)).To(Succeed())
		g.Expect(cj.Spec.Schedule).To(Equal("@hourly"))
		g.Expect(cj.Spec.Suspend).To(Equal(ptr.To(true)))
		g.Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image).To(Equal("busybox:1.37"))
		task := getTask(g, client.ObjectKeyFromObject(st))
		ready := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(platformv1.ReasonSuspended))
		g.Expect(task.Status.NextScheduleTime).To(BeNil(), "a suspended task has no next run")
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		reasons := eventReasons(g, st.Namespace, st.Name)
		g.Expect(reasons).To(ContainElement("CronJobUpdated"))
		g.Expect(reasons).NotTo(ContainElement("CronJobRepaired"), "a spec change is not a repair")
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_HandEditedCronJobIsRepaired(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "drift", testutil.WithSchedule("*/5 * * * *"))
	cj := createTask(t, st)

	cj.Spec.Schedule = "0 0 1 1 *"
	cj.Spec.Suspend = ptr.To(true)
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "evil:latest"
	// A field of the job template the operator does not set is put back
	// too (to the API server's default): another manager's additions to
	// the template are not left to run with every Job.
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
	g.Expect(k8sClient.Update(context.Background(), cj)).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := &batchv1.CronJob{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(st), got)).To(Succeed())
		g.Expect(got.Spec.Schedule).To(Equal("*/5 * * * *"))
		g.Expect(got.Spec.Suspend).To(Equal(ptr.To(false)))
		c := got.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
		g.Expect(c.Image).To(Equal("busybox:1.36"))
		g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(eventReasons(g, st.Namespace, st.Name)).To(ContainElement("CronJobRepaired"))
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_HandEditedCronJobMetadataIsRepaired(t *testing.T) {
	// A label edit leaves the CronJob's generation as it was, so this is the
	// pass that checks only the metadata of a CronJob whose spec the operator
	// has already seen in line.
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "relabelled", testutil.WithSchedule("*/5 * * * *"))
	cj := createTask(t, st)
	generation := cj.Generation

	patch := client.MergeFrom(cj.DeepCopy())
	cj.Labels[platformv1.ScheduleTaskLabel] = "someone-else"
	g.Expect(k8sClient.Patch(context.Background(), cj, patch)).To(Succeed())
	g.Expect(cj.Generation).To(Equal(generation), "a label edit moved the generation; this test needs one that does not")

	g.Eventually(func(g Gomega) {
		got := &batchv1.CronJob{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(st), got)).To(Succeed())
		g.Expect(got.Labels).To(HaveKeyWithValue(platformv1.ScheduleTaskLabel, st.Name))
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(eventReasons(g, st.Namespace, st.Name)).To(ContainElement("CronJobRepaired"))
	}, timeout, poll).Should(Succeed())
}

// eventReasons lists the reasons of the events about one object.
func eventReasons(g Gomega, ns, name string) []string {
	var evs eventsv1.EventList
	g.Expect(k8sClient.List(context.Background(), &evs, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range evs.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

func TestScheduleTask_IdleTasksAreNeverWritten(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ns := newNamespace(t)
	plain := testutil.NewScheduleTask(ns, "plain", testutil.WithSchedule("0 3 * * *"))
	full := testutil.NewScheduleTask(ns, "full", testutil.WithSchedule("0 4 * * *"))
	full.Spec.TimeZone = ptr.To("America/New_York")
	full.Spec.ServiceAccountName = ptr.To("runner")
	full.Spec.Env = []corev1.EnvVar{
		{Name: "A", Value: "1"},
		{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	full.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{
		corev1.ResourceCPU: resourceMust("1000m"), corev1.ResourceMemory: resourceMust("0.5Gi")}}
	var cj *batchv1.CronJob
	for _, st := range []*platformv1.ScheduleTask{plain, full} {
		cj = createTask(t, st)
	}
	// One finished run, so there is a TaskRun to leave alone too.
	job := testutil.JobFromCronJob(cj, time.Now().Add(-time.Hour).Truncate(time.Minute))
	g.Expect(k8sClient.Create(context.Background(), job)).To(Succeed())
	testutil.CompleteJob(job, job.CreationTimestamp.Add(-time.Minute), job.CreationTimestamp.Add(-50*time.Second))
	g.Expect(k8sClient.Status().Update(context.Background(), job)).To(Succeed())

	versions := func(g Gomega) map[string]string {
		out := map[string]string{}
		for _, st := range []*platformv1.ScheduleTask{plain, full} {
			task := getTask(g, client.ObjectKeyFromObject(st))
			g.Expect(task.Status.ObservedGeneration).To(Equal(task.Generation))
			cj := &batchv1.CronJob{}
			g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(st), cj)).To(Succeed())
			out["task/"+st.Name] = task.ResourceVersion
			out["cronjob/"+st.Name] = cj.ResourceVersion
		}
		runs := taskRuns(g, ns)
		g.Expect(runs).To(HaveLen(1))
		g.Expect(runs[0].Status.Phase).To(Equal(platformv1.TaskRunSucceeded))
		out["taskrun/"+runs[0].Name] = runs[0].ResourceVersion
		return out
	}
	// Settled: everything observed, and unchanged for a second.
	var before map[string]string
	g.Eventually(func(g Gomega) {
		first := versions(g)
		time.Sleep(time.Second)
		before = versions(g)
		g.Expect(before).To(Equal(first))
	}, timeout, poll).Should(Succeed())

	// Through several forced resyncs of the cache, nothing is written.
	throughResyncs(t, plain, 3, func(g Gomega) { g.Expect(versions(g)).To(Equal(before)) })
}

func TestScheduleTask_EveryJobGetsExactlyOneTaskRun(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "recorded")
	// The Jobs stand for the CronJob controller's, so they are made within
	// the starting deadline of the fire times they are named for: a Job made
	// at another time is a manual run (see TestScheduleTask_AJobMadeOutOfTimeIsNoScheduledRun).
	st.Spec.StartingDeadlineSeconds = ptr.To[int64](300)
	cj := createTask(t, st)

	scheduled := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	jobs := []*batchv1.Job{testutil.JobFromCronJob(cj, scheduled), testutil.JobFromCronJob(cj, scheduled.Add(time.Minute))}
	for _, j := range jobs {
		g.Expect(k8sClient.Create(ctx, j)).To(Succeed())
	}

	g.Eventually(func(g Gomega) {
		runs := taskRuns(g, ns)
		g.Expect(runs).To(HaveLen(2))
		byUID := map[string]platformv1.TaskRun{}
		for _, tr := range runs {
			g.Expect(tr.Spec.JobRef).NotTo(BeNil())
			byUID[string(tr.Spec.JobRef.UID)] = tr
		}
		for _, j := range jobs {
			tr, ok := byUID[string(j.UID)]
			g.Expect(ok).To(BeTrue(), "Job %s has a TaskRun", j.Name)
			g.Expect(tr.Name).To(Equal(j.Name))
			g.Expect(tr.Spec.Trigger).To(Equal(platformv1.TriggerScheduled))
			g.Expect(tr.Spec.ScheduleTaskName).To(Equal("recorded"))
			g.Expect(tr.Spec.ScheduledTime).NotTo(BeNil())
			g.Expect(tr.Labels).To(HaveKeyWithValue(platformv1.ScheduleTaskLabel, "recorded"))
			g.Expect(tr.OwnerReferences).To(HaveLen(1))
			g.Expect(tr.OwnerReferences[0].Kind).To(Equal("ScheduleTask"), "owned by the task, not the Job")
			// The run can be found from the trace of the reconcile that recorded it.
			tp := tr.Annotations[tracing.TraceParentAnnotation]
			g.Expect(tp).To(MatchRegexp(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`))
			g.Expect(spanNamed(tp[3:35])).To(Equal("Reconcile scheduletask"))
		}
		task := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(task.Status.TriggerCount).To(Equal(int64(2)))
		g.Expect(task.Status.LastScheduleTime.Time).To(BeTemporally("==", scheduled.Add(time.Minute)))
	}, timeout, poll).Should(Succeed())

	// Through resyncs, still exactly one TaskRun per Job.
	throughResyncs(t, st, 2, func(g Gomega) { g.Expect(taskRuns(g, ns)).To(HaveLen(2)) })
}

// A Job made from the CronJob's template by anyone who may create Jobs
// (`kubectl create job --from=cronjob/...`), under the name the CronJob
// controller would give the Job of some fire time, is a run, but not that
// fire time's: it is recorded Manual, and moves neither the task's last
// schedule time nor its account of missed runs.
func TestScheduleTask_AJobMadeOutOfTimeIsNoScheduledRun(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "timed")
	cj := createTask(t, st)
	// Named for a fire time an hour ago and for one in an hour: neither was
	// made by the schedule at its time.
	now := time.Now().UTC().Truncate(time.Minute)
	jobs := []*batchv1.Job{
		testutil.JobFromCronJob(cj, now.Add(-time.Hour)), testutil.JobFromCronJob(cj, now.Add(time.Hour)),
	}
	for _, j := range jobs {
		g.Expect(k8sClient.Create(ctx, j)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		runs := taskRuns(g, ns)
		g.Expect(runs).To(HaveLen(2))
		for _, tr := range runs {
			g.Expect(tr.Spec.JobRef).NotTo(BeNil())
			g.Expect(tr.Spec.Trigger).To(Equal(platformv1.TriggerManual), "run %s of Job %s", tr.Name, tr.Spec.JobRef.Name)
			g.Expect(tr.Spec.ScheduledTime).To(BeNil(), "run %s", tr.Name)
		}
		task := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(task.Status.TriggerCount).To(Equal(int64(2)))
		g.Expect(task.Status.LastScheduleTime).To(BeNil(), "no fire time has run")
		g.Expect(task.Status.MissedRuns).To(BeZero())
	}, timeout, poll).Should(Succeed())
}

func TestTaskRun_FollowsItsJobToSucceeded(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cj := createTask(t, testutil.NewScheduleTask(ns, "ok"))
	job := testutil.JobFromCronJob(cj, time.Now().Truncate(time.Minute))
	g.Expect(k8sClient.Create(ctx, job)).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: job.Name}

	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, key, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunPending))
		c := meta.FindStatusCondition(tr.Status.Conditions, platformv1.ConditionSucceeded)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionUnknown))
	}, timeout, poll).Should(Succeed())

	start := time.Now().Add(-10 * time.Second).Truncate(time.Second)
	pod := testutil.PodForJob(job, job.Name+"-abcde", corev1.PodPending, 0)
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	pod.Status.Phase = corev1.PodRunning
	g.Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
	testutil.StartJob(job, start)
	g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())

	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, key, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunRunning))
		g.Expect(tr.Status.StartTime).NotTo(BeNil())
		g.Expect(tr.Status.PodName).To(Equal(pod.Name))
		task := getTask(g, client.ObjectKey{Namespace: ns, Name: "ok"})
		g.Expect(task.Status.Active).To(BeTrue())
		g.Expect(task.Status.ActiveRuns).To(Equal([]string{job.Name}))
	}, timeout, poll).Should(Succeed())

	pod.Status.Phase = corev1.PodSucceeded
	g.Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
	end := start.Add(7 * time.Second)
	testutil.CompleteJob(job, start, end)
	g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())

	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, key, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunSucceeded))
		g.Expect(tr.Status.Reason).To(Equal(platformv1.ReasonCompleted))
		g.Expect(tr.Status.CompletionTime.Time).To(BeTemporally("==", end))
		g.Expect(tr.Status.Duration).To(Equal("7s"))
		g.Expect(tr.Status.Attempts).To(Equal(int32(1)))
		g.Expect(tr.Status.RunNumber).To(Equal(int64(1)), "the record carries its run number")
		c := meta.FindStatusCondition(tr.Status.Conditions, platformv1.ConditionSucceeded)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		task := getTask(g, client.ObjectKey{Namespace: ns, Name: "ok"})
		g.Expect(task.Status.Active).To(BeFalse())
		g.Expect(task.Status.LastResult).To(Equal(platformv1.RunSucceeded))
		g.Expect(task.Status.LastSuccessfulTime.Time).To(BeTemporally("==", end))
		g.Expect(task.Status.LastTaskRunName).To(Equal(job.Name))
	}, timeout, poll).Should(Succeed())
	// The record is final: the Job is marked so, and leaves the manager's
	// cache, which then holds nothing of it; the task's status stands.
	g.Eventually(func(g Gomega) {
		live := &batchv1.Job{}
		g.Expect(k8sClient.Get(ctx, key, live)).To(Succeed())
		g.Expect(live.Labels).To(HaveKeyWithValue(platformv1.RecordedLabel, "true"))
		err := managerCache.Get(ctx, key, &batchv1.Job{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the manager's cache still shows the Job: %v", err)
	}, timeout, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		task := getTask(g, client.ObjectKey{Namespace: ns, Name: "ok"})
		g.Expect(task.Status.LastResult).To(Equal(platformv1.RunSucceeded))
		g.Expect(task.Status.LastTaskRunName).To(Equal(job.Name))
		var runs platformv1.TaskRunList
		g.Expect(k8sClient.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
		g.Expect(runs.Items).To(HaveLen(1), "the Job is not recorded again once the cache lets it go")
	}, 3*time.Second, poll).Should(Succeed())
	// `kubectl describe` tells the story: one event per transition, on the
	// task and on the run.
	g.Eventually(func(g Gomega) {
		var evs eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		count := map[string]int{}
		for _, e := range evs.Items {
			count[e.Regarding.Kind+"/"+e.Reason]++
			if e.Regarding.Kind == "ScheduleTask" && e.Reason == "RunSucceeded" {
				g.Expect(e.Related).NotTo(BeNil(), "the task's event names its run")
				g.Expect(e.Related.Kind).To(Equal("TaskRun"))
				g.Expect(e.ReportingController).To(Equal("taskrun-controller"))
			}
		}
		for _, want := range []string{
			"ScheduleTask/CronJobCreated", "ScheduleTask/RunStarted", "ScheduleTask/RunRunning", "ScheduleTask/RunSucceeded",
			"TaskRun/RunRunning", "TaskRun/RunSucceeded",
		} {
			g.Expect(count).To(HaveKeyWithValue(want, 1), "exactly one %s event", want)
		}
	}, timeout, poll).Should(Succeed())
}

func TestTaskRun_FailedJobRecordsReasonAttemptsAndExitCode(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cj := createTask(t, testutil.NewScheduleTask(ns, "bad", testutil.WithBackoffLimit(1)))
	job := testutil.JobFromCronJob(cj, time.Now().Truncate(time.Minute))
	g.Expect(k8sClient.Create(ctx, job)).To(Succeed())

	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	for i, code := range []int32{1, 3} {
		p := testutil.PodForJob(job, job.Name+"-"+strings.Repeat(string(rune('a'+i)), 5), corev1.PodPending, 0)
		g.Expect(k8sClient.Create(ctx, p)).To(Succeed())
		failed := testutil.PodForJob(job, p.Name, corev1.PodFailed, code)
		p.Status = failed.Status
		g.Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
		time.Sleep(1100 * time.Millisecond) // distinct creation seconds order the pods
	}
	testutil.FailJob(job, "BackoffLimitExceeded", 2, start, start.Add(30*time.Second))
	g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())

	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: job.Name}, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunFailed))
		g.Expect(tr.Status.Reason).To(Equal(platformv1.ReasonBackoffLimitExceeded))
		g.Expect(tr.Status.Attempts).To(Equal(int32(2)))
		g.Expect(tr.Status.ExitCode).To(Equal(ptr.To[int32](3)), "exit code of the last failed pod")
		g.Expect(tr.Status.PodName).To(Equal(job.Name + "-bbbbb"))
		c := meta.FindStatusCondition(tr.Status.Conditions, platformv1.ConditionSucceeded)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		task := getTask(g, client.ObjectKey{Namespace: ns, Name: "bad"})
		g.Expect(task.Status.LastResult).To(Equal(platformv1.RunFailed))
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_ManualTaskRunStartsOneJobFromTheTemplate(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cj := createTask(t, testutil.NewScheduleTask(ns, "manual"))
	tr := testutil.NewManualTaskRun(ns, "manual-run-1", "manual")
	g.Expect(k8sClient.Create(ctx, tr)).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tr), got)).To(Succeed())
		g.Expect(got.Spec.JobRef).NotTo(BeNil())
		job := &batchv1.Job{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Spec.JobRef.Name}, job)).To(Succeed())
		g.Expect(job.UID).To(Equal(got.Spec.JobRef.UID))
		g.Expect(metav1.IsControlledBy(job, cj)).To(BeTrue(),
			"manual Job is owned by the CronJob, like kubectl create job --from")
		g.Expect(job.Spec.Template.Spec.Containers[0].Image).To(Equal("busybox:1.36"))
		g.Expect(job.Labels).To(HaveKeyWithValue(platformv1.ScheduleTaskLabel, "manual"))
		g.Expect(got.Labels).To(HaveKeyWithValue(platformv1.ScheduleTaskLabel, "manual"))
		g.Expect(got.OwnerReferences).To(HaveLen(1))
		task := getTask(g, client.ObjectKey{Namespace: ns, Name: "manual"})
		g.Expect(task.Status.TriggerCount).To(Equal(int64(1)))
	}, timeout, poll).Should(Succeed())

	task := &platformv1.ScheduleTask{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manual"}}
	throughResyncs(t, task, 2, func(g Gomega) {
		var jobs batchv1.JobList
		g.Expect(k8sClient.List(ctx, &jobs, client.InNamespace(ns))).To(Succeed())
		g.Expect(jobs.Items).To(HaveLen(1))
		g.Expect(taskRuns(g, ns)).To(HaveLen(1), "the manual Job does not get a second TaskRun")
	})
}

func TestScheduleTask_RunNowAnnotationStartsExactlyOneRunPerValue(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "now")
	createTask(t, st)

	annotate := func(v string) {
		task := getTask(g, client.ObjectKeyFromObject(st))
		patch := client.MergeFrom(task.DeepCopy())
		if task.Annotations == nil {
			task.Annotations = map[string]string{}
		}
		task.Annotations[platformv1.RunNowAnnotation] = v
		g.Expect(k8sClient.Patch(ctx, task, patch)).To(Succeed())
	}
	annotate("1")
	g.Eventually(func(g Gomega) { g.Expect(taskRuns(g, ns)).To(HaveLen(1)) }, timeout, poll).Should(Succeed())
	throughResyncs(t, st, 1, func(g Gomega) { g.Expect(taskRuns(g, ns)).To(HaveLen(1)) })
	annotate("2")
	g.Eventually(func(g Gomega) {
		runs := taskRuns(g, ns)
		g.Expect(runs).To(HaveLen(2))
		for _, tr := range runs {
			g.Expect(tr.Spec.Trigger).To(Equal(platformv1.TriggerManual))
			g.Expect(tr.Spec.JobRef).NotTo(BeNil())
		}
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_ForbidRefusesManualRunWhileOneIsActive(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cj := createTask(t, testutil.NewScheduleTask(ns, "single",
		testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent)))
	active := testutil.JobFromCronJob(cj, time.Now().Truncate(time.Minute))
	g.Expect(k8sClient.Create(ctx, active)).To(Succeed())

	tr := testutil.NewManualTaskRun(ns, "too-soon", "single")
	g.Expect(k8sClient.Create(ctx, tr)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tr), got)).To(Succeed())
		g.Expect(got.Status.Phase).To(Equal(platformv1.TaskRunFailed))
		g.Expect(got.Status.Reason).To(Equal("ConcurrencyForbidden"))
		g.Expect(got.Status.Message).To(ContainSubstring(active.Name))
		g.Expect(got.Spec.JobRef).To(BeNil())
	}, timeout, poll).Should(Succeed())
	var jobs batchv1.JobList
	g.Expect(k8sClient.List(ctx, &jobs, client.InNamespace(ns))).To(Succeed())
	g.Expect(jobs.Items).To(HaveLen(1), "no second Job was started")
}

func TestScheduleTask_RetentionDeletesOldestFinishedRuns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "history")
	st.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](2)
	st.Spec.FailedRunsHistoryLimit = ptr.To[int32](1)
	cj := createTask(t, st)

	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	outcomes := []bool{true, false, true, false, true, true} // oldest first
	for i, ok := range outcomes {
		job := testutil.JobFromCronJob(cj, base.Add(time.Duration(i)*time.Minute))
		g.Expect(k8sClient.Create(ctx, job)).To(Succeed())
		start := base.Add(time.Duration(i) * time.Minute)
		if ok {
			testutil.CompleteJob(job, start, start.Add(5*time.Second))
		} else {
			testutil.FailJob(job, "BackoffLimitExceeded", 1, start, start.Add(5*time.Second))
		}
		g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
	}

	g.Eventually(func(g Gomega) {
		var kept []string
		for _, tr := range taskRuns(g, ns) {
			kept = append(kept, tr.Name)
		}
		want := []string{}
		for _, i := range []int{3, 4, 5} { // newest failed, two newest succeeded
			want = append(want, testutil.JobFromCronJob(cj, base.Add(time.Duration(i)*time.Minute)).Name)
		}
		g.Expect(kept).To(ConsistOf(want))
		task := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(task.Status.TriggerCount).To(Equal(int64(6)), "the count survives retention")
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_StatusIsRebuiltFromObservation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "rebuilt")
	createTask(t, st)
	g.Eventually(func(g Gomega) {
		g.Expect(getTask(g, client.ObjectKeyFromObject(st)).Status.ObservedGeneration).To(Equal(int64(1)))
	}, timeout, poll).Should(Succeed())

	// Someone writes a status that contradicts what exists.
	task := getTask(g, client.ObjectKeyFromObject(st))
	task.Status.Active = true
	task.Status.ActiveRuns = []string{"ghost"}
	task.Status.LastResult = platformv1.RunFailed
	task.Status.LastTaskRunName = "ghost"
	g.Expect(k8sClient.Status().Update(ctx, task)).To(Succeed())

	g.Eventually(func(g Gomega) {
		task := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(task.Status.Active).To(BeFalse())
		g.Expect(task.Status.ActiveRuns).To(BeEmpty())
		g.Expect(task.Status.LastResult).To(BeEmpty())
		g.Expect(task.Status.LastTaskRunName).To(BeEmpty())
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_DeletionCancelsActiveRunsAndIsNotBlocked(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "doomed")
	cj := createTask(t, st)
	running := testutil.JobFromCronJob(cj, time.Now().Truncate(time.Minute))
	g.Expect(k8sClient.Create(ctx, running)).To(Succeed())
	done := testutil.JobFromCronJob(cj, time.Now().Truncate(time.Minute).Add(-time.Minute))
	g.Expect(k8sClient.Create(ctx, done)).To(Succeed())
	testutil.CompleteJob(done, time.Now().Add(-time.Minute), time.Now().Add(-50*time.Second))
	g.Expect(k8sClient.Status().Update(ctx, done)).To(Succeed())
	g.Eventually(func(g Gomega) {
		runs := taskRuns(g, ns)
		g.Expect(runs).To(HaveLen(2))
		for _, tr := range runs {
			g.Expect(tr.Status.Phase).NotTo(BeEmpty())
		}
	}, timeout, poll).Should(Succeed())

	g.Expect(k8sClient.Delete(ctx, st)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(st), &platformv1.ScheduleTask{}))
	}, timeout, poll).Should(BeTrue(), "the task is gone, not stuck in Terminating")

	// envtest runs no garbage collector, so the runs are still there to inspect.
	g.Eventually(func(g Gomega) {
		for _, tr := range taskRuns(g, ns) {
			switch tr.Name {
			case running.Name:
				g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunFailed))
				g.Expect(tr.Status.Reason).To(Equal(platformv1.ReasonCancelled))
			case done.Name:
				g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunSucceeded), "a finished run keeps its result")
			}
		}
	}, timeout, poll).Should(Succeed())
}

// envtest runs no garbage collector: after a delete with propagation Orphan
// only the operator can have taken the task's reference off its runs. It must,
// because the collector orphans only the dependents its graph already holds.
func TestScheduleTask_OrphaningDeleteKeepsEveryRunWithoutTheTasksReference(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cj := createTask(t, testutil.NewScheduleTask(ns, "orphaning"))
	scheduled := testutil.JobFromCronJob(cj, time.Now().Truncate(time.Minute))
	g.Expect(k8sClient.Create(ctx, scheduled)).To(Succeed())
	manual := testutil.NewManualTaskRun(ns, "kept-record", "orphaning")
	g.Expect(k8sClient.Create(ctx, manual)).To(Succeed())
	g.Eventually(func(g Gomega) {
		runs := taskRuns(g, ns)
		g.Expect(runs).To(HaveLen(2))
		for _, tr := range runs {
			g.Expect(tr.OwnerReferences).To(HaveLen(1), "run %s is the task's", tr.Name)
		}
	}, timeout, poll).Should(Succeed())

	task := &platformv1.ScheduleTask{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cj), task)).To(Succeed())
	g.Expect(k8sClient.Delete(ctx, task, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
	g.Eventually(func(g Gomega) {
		runs := taskRuns(g, ns)
		g.Expect(runs).To(HaveLen(2))
		for _, tr := range runs {
			g.Expect(tr.OwnerReferences).To(BeEmpty(), "run %s was orphaned", tr.Name)
		}
		got := &platformv1.ScheduleTask{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(task), got)).To(Succeed())
		g.Expect(got.Finalizers).To(Equal([]string{metav1.FinalizerOrphanDependents}),
			"the operator released the task; the orphan finalizer is the collector's")
	}, timeout, poll).Should(Succeed())
}
