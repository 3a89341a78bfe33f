// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/testutil"
)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := platformv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func everyMinute(policy platformv1.ConcurrencyPolicy) *platformv1.ScheduleTask {
	return testutil.NewScheduleTask("team-a", "report", testutil.WithSchedule("* * * * *"),
		testutil.WithConcurrencyPolicy(policy))
}

// slow makes every Job run for d.
func slow(d time.Duration, ok bool) func(*batchv1.Job) (time.Duration, bool) {
	return func(*batchv1.Job) (time.Duration, bool) { return d, ok }
}

func TestWorld_AllowRecordsEveryFireTimeOnceEvenWhenRunsOverlap(t *testing.T) {
	w := newWorld(t, everyMinute(platformv1.AllowConcurrent))
	w.outcome = slow(150*time.Second, true)
	w.run(10 * time.Minute)

	scheduled := w.runsBy(platformv1.TriggerScheduled)
	if len(scheduled) != 10 {
		t.Fatalf("%d scheduled runs in 10 minutes, want 10", len(scheduled))
	}
	for i, tr := range scheduled {
		if tr.Spec.ScheduledTime == nil || tr.Spec.ScheduledTime.Second() != 0 {
			t.Errorf("run %d %s stands for %v, want a whole minute", i, tr.Name, tr.Spec.ScheduledTime)
		}
	}
	if st := w.task.Status; st.TriggerCount != 10 || st.MissedRuns != 0 || len(st.ActiveRuns) < 2 {
		t.Errorf("triggerCount %d, missedRuns %d, activeRuns %v; want 10, 0 and overlapping runs",
			st.TriggerCount, st.MissedRuns, st.ActiveRuns)
	}
	if got := len(w.eventsOf(EventRunStarted)); got != 10 {
		t.Errorf("%d RunStarted events, want one per run (10)", got)
	}
}

func TestWorld_ForbidRefusesAManualRunWhileOneIsActive(t *testing.T) {
	w := newWorld(t, everyMinute(platformv1.ForbidConcurrent))
	w.outcome = slow(90*time.Second, true)
	w.run(40 * time.Second) // the 12:01 run is active
	tr := w.manual("by-hand", platformv1.TriggerManual, nil)
	w.run(10 * time.Second)

	got := w.runs[tr.Name]
	if got.Status.Phase != platformv1.TaskRunFailed || got.Status.Reason != platformv1.ReasonConcurrencyForbidden {
		t.Fatalf("manual run %s/%s, want Failed/%s", got.Status.Phase, got.Status.Reason, platformv1.ReasonConcurrencyForbidden)
	}
	if got.Spec.JobRef != nil || w.started[string(tr.UID)] != 0 {
		t.Error("a refused run has a Job")
	}
	if !metav1.IsControlledBy(got, w.task) || got.RunNumber() == 0 {
		t.Error("the refused run was not adopted: it is neither owned nor numbered")
	}
	// With nothing active, the next manual run starts at once.
	w.cronJobDown = true
	w.run(2 * time.Minute)
	next := w.manual("by-hand-2", platformv1.TriggerManual, nil)
	w.run(10 * time.Second)
	if w.started[string(next.UID)] != 1 || w.runs[next.Name].Spec.JobRef == nil {
		t.Errorf("manual run with nothing active: started %d times, jobRef %v", w.started[string(next.UID)], w.runs[next.Name].Spec.JobRef)
	}
}

func TestWorld_ReplaceDeletesTheActiveJobAndStartsTheManualRun(t *testing.T) {
	w := newWorld(t, everyMinute(platformv1.ReplaceConcurrent))
	w.outcome = slow(5*time.Minute, true)
	w.run(40 * time.Second)
	before := w.activeJobs()
	if len(before) != 1 {
		t.Fatalf("%d active Jobs before the manual run, want 1", len(before))
	}
	tr := w.manual("now", platformv1.TriggerManual, nil)
	w.run(10 * time.Second)

	active := w.activeJobs()
	if len(active) != 1 || active[0].Annotations[platformv1.TaskRunUIDAnnotation] != string(tr.UID) {
		t.Fatalf("active Jobs %v, want only the manual run's", active)
	}
	if replaced := w.runs[before[0].Name]; replaced.Status.Phase != platformv1.TaskRunFailed {
		t.Errorf("the replaced run is %s, want Failed", replaced.Status.Phase)
	}
	if len(w.eventsOf(EventRunReplaced)) != 1 {
		t.Errorf("RunReplaced events %v, want one", w.eventsOf(EventRunReplaced))
	}
}

func TestWorld_BackfillRunsWaitTheirTurnOldestFirstUnderForbid(t *testing.T) {
	w := newWorld(t, testutil.NewScheduleTask("team-a", "report", testutil.WithSchedule("0 * * * *"),
		testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent)))
	w.outcome = slow(30*time.Second, true)
	runs := make([]*platformv1.TaskRun, 0, 3)
	for _, h := range []int{9, 7, 8} {
		at := time.Date(2026, 12, 1, h, 0, 0, 0, time.UTC)
		runs = append(runs, w.manual("backfill-"+string(rune('0'+h)), platformv1.TriggerBackfill, &at))
	}
	w.run(10 * time.Second)
	if len(w.activeJobs()) != 1 || w.runs["backfill-7"].Spec.JobRef == nil {
		t.Fatalf("after the first pass: %d active, want the 07:00 backfill alone", len(w.activeJobs()))
	}
	w.run(3 * time.Minute)
	for _, tr := range w.runsBy(platformv1.TriggerBackfill) {
		if tr.Status.Phase != platformv1.TaskRunSucceeded {
			t.Errorf("backfill %s is %s, want Succeeded", tr.Name, tr.Status.Phase)
		}
	}
	starts := map[string]time.Time{}
	for _, tr := range runs {
		starts[tr.Name] = w.runs[tr.Name].Status.StartTime.Time
	}
	if !starts["backfill-7"].Before(starts["backfill-8"]) || !starts["backfill-8"].Before(starts["backfill-9"]) {
		t.Errorf("backfills started at %v; want in the order of their fire times", starts)
	}
}

func TestWorld_MissedFireTimesAreCountedAndRunAllCatchesUp(t *testing.T) {
	for _, tt := range []struct {
		policy      platformv1.MissedRunsPolicy
		wantCatchUp int
	}{
		{platformv1.MissedRunsRunLatest, 0},
		{platformv1.MissedRunsRunAll, 4},
	} {
		t.Run(string(tt.policy), func(t *testing.T) {
			task := everyMinute(platformv1.ForbidConcurrent)
			task.Spec.MissedRuns = tt.policy
			w := newWorld(t, task)
			w.run(2 * time.Minute) // 12:01 and 12:02 run
			w.cronJobDown = true
			w.run(5 * time.Minute) // 12:03 to 12:07 pass unseen
			w.cronJobDown = false
			w.run(4 * time.Minute)

			if st := w.task.Status; st.MissedRuns != 4 {
				t.Errorf("missedRuns %d, want 4 (12:03 to 12:06; the CronJob starts 12:07 late)", st.MissedRuns)
			}
			if got := w.eventsOf(EventMissedRuns); len(got) != 1 || !strings.Contains(got[0], "12:03:00Z") {
				t.Errorf("MissedRuns events %q, want one naming 12:03", got)
			}
			catchUp := w.runsBy(platformv1.TriggerCatchUp)
			if len(catchUp) != tt.wantCatchUp {
				t.Fatalf("%d catch-up runs, want %d", len(catchUp), tt.wantCatchUp)
			}
			for _, tr := range catchUp {
				if tr.Status.Phase != platformv1.TaskRunSucceeded || tr.Name != catchUpName(w.task, tr.Spec.ScheduledTime.Time) {
					t.Errorf("catch-up run %s is %s, want Succeeded under the CronJob's name for its time", tr.Name, tr.Status.Phase)
				}
			}
			// A later pass counts nothing twice.
			w.run(3 * time.Minute)
			if st := w.task.Status; st.MissedRuns != 4 {
				t.Errorf("missedRuns %d later, want still 4", st.MissedRuns)
			}
		})
	}
}

func TestWorld_SkipStartsNoRunPastItsDeadlineAndCountsItMissed(t *testing.T) {
	// Every five minutes; the CronJob controller is down from 12:06:30 to
	// 12:13:30, so the 12:10 fire time is 210 s late when it comes back.
	for _, tt := range []struct {
		policy     platformv1.MissedRunsPolicy
		wantMissed int64
		ran1210    bool
	}{
		// Skip gives the CronJob a 60 s deadline: 12:10 never runs, and
		// the next run the CronJob starts (12:15) accounts for it.
		{platformv1.MissedRunsSkip, 1, false},
		// RunLatest sets none: the CronJob starts 12:10 late.
		{platformv1.MissedRunsRunLatest, 0, true},
	} {
		t.Run(string(tt.policy), func(t *testing.T) {
			task := everyMinute(platformv1.ForbidConcurrent)
			task.Spec.Schedule = "*/5 * * * *"
			task.Spec.MissedRuns = tt.policy
			w := newWorld(t, task)
			w.run(6 * time.Minute) // 12:05 runs
			w.cronJobDown = true
			w.run(7 * time.Minute)
			w.cronJobDown = false
			w.run(8 * time.Minute) // 12:15 and 12:20 run

			ran1210 := false
			for _, tr := range w.runsBy(platformv1.TriggerScheduled) {
				if tr.Spec.ScheduledTime.Format(time.TimeOnly) == "12:10:00" {
					ran1210 = true
				}
			}
			if ran1210 != tt.ran1210 {
				t.Errorf("a run of 12:10: %v, want %v", ran1210, tt.ran1210)
			}
			if st := w.task.Status; st.MissedRuns != tt.wantMissed {
				t.Errorf("missedRuns %d, want %d", st.MissedRuns, tt.wantMissed)
			}
			if got := w.runsBy(platformv1.TriggerCatchUp); len(got) != 0 {
				t.Errorf("%d catch-up runs, want none", len(got))
			}
			if got := len(w.runsBy(platformv1.TriggerScheduled)); got < 3 {
				t.Errorf("%d scheduled runs, want 12:05, 12:15 and 12:20 at least", got)
			}
		})
	}
}

func TestWorld_RetentionKeepsTheLimitsAndNeverRecordsADeletedJobAgain(t *testing.T) {
	task := everyMinute(platformv1.AllowConcurrent)
	task.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](2)
	task.Spec.FailedRunsHistoryLimit = ptr.To[int32](1)
	w := newWorld(t, task)
	w.outcome = func(j *batchv1.Job) (time.Duration, bool) {
		// the runs of every fifth minute fail
		return 20 * time.Second, !strings.HasSuffix(j.Name, "0") && !strings.HasSuffix(j.Name, "5")
	}
	w.run(15 * time.Minute)
	var succeeded, failed int
	for _, tr := range w.runs {
		switch tr.Status.Phase {
		case platformv1.TaskRunSucceeded:
			succeeded++
		case platformv1.TaskRunFailed:
			failed++
		}
	}
	if succeeded > 3 || failed > 2 {
		t.Errorf("%d succeeded and %d failed runs kept, want the limits (2, 1) plus the one that just ended", succeeded, failed)
	}
	if st := w.task.Status; st.TriggerCount != 15 {
		t.Errorf("triggerCount %d, want 15: deleted runs still count, none counts twice", st.TriggerCount)
	}
}

func TestWorld_AManualRunStartsOnceAndRunNowOncePerValue(t *testing.T) {
	w := newWorld(t, testutil.NewScheduleTask("team-a", "report", testutil.WithSchedule("0 0 * * *")))
	tr := w.manual("by-hand", platformv1.TriggerManual, nil)
	w.run(time.Minute)
	if n := w.started[string(tr.UID)]; n != 1 || w.runs[tr.Name].Status.Phase != platformv1.TaskRunSucceeded {
		t.Fatalf("manual run started %d times and is %s; want once, Succeeded", n, w.runs[tr.Name].Status.Phase)
	}

	w.task.Annotations = map[string]string{platformv1.RunNowAnnotation: "2026-12-01T12:02:00Z",
		platformv1.RunNowRequestedByAnnotation: "alice"}
	w.run(time.Minute)
	manual := w.runsBy(platformv1.TriggerManual)
	if len(manual) != 2 {
		t.Fatalf("%d manual runs after run-now, want 2", len(manual))
	}
	now := w.runs[truncateName(w.task.Name, 52)+"-now-"+shortHash("2026-12-01T12:02:00Z")]
	if now == nil || now.Status.Phase != platformv1.TaskRunSucceeded || now.Annotations[platformv1.RequestedByAnnotation] != "alice" {
		t.Fatalf("run-now run %+v; want Succeeded, requested by alice", now)
	}
	if w.task.Status.HandledRequests.RunNow != "2026-12-01T12:02:00Z" {
		t.Errorf("handledRequests.runNow %q", w.task.Status.HandledRequests.RunNow)
	}
	// The same value, even once its run is gone, starts nothing more.
	delete(w.runs, now.Name)
	w.deleteJob(now.Spec.JobRef.Name)
	w.run(time.Minute)
	if got := len(w.runsBy(platformv1.TriggerManual)); got != 1 {
		t.Errorf("%d manual runs after the handled value stayed, want 1", got)
	}
	w.task.Annotations[platformv1.RunNowAnnotation] = "again"
	w.run(time.Minute)
	if got := len(w.runsBy(platformv1.TriggerManual)); got != 2 {
		t.Errorf("%d manual runs after a new value, want 2", got)
	}
}

func TestWorld_FailuresSuspendTheScheduleUntilResumed(t *testing.T) {
	task := everyMinute(platformv1.ForbidConcurrent)
	task.Spec.SuspendAfterFailures = 3
	w := newWorld(t, task)
	w.outcome = slow(10*time.Second, false)
	w.run(6 * time.Minute)

	if st := w.task.Status; st.ConsecutiveFailures != 3 || st.NextScheduleTime != nil ||
		!ptr.Deref(w.cronJob.Spec.Suspend, false) || ptr.Deref(w.task.Spec.Suspend, false) {
		t.Fatalf("consecutiveFailures %d, next %v, CronJob suspended %v; want 3, none, suspended (spec.suspend untouched)",
			st.ConsecutiveFailures, st.NextScheduleTime, w.cronJob.Spec.Suspend)
	}
	if c := meta.FindStatusCondition(w.task.Status.Conditions, platformv1.ConditionReady); c == nil ||
		c.Reason != platformv1.ReasonSuspendedAfterFailures {
		t.Errorf("Ready %+v, want SuspendedAfterFailures", c)
	}
	if got := w.eventsOf(EventSuspendedAfterFailures); len(got) != 1 {
		t.Errorf("SuspendedAfterFailures events %q, want one", got)
	}
	if got := len(w.runsBy(platformv1.TriggerScheduled)); got != 3 {
		t.Errorf("%d scheduled runs, want 3: none while suspended", got)
	}

	w.outcome = slow(10*time.Second, true)
	w.task.Annotations = map[string]string{platformv1.ResumeAnnotation: "1"}
	w.run(3 * time.Minute)
	if st := w.task.Status; st.ConsecutiveFailures != 0 || ptr.Deref(w.cronJob.Spec.Suspend, false) || st.LastResult != platformv1.RunResult(platformv1.TaskRunSucceeded) {
		t.Errorf("after resume: consecutiveFailures %d, CronJob suspended %v, last result %s; want 0, running, Succeeded",
			st.ConsecutiveFailures, w.cronJob.Spec.Suspend, st.LastResult)
	}
	if got := w.eventsOf(EventResumed); len(got) != 1 {
		t.Errorf("Resumed events %q, want one", got)
	}
}

func TestWorld_FreshTurnsFalseWithoutASuccessAndBackWithOne(t *testing.T) {
	task := testutil.NewScheduleTask("team-a", "report", testutil.WithSchedule("*/5 * * * *"))
	task.Spec.StaleAfterSeconds = 360
	w := newWorld(t, task)
	w.outcome = slow(10*time.Second, false)
	w.run(5 * time.Minute)
	if !meta.IsStatusConditionTrue(w.task.Status.Conditions, platformv1.ConditionFresh) {
		t.Fatal("Fresh is not True within the window after creation")
	}
	w.run(3 * time.Minute)
	if c := meta.FindStatusCondition(w.task.Status.Conditions, platformv1.ConditionFresh); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("Fresh %+v after failing past the window, want False", c)
	}
	w.outcome = slow(10*time.Second, true)
	w.run(5 * time.Minute)
	if !meta.IsStatusConditionTrue(w.task.Status.Conditions, platformv1.ConditionFresh) {
		t.Error("Fresh did not turn True with a success")
	}
	if s, f := w.eventsOf(EventStale), w.eventsOf(EventFresh); len(s) != 1 || len(f) != 1 {
		t.Errorf("Stale events %q and Fresh events %q, want one each", s, f)
	}
}

func TestWorld_AJobThatFailsTheProofIsReportedOnceAndNeverRecorded(t *testing.T) {
	// Each Job claims the task's CronJob; only the implant (the task's
	// signature now over a changed pod template, unfinished) is deleted.
	implant := func(_ *world, job *batchv1.Job) { job.Spec.Template.Spec.Containers[0].Image = "evil:latest" }
	for _, tc := range []struct {
		name    string
		forge   func(w *world, job *batchv1.Job)
		deleted bool
	}{
		{name: "made from an implant in the template", forge: implant, deleted: true},
		{name: "an implant's Job that has finished", forge: func(w *world, job *batchv1.Job) {
			implant(w, job)
			testutil.CompleteJob(job, w.now, w.now)
		}},
		{name: "without a signature", forge: func(w *world, job *batchv1.Job) {
			implant(w, job)
			delete(job.Annotations, provenance.SignatureAnnotation)
		}},
		{name: "signed under a key since replaced", forge: func(w *world, job *batchv1.Job) {
			old, err := provenance.NewSigner([]byte("a key the operator held before now"))
			if err != nil {
				t.Fatal(err)
			}
			job.Annotations[provenance.SignatureAnnotation] = old.Sign(w.task.UID, provenance.TemplateHash(&job.Spec.Template))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, testutil.NewScheduleTask("team-a", "report", testutil.WithSchedule("0 0 * * *")))
			w.run(10 * time.Second)
			forged := testutil.JobFromCronJob(w.cronJob, w.now)
			forged.Name = "implant"
			w.createJob(forged)
			tc.forge(w, forged)
			w.run(2 * time.Minute)
			if len(w.runs) != 0 {
				t.Errorf("runs %v recorded from a Job the operator did not sign", w.runs)
			}
			if got := w.eventsOf(EventUnverifiedJob); len(got) != 1 {
				t.Errorf("UnverifiedJob events %q, want one", got)
			}
			if _, kept := w.jobs["implant"]; kept == tc.deleted {
				t.Errorf("Job kept: %v, want %v", kept, !tc.deleted)
			}
		})
	}
}

func TestWorld_AJobOfTheTemplateBeforeAnEditIsRecordedNotDeleted(t *testing.T) {
	w := newWorld(t, testutil.NewScheduleTask("team-a", "report", testutil.WithSchedule("0 0 * * *")))
	w.run(10 * time.Second)
	before := testutil.JobFromCronJob(w.cronJob, w.now)
	before.Name = "report-before-edit"
	w.createJob(before)
	w.task.Spec.Image = "registry.example.com/report:v2"
	w.task.Generation++
	w.run(2 * time.Minute)
	if _, kept := w.jobs[before.Name]; !kept {
		t.Error("the Job of the template before the edit was deleted")
	}
	if got := w.eventsOf(EventUnverifiedJob); len(got) != 0 {
		t.Errorf("UnverifiedJob events %q, want none", got)
	}
	if len(w.runs) != 1 {
		t.Errorf("runs %v, want the Job of the template before the edit recorded", w.runs)
	}
}

func TestWorld_AStartCutShortIsLinkedNotStartedAgain(t *testing.T) {
	w := newWorld(t, testutil.NewScheduleTask("team-a", "report", testutil.WithSchedule("0 0 * * *"),
		testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent)))
	w.outcome = slow(time.Minute, true)
	w.cutShort = true
	tr := w.manual("by-hand", platformv1.TriggerManual, nil)
	w.run(10 * time.Second)
	if w.cutShort {
		t.Fatal("the pass did not start the run")
	}
	got := w.runs[tr.Name]
	if w.started[string(tr.UID)] != 1 || got.Spec.JobRef == nil || got.Status.Phase == platformv1.TaskRunFailed {
		t.Fatalf("after a start cut short: started %d times, jobRef %v, phase %s; want once, linked, not refused",
			w.started[string(tr.UID)], got.Spec.JobRef, got.Status.Phase)
	}
	w.run(time.Minute)
	if got := w.runs[tr.Name]; got.Status.Phase != platformv1.TaskRunSucceeded {
		t.Errorf("run %s, want Succeeded", got.Status.Phase)
	}
}
