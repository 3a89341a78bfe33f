// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/schedule"
	"github.com/example/platform-operator/internal/testutil"
)

func TestScheduleTask_SpreadScheduleGivesTheCronJobAConcreteOne(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "spread", testutil.WithSchedule("H H(0-5) * * *"))
	cj := createTask(t, st)
	want, err := schedule.Effective("H H(0-5) * * *", ns, "spread")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(want).NotTo(ContainSubstring("H"))
	g.Expect(cj.Spec.Schedule).To(Equal(want), "the CronJob runs the resolved schedule")
	g.Eventually(func(g Gomega) {
		task := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(task.Status.EffectiveSchedule).To(Equal(want))
		g.Expect(task.Spec.Schedule).To(Equal("H H(0-5) * * *"), "the spec keeps what the user wrote")
		g.Expect(task.Status.NextScheduleTime).NotTo(BeNil())
		g.Expect(task.Status.NextScheduleTime.UTC().Hour()).To(BeNumerically("<=", 5))
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_SpreadScheduleMustBeWellFormed(t *testing.T) {
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "bad-spread", testutil.WithSchedule("H(30-10) * * * *"))
	expectRefused(t, k8sClient.Create(context.Background(), st), 422, "spec.schedule", "the lower first")
}

func TestScheduleTask_SuspendsAfterRepeatedFailuresUntilResumed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "flaky")
	st.Spec.SuspendAfterFailures = 2
	cj := createTask(t, st)
	key := client.ObjectKeyFromObject(st)

	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	fail := func(i int) {
		t.Helper()
		job := testutil.JobFromCronJob(cj, base.Add(time.Duration(i)*time.Minute))
		g.Expect(k8sClient.Create(ctx, job)).To(Succeed())
		start := base.Add(time.Duration(i) * time.Minute)
		testutil.FailJob(job, "BackoffLimitExceeded", 1, start, start.Add(5*time.Second))
		g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
	}
	fail(0)
	g.Eventually(func(g Gomega) {
		task := getTask(g, key)
		g.Expect(task.Status.ConsecutiveFailures).To(Equal(int32(1)))
		g.Expect(meta.IsStatusConditionTrue(task.Status.Conditions, platformv1.ConditionReady)).
			To(BeTrue(), "one failure of two")
	}, timeout, poll).Should(Succeed())

	fail(1)
	g.Eventually(func(g Gomega) {
		task := getTask(g, key)
		g.Expect(task.Status.ConsecutiveFailures).To(Equal(int32(2)))
		c := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(platformv1.ReasonSuspendedAfterFailures))
		g.Expect(c.Message).To(ContainSubstring("kubectl stask resume flaky"))
		g.Expect(task.Status.NextScheduleTime).To(BeNil(), "no run is due while suspended")
		g.Expect(ptr.Deref(task.Spec.Suspend, false)).To(BeFalse(), "the user's spec.suspend is left alone")
		got := &batchv1.CronJob{}
		g.Expect(k8sClient.Get(ctx, key, got)).To(Succeed())
		g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeTrue(), "the CronJob is suspended")
		g.Expect(eventReasons(g, ns, "flaky")).To(ContainElement("SuspendedAfterFailures"))
	}, timeout, poll).Should(Succeed())

	resume := setAnnotation[*platformv1.ScheduleTask](platformv1.ResumeAnnotation, "1")
	g.Expect(editTask(ctx, k8sClient, key, resume)).To(Succeed())
	g.Eventually(func(g Gomega) {
		task := getTask(g, key)
		g.Expect(task.Status.ConsecutiveFailures).To(BeZero(), "the streak starts again")
		g.Expect(meta.IsStatusConditionTrue(task.Status.Conditions, platformv1.ConditionReady)).To(BeTrue())
		got := &batchv1.CronJob{}
		g.Expect(k8sClient.Get(ctx, key, got)).To(Succeed())
		g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeFalse(), "the CronJob runs again")
		g.Expect(eventReasons(g, ns, "flaky")).To(ContainElement("Resumed"))
	}, timeout, poll).Should(Succeed())
	var events int
	for _, r := range eventReasons(g, ns, "flaky") {
		if r == "SuspendedAfterFailures" {
			events++
		}
	}
	g.Expect(events).To(Equal(1), "one Warning for the suspension, not one per pass")
}

func TestScheduleTask_SuspendAfterFailuresIsBoundByTheFailedRunsKept(t *testing.T) {
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "too-many")
	st.Spec.SuspendAfterFailures = 5
	st.Spec.FailedRunsHistoryLimit = ptr.To[int32](3)
	expectRefused(t, k8sClient.Create(context.Background(), st), 422,
		"spec.suspendAfterFailures", "at most failedRunsHistoryLimit")
}

func TestScheduleTask_FreshTurnsFalseWhenNoRunSucceededInTime(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "backup")
	st.Spec.StaleAfterSeconds = 600
	cj := createTask(t, st)
	key := client.ObjectKeyFromObject(st)

	// A young task that has not run yet is fresh: it is counted from its creation.
	g.Eventually(func(g Gomega) {
		task := getTask(g, key)
		c := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionFresh)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(ContainSubstring("No run has succeeded since the task was created"))
	}, timeout, poll).Should(Succeed())

	// A success an hour ago is older than staleAfterSeconds.
	old := time.Now().Add(-time.Hour).Truncate(time.Minute)
	job := testutil.JobFromCronJob(cj, old)
	g.Expect(k8sClient.Create(ctx, job)).To(Succeed())
	testutil.CompleteJob(job, old, old.Add(5*time.Second))
	g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
	g.Eventually(func(g Gomega) {
		task := getTask(g, key)
		c := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionFresh)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(platformv1.ReasonStale))
		g.Expect(c.Message).To(ContainSubstring(old.Add(5 * time.Second).UTC().Format(time.RFC3339)))
		g.Expect(eventReasons(g, ns, "backup")).To(ContainElement("Stale"))
	}, timeout, poll).Should(Succeed())

	// A success now makes it fresh again.
	recent := time.Now().Truncate(time.Minute)
	job = testutil.JobFromCronJob(cj, recent)
	g.Expect(k8sClient.Create(ctx, job)).To(Succeed())
	testutil.CompleteJob(job, recent, time.Now())
	g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
	g.Eventually(func(g Gomega) {
		task := getTask(g, key)
		g.Expect(meta.IsStatusConditionTrue(task.Status.Conditions, platformv1.ConditionFresh)).To(BeTrue())
		g.Expect(eventReasons(g, ns, "backup")).To(ContainElement("Fresh"))
	}, timeout, poll).Should(Succeed())

	// Without staleAfterSeconds the condition goes.
	unset := func(st *platformv1.ScheduleTask) { st.Spec.StaleAfterSeconds = 0 }
	g.Expect(editTask(ctx, k8sClient, key, unset)).To(Succeed())
	g.Eventually(func(g Gomega) {
		task := getTask(g, key)
		g.Expect(meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionFresh)).To(BeNil())
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_StaleAfterSecondsHasAFloor(t *testing.T) {
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "too-eager")
	st.Spec.StaleAfterSeconds = 5
	err := k8sClient.Create(context.Background(), st)
	expectRefused(t, err, 422, "spec.staleAfterSeconds")
	if err != nil && !strings.Contains(err.Error(), "60") {
		t.Errorf("the refusal does not give the floor: %v", err)
	}
}

// A manual run's own args and env reach its Job's container, over the
// task's, and are recorded on the run; setting them needs the right to
// create Jobs, the run verb alone is not enough.
func TestTaskRun_ParametersReachTheJobAndNeedTheRightToCreateJobs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "export")
	st.Spec.Args = []string{"--all"}
	st.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "full"}, {Name: "REGION", Value: "eu"}}
	createTask(t, st)
	runner := userClient(t, ns, "runner", withRules(runRule("export")))
	jobber := userClient(t, ns, "jobber", withRules(jobsRule))

	withParameters := func(name string) *platformv1.TaskRun {
		tr := testutil.NewManualTaskRun(ns, name, "export")
		tr.Spec.Args = []string{"--table", "orders"}
		tr.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "dry-run"},
			{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
		return tr
	}
	expectRefused(t, runner.Create(ctx, withParameters("by-runner")), 403, "spec.args",
		`user "runner" may not create jobs.batch`, "the run verb starts the task only as written")
	g.Expect(runner.Create(ctx, testutil.NewManualTaskRun(ns, "plain", "export"))).To(Succeed(),
		"the run verb still starts the task as written")

	tr := withParameters("by-jobber")
	g.Expect(jobber.Create(ctx, tr)).To(Succeed())
	job := &batchv1.Job{}
	g.Eventually(func(g Gomega) {
		got := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tr), got)).To(Succeed())
		g.Expect(got.Spec.JobRef).NotTo(BeNil())
		g.Expect(got.Spec.Args).To(Equal([]string{"--table", "orders"}), "the record says what ran")
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Spec.JobRef.Name}, job)).To(Succeed())
		c := job.Spec.Template.Spec.Containers[0]
		g.Expect(c.Args).To(Equal([]string{"--table", "orders"}))
		var env []string
		for _, e := range c.Env {
			if e.ValueFrom != nil {
				env = append(env, e.Name+"<-"+e.ValueFrom.FieldRef.FieldPath)
			} else {
				env = append(env, e.Name+"="+e.Value)
			}
		}
		g.Expect(env).To(Equal([]string{"MODE=dry-run", "REGION=eu", "POD<-metadata.name",
			platformv1.ScheduledTimeEnv + "=" + got.CreationTimestamp.UTC().Format(time.RFC3339)}),
			"the run's MODE replaces the task's in place; POD comes after, and the time the run stands for last")
	}, timeout, poll).Should(Succeed())
	// The Job is signed for what it runs: were its jobRef lost, it would
	// still be recorded as the task's.
	expectTwinRecorded(t, job, "export")

	// The run's parameters are bounded like the task's fields, and fixed.
	big := testutil.NewManualTaskRun(ns, "too-big", "export")
	big.Spec.Args = []string{strings.Repeat("x", 16000), strings.Repeat("y", 16000), strings.Repeat("z", 1000)}
	expectRefused(t, jobber.Create(ctx, big), 422, "must hold at most 32768 characters together")
	g.Expect(editRun(ctx, k8sClient, client.ObjectKeyFromObject(tr), func(r *platformv1.TaskRun) {
		r.Spec.Args = []string{"--other"}
	})).To(MatchError(ContainSubstring("args is immutable")))
}

// backfillRun is a Backfill run of task for fire time at.
func backfillRun(ns, name, task string, at time.Time) *platformv1.TaskRun {
	tr := testutil.NewManualTaskRun(ns, name, task)
	tr.Spec.Trigger = platformv1.TriggerBackfill
	tr.Spec.ScheduledTime = &metav1.Time{Time: at}
	return tr
}

// Backfill runs stand for past fire times of their task, get the time in
// PLATFORM_SCHEDULED_TIME, and on a Forbid task wait their turn, oldest
// first, instead of being refused.
func TestTaskRun_BackfillRunsWaitTheirTurnOldestFirst(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "hourly", testutil.WithSchedule("0 * * * *"),
		testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent))
	createTask(t, st)
	hour := time.Now().UTC().Truncate(time.Hour)
	// A user's requests: admission judges them (the operator's own pass).
	user := userClient(t, ns, "backfiller", withRules(jobsRule))

	expectRefused(t, user.Create(ctx, backfillRun(ns, "off-schedule", "hourly", hour.Add(-90*time.Minute))), 422,
		"spec.scheduledTime", "is not a fire time of the task's schedule")
	expectRefused(t, user.Create(ctx, backfillRun(ns, "future", "hourly", hour.Add(time.Hour))), 422,
		"spec.scheduledTime", "must not be in the future")
	noTime := testutil.NewManualTaskRun(ns, "no-time", "hourly")
	noTime.Spec.Trigger = platformv1.TriggerBackfill
	expectRefused(t, user.Create(ctx, noTime), 422, "spec.scheduledTime", "needs scheduledTime")

	// A manual run holds the task while the backfill runs are created,
	// newest first: they all wait, and the order of creation must not matter.
	blocker := testutil.NewManualTaskRun(ns, "blocker", "hourly")
	g.Expect(user.Create(ctx, blocker)).To(Succeed())
	var blockerJob batchv1.Job
	g.Eventually(func(g Gomega) {
		got := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(blocker), got)).To(Succeed())
		g.Expect(got.Spec.JobRef).NotTo(BeNil())
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Spec.JobRef.Name}, &blockerJob)).To(Succeed())
	}, timeout, poll).Should(Succeed())
	for i, h := range []int{1, 3, 2} {
		g.Expect(user.Create(ctx, backfillRun(ns, fmt.Sprintf("bf-%d", i), "hourly",
			hour.Add(-time.Duration(h)*time.Hour)))).To(Succeed())
	}
	started := func(g Gomega) []platformv1.TaskRun {
		var out []platformv1.TaskRun
		for _, tr := range taskRuns(g, ns) {
			if tr.Spec.JobRef != nil && tr.Spec.Trigger == platformv1.TriggerBackfill {
				out = append(out, tr)
			}
		}
		return out
	}
	g.Consistently(func(g Gomega) { g.Expect(started(g)).To(BeEmpty()) }, time.Second, poll).
		Should(Succeed(), "no backfill run starts while the manual run is active")
	testutil.CompleteJob(&blockerJob, time.Now().Add(-time.Second), time.Now())
	g.Expect(k8sClient.Status().Update(ctx, &blockerJob)).To(Succeed())
	for step, h := range []int{3, 2, 1} {
		want := hour.Add(-time.Duration(h) * time.Hour)
		var job batchv1.Job
		g.Eventually(func(g Gomega) {
			runs := started(g)
			g.Expect(runs).To(HaveLen(step+1), "one more started after the previous ended, no more")
			var newest platformv1.TaskRun
			for _, tr := range runs {
				if tr.Spec.ScheduledTime.After(newest.DueTime()) || newest.Name == "" {
					newest = tr
				}
			}
			g.Expect(newest.Spec.ScheduledTime.Time).To(BeTemporally("==", want), "oldest fire time first")
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: newest.Spec.JobRef.Name}, &job)).To(Succeed())
		}, timeout, poll).Should(Succeed())
		g.Expect(job.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{
			Name: platformv1.ScheduledTimeEnv, Value: want.Format(time.RFC3339)}))
		g.Consistently(func(g Gomega) { g.Expect(started(g)).To(HaveLen(step + 1)) }, time.Second, poll).
			Should(Succeed(), "the next waits while this one runs")
		testutil.CompleteJob(&job, time.Now().Add(-time.Second), time.Now())
		g.Expect(k8sClient.Status().Update(ctx, &job)).To(Succeed())
	}
	for _, tr := range taskRuns(g, ns) {
		g.Expect(tr.Status.Reason).NotTo(Equal(platformv1.ReasonConcurrencyForbidden), "%s was refused", tr.Name)
	}
}

// TestScheduleTask_MissedFireTimesAreCountedOnceAndRunAllCatchesUp plays
// the CronJob controller coming back after an outage: the stored status
// accounts for fire times up to base, and the CronJob's next Job is for
// base+5m, so base+1m..base+4m had no run. The RunLatest task only counts
// them; the RunAll task (maxMissedRuns 3) also runs the newest three as
// CatchUp runs whose Jobs have the CronJob's names for those times.
func TestScheduleTask_MissedFireTimesAreCountedOnceAndRunAllCatchesUp(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	base := time.Now().Add(-10 * time.Minute).Truncate(time.Minute)
	at := func(m int) time.Time { return base.Add(time.Duration(m) * time.Minute) }
	for _, policy := range []platformv1.MissedRunsPolicy{platformv1.MissedRunsRunLatest, platformv1.MissedRunsRunAll} {
		name := strings.ToLower(string(policy))
		st := testutil.NewScheduleTask(ns, name)
		st.Spec.MissedRuns = policy
		if policy == platformv1.MissedRunsRunAll {
			st.Spec.MaxMissedRuns = 3
		}
		cj := createTask(t, st)
		key := client.ObjectKeyFromObject(st)
		g.Eventually(func(g Gomega) {
			task := getTask(g, key)
			g.Expect(task.Status.MissedRunsCheckedTime).NotTo(BeNil())
			g.Expect(task.Status.ObservedGeneration).To(Equal(task.Generation))
		}, timeout, poll).Should(Succeed())
		// The history: every fire time up to base is accounted for.
		g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			task := getTask(g, key)
			task.Status.MissedRunsCheckedTime = &metav1.Time{Time: at(0)}
			return k8sClient.Status().Update(ctx, task)
		})).To(Succeed())
		// The CronJob controller, back, starts the run of base+5m.
		job := testutil.JobFromCronJob(cj, at(5))
		g.Expect(k8sClient.Create(ctx, job)).To(Succeed())
		g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &batchv1.CronJob{}
			if err := k8sClient.Get(ctx, key, got); err != nil {
				return err
			}
			got.Status.LastScheduleTime = &metav1.Time{Time: at(5)}
			return k8sClient.Status().Update(ctx, got)
		})).To(Succeed())
	}

	g.Eventually(func(g Gomega) {
		for _, name := range []string{"runlatest", "runall"} {
			task := getTask(g, client.ObjectKey{Namespace: ns, Name: name})
			g.Expect(task.Status.MissedRuns).To(Equal(int64(4)), "%s: base+1m to base+4m missed", name)
			g.Expect(task.Status.LastMissedTime).NotTo(BeNil())
			g.Expect(task.Status.LastMissedTime.Time).To(BeTemporally("==", at(4)))
			g.Expect(task.Status.MissedRunsCheckedTime.Time).To(BeTemporally("==", at(5)))
			g.Expect(eventReasons(g, ns, name)).To(ContainElement("MissedRuns"))
		}
		catchUp := map[string]string{}
		for _, tr := range taskRuns(g, ns) {
			if tr.Spec.Trigger == platformv1.TriggerCatchUp {
				g.Expect(tr.Spec.ScheduleTaskName).To(Equal("runall"), "RunLatest catches nothing up")
				g.Expect(tr.Spec.JobRef).NotTo(BeNil(), "catch-up run %s started", tr.Name)
				catchUp[tr.Spec.ScheduledTime.UTC().Format(time.RFC3339)] = tr.Spec.JobRef.Name
			}
		}
		want := map[string]string{}
		for _, m := range []int{2, 3, 4} {
			want[at(m).UTC().Format(time.RFC3339)] = fmt.Sprintf("runall-%d", at(m).Unix()/60)
		}
		g.Expect(catchUp).To(Equal(want), "the newest maxMissedRuns, by the CronJob's Job names")
	}, timeout, poll).Should(Succeed())

	// The gap is counted once, however many passes follow.
	g.Expect(editTask(ctx, k8sClient, client.ObjectKey{Namespace: ns, Name: "runall"},
		setAnnotation[*platformv1.ScheduleTask]("example.com/touch", "1"))).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(getTask(g, client.ObjectKey{Namespace: ns, Name: "runall"}).Status.MissedRuns).To(Equal(int64(4)))
	}, 3*time.Second, poll).Should(Succeed())
	var warnings int
	for _, r := range eventReasons(g, ns, "runall") {
		if r == "MissedRuns" {
			warnings++
		}
	}
	g.Expect(warnings).To(Equal(1), "one event for the gap")
}

func TestScheduleTask_MaxMissedRunsIsForRunAllAndCapped(t *testing.T) {
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "latest-with-max")
	st.Spec.MaxMissedRuns = 5
	expectRefused(t, k8sClient.Create(context.Background(), st), 422, "spec.maxMissedRuns", "RunAll only")
	st = testutil.NewScheduleTask(ns, "too-many")
	st.Spec.MissedRuns = platformv1.MissedRunsRunAll
	st.Spec.MaxMissedRuns = 101
	expectRefused(t, k8sClient.Create(context.Background(), st), 422, "spec.maxMissedRuns", "100")
	st = testutil.NewScheduleTask(ns, "bogus")
	st.Spec.MissedRuns = "Sometimes"
	expectRefused(t, k8sClient.Create(context.Background(), st), 422, "spec.missedRuns", "RunAll")
}
