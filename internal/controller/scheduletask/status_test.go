// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

var now = time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)

// run builds a TaskRun due at minute m of now's hour with the given phase.
func run(name string, number int, m int, phase platformv1.TaskRunPhase) *platformv1.TaskRun {
	due := metav1.NewTime(now.Truncate(time.Hour).Add(time.Duration(m) * time.Minute))
	tr := &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{platformv1.RunNumberAnnotation: strconv.Itoa(number)}},
		Spec:       platformv1.TaskRunSpec{ScheduledTime: &due, JobRef: &platformv1.JobRef{Name: name, UID: types.UID("u-" + name)}},
		Status:     platformv1.TaskRunStatus{Phase: phase},
	}
	if phase == platformv1.TaskRunSucceeded || phase == platformv1.TaskRunFailed {
		end := metav1.NewTime(due.Add(10 * time.Second))
		tr.Status.CompletionTime = &end
	}
	return tr
}

func TestBuildStatus_FromRuns(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t", testutil.WithSchedule("*/10 * * * *"))
	task.Generation = 3
	task.Status.TriggerCount = 2 // older runs were deleted by retention
	obs := &pass{task: task,
		cronJob: &batchv1.CronJob{},
		runs: []*platformv1.TaskRun{
			run("a", 3, 1, platformv1.TaskRunSucceeded),
			run("b", 4, 2, platformv1.TaskRunFailed),
			run("c", 5, 3, platformv1.TaskRunRunning),
		},
	}
	st := buildStatus(task, obs, now)

	if st.TriggerCount != 5 {
		t.Errorf("triggerCount = %d, want 5 (highest run number)", st.TriggerCount)
	}
	if !st.Active || len(st.ActiveRuns) != 1 || st.ActiveRuns[0] != "c" {
		t.Errorf("active = %v %v, want true [c]", st.Active, st.ActiveRuns)
	}
	if st.LastTaskRunName != "c" || st.LastResult != platformv1.RunFailed {
		t.Errorf("last run %q result %q, want c and Failed (newest finished)", st.LastTaskRunName, st.LastResult)
	}
	if want := now.Truncate(time.Hour).Add(3 * time.Minute); !st.LastScheduleTime.Time.Equal(want) {
		t.Errorf("lastScheduleTime = %v, want %v", st.LastScheduleTime, want)
	}
	if want := now.Truncate(time.Hour).Add(time.Minute + 10*time.Second); !st.LastSuccessfulTime.Time.Equal(want) {
		t.Errorf("lastSuccessfulTime = %v, want %v", st.LastSuccessfulTime, want)
	}
	if want := now.Truncate(time.Hour).Add(10 * time.Minute); !st.NextScheduleTime.Time.Equal(want) {
		t.Errorf("nextScheduleTime = %v, want %v", st.NextScheduleTime, want)
	}
	if st.ObservedGeneration != 0 {
		t.Errorf("buildStatus set observedGeneration %d; only a successful write does", st.ObservedGeneration)
	}
}

func TestSetReadyCondition(t *testing.T) {
	tests := []struct {
		name       string
		suspend    bool
		err        error
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{"in sync", false, nil, metav1.ConditionTrue, platformv1.ReasonCronJobReady},
		{"suspended", true, nil, metav1.ConditionTrue, platformv1.ReasonSuspended},
		{"error wins over suspended", true, errors.New("boom"), metav1.ConditionFalse, platformv1.ReasonCronJobError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := testutil.NewScheduleTask("ns", "t", testutil.WithSuspend(tt.suspend))
			task.Generation = 7
			var conds []metav1.Condition
			setReadyCondition(&conds, task, &pass{task: task, cronJobErr: tt.err}, now)
			c := meta.FindStatusCondition(conds, platformv1.ConditionReady)
			if c == nil || c.Status != tt.wantStatus || c.Reason != tt.wantReason || c.ObservedGeneration != 7 {
				t.Fatalf("Ready = %+v, want %s/%s at generation 7", c, tt.wantStatus, tt.wantReason)
			}
		})
	}
}

func TestSetReadyCondition_KeepsTransitionTimeWhileStatusHolds(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t")
	var conds []metav1.Condition
	setReadyCondition(&conds, task, &pass{task: task}, now)
	setReadyCondition(&conds, task, &pass{task: task}, now.Add(time.Hour))
	if got := conds[0].LastTransitionTime.Time; !got.Equal(now) {
		t.Errorf("lastTransitionTime moved to %v without a transition", got)
	}
}

func TestExpiredRuns_KeepsNewestPerResultAndNeverRunningOnes(t *testing.T) {
	runs := []*platformv1.TaskRun{
		run("s1", 1, 1, platformv1.TaskRunSucceeded),
		run("f1", 2, 2, platformv1.TaskRunFailed),
		run("s2", 3, 3, platformv1.TaskRunSucceeded),
		run("r1", 4, 4, platformv1.TaskRunRunning),
		run("f2", 5, 5, platformv1.TaskRunFailed),
		run("s3", 6, 6, platformv1.TaskRunSucceeded),
	}
	got := map[string]bool{}
	for _, tr := range expiredRuns(runs, 2, 1) {
		got[tr.Name] = true
	}
	want := map[string]bool{"s1": true, "f1": true}
	if len(got) != len(want) || !got["s1"] || !got["f1"] {
		t.Errorf("expired = %v, want %v", got, want)
	}
	if n := len(expiredRuns(runs, 0, 0)); n != 5 {
		t.Errorf("with limits 0, %d runs expired, want all 5 finished ones", n)
	}
}

func TestNames_AreDeterministicAndValid(t *testing.T) {
	long := &platformv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "a-very-long-task-run-name-that-goes-on-and-on-well-past-sixty-three-characters"}}
	n1, n2 := manualJobName(long), manualJobName(long.DeepCopy())
	if n1 != n2 || len(n1) > 63 {
		t.Errorf("manualJobName = %q / %q: want equal and at most 63 characters", n1, n2)
	}
	// A short name is kept, with the suffix no scheduled Job's name has
	// (see TestManualJobName_NeverACronJobJobName).
	short := &platformv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "run-1"}}
	if got := manualJobName(short); !strings.HasPrefix(got, "run-1-m") || len(got) != len("run-1-m")+8 {
		t.Errorf("manualJobName(run-1) = %q, want run-1-m<8 hex digits>", got)
	}
	if got := truncateName("abc-def", 4); got != "abc" {
		t.Errorf("truncateName left a trailing dash: %q", got)
	}
}

func TestUntilNextScheduleMoves_WaitsForTheJobWhenOneIsComingElseWakesJustAfterTheFireTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 30, 0, time.UTC)
	in30s := &metav1.Time{Time: now.Add(30 * time.Second)}
	allow := testutil.NewScheduleTask("ns", "t", testutil.WithSchedule("* * * * *"))
	forbid := testutil.NewScheduleTask("ns", "t", testutil.WithSchedule("* * * * *"),
		testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent))
	tests := []struct {
		name       string
		task       *platformv1.ScheduleTask
		st         platformv1.ScheduleTaskStatus
		hasCronJob bool
		want       time.Duration
	}{
		{"no next run (suspended)", allow, platformv1.ScheduleTaskStatus{}, true, 0},
		{"a Job is coming: the Job wakes the task, the timer is a safety net", allow,
			platformv1.ScheduleTaskStatus{NextScheduleTime: in30s}, true, 30*time.Second + cronJobFireGrace},
		{"a Job is coming even with a run active, unless Forbid", allow,
			platformv1.ScheduleTaskStatus{NextScheduleTime: in30s, Active: true}, true, 30*time.Second + cronJobFireGrace},
		{"Forbid with nothing active: a Job is coming", forbid,
			platformv1.ScheduleTaskStatus{NextScheduleTime: in30s}, true, 30*time.Second + cronJobFireGrace},
		{"Forbid with a run active: no Job, woken just after", forbid,
			platformv1.ScheduleTaskStatus{NextScheduleTime: in30s, Active: true}, true, 31 * time.Second},
		{"no CronJob: no Job, woken just after", allow,
			platformv1.ScheduleTaskStatus{NextScheduleTime: in30s}, false, 31 * time.Second},
		{"a fire time already past (a late timer)", forbid,
			platformv1.ScheduleTaskStatus{NextScheduleTime: &metav1.Time{Time: now.Add(-time.Second)}, Active: true}, true, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := untilNextScheduleMoves(&tt.st, tt.task, tt.hasCronJob, now); got != tt.want {
				t.Errorf("untilNextScheduleMoves() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestBuildStatus_NextScheduleTimeIsNeverInThePast(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t", testutil.WithSchedule("*/5 * * * *"))
	now := time.Date(2026, 11, 30, 10, 5, 0, 0, time.UTC) // exactly a fire time
	st := buildStatus(task, &pass{task: task}, now)
	if want := now.Add(5 * time.Minute); st.NextScheduleTime == nil || !st.NextScheduleTime.Time.Equal(want) {
		t.Errorf("nextScheduleTime = %v at a fire time, want the following one %s", st.NextScheduleTime, want)
	}
}

func TestTaskRunChangesTask_PassesWhatTheStatusReads(t *testing.T) {
	var r Reconciler
	p := r.taskRunChangesTask()
	update := func(o, n *platformv1.TaskRun) bool {
		return p.Update(event.UpdateEvent{ObjectOld: o, ObjectNew: n})
	}
	pending := run("a", 1, 1, platformv1.TaskRunPending)
	if update(pending, run("a", 1, 1, platformv1.TaskRunRunning)) {
		t.Errorf("Pending to Running of a scheduled run woke the task; its status does not change")
	}
	if !update(run("a", 1, 1, platformv1.TaskRunRunning), run("a", 1, 1, platformv1.TaskRunSucceeded)) {
		t.Errorf("a run finishing did not wake its task")
	}
	manual, started := run("m", 2, 1, platformv1.TaskRunPending), run("m", 2, 1, platformv1.TaskRunRunning)
	manual.Spec.ScheduledTime, started.Spec.ScheduledTime = nil, nil
	start := metav1.NewTime(now)
	started.Status.StartTime = &start
	if !update(manual, started) {
		t.Errorf("a manual run starting did not wake its task; it dates lastScheduleTime")
	}
	stopped := pending.DeepCopy()
	stopped.Annotations[platformv1.StopReasonAnnotation] = "x"
	if !update(pending, stopped) {
		t.Errorf("a run asked to stop did not wake its task")
	}
	pending.Name, stopped.Name = "recorded-here", "made-elsewhere"
	r.recordedRuns.Remember(client.ObjectKeyFromObject(pending), struct{}{})
	if p.Create(event.CreateEvent{Object: pending}) {
		t.Errorf("the creation of a run this manager recorded from a Job woke the task that recorded it")
	}
	if !p.Create(event.CreateEvent{Object: stopped}) {
		t.Errorf("the creation of a run someone else made did not wake its task")
	}
}

func TestCronJobTimesChanged_PassesOnlyTheTimesTheStatusReads(t *testing.T) {
	p := cronJobTimesChanged()
	old := &batchv1.CronJob{}
	active := old.DeepCopy()
	active.Status.Active = append(active.Status.Active, corev1.ObjectReference{Name: "j"})
	if p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: active}) {
		t.Errorf("a change of the active list woke the task")
	}
	done := active.DeepCopy()
	at := metav1.NewTime(now)
	done.Status.LastSuccessfulTime = &at
	if !p.Update(event.UpdateEvent{ObjectOld: active, ObjectNew: done}) {
		t.Errorf("a new lastSuccessfulTime did not wake the task")
	}
	fired := old.DeepCopy()
	fired.Status.LastScheduleTime = &at
	if !p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: fired}) {
		t.Errorf("a new lastScheduleTime did not wake the task")
	}
}
