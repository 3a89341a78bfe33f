// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

func TestObserveMissedRuns_CountsEachGapOnceAndOnlyRealMisses(t *testing.T) {
	// The fire times are minutes of now's hour (as run's); the pass is an
	// hour later.
	minute := func(m int) time.Time { return now.Truncate(time.Hour).Add(time.Duration(m) * time.Minute) }
	later := now.Add(time.Hour)
	mt := func(m int) *metav1.Time { return &metav1.Time{Time: minute(m)} }
	ready := func(reason string) []metav1.Condition {
		return []metav1.Condition{{Type: platformv1.ConditionReady, Status: metav1.ConditionTrue, Reason: reason}}
	}
	tests := []struct {
		name string
		// checked is the stored missedRunsCheckedTime, latest the CronJob's
		// lastScheduleTime.
		checked, latest *metav1.Time
		runs            []*platformv1.TaskRun
		jobs            []*batchv1.Job
		edit            func(*platformv1.ScheduleTask)
		want            []int // the minutes missed
		wantChecked     time.Time
	}{
		{name: "no gap", checked: mt(5), latest: mt(6), wantChecked: minute(6)},
		{name: "three fire times down, the latest ran late", checked: mt(1), latest: mt(5),
			want: []int{2, 3, 4}, wantChecked: minute(5)},
		{name: "counted already: the same gap is not counted twice", checked: mt(5), latest: mt(5), wantChecked: minute(5)},
		{name: "fire times with a run, recorded or only a Job, are not missed", checked: mt(1), latest: mt(5),
			runs:        []*platformv1.TaskRun{run("t-backfill-3", 1, 3, platformv1.TaskRunSucceeded)},
			jobs:        []*batchv1.Job{{ObjectMeta: metav1.ObjectMeta{Name: catchUpName(testutil.NewScheduleTask("ns", "t"), minute(4))}}},
			want:        []int{2},
			wantChecked: minute(5)},
		{name: "Forbid: fire times during an active run are skipped on purpose", checked: mt(1), latest: mt(6),
			edit: func(st *platformv1.ScheduleTask) { st.Spec.ConcurrencyPolicy = platformv1.ForbidConcurrent },
			runs: func() []*platformv1.TaskRun {
				long := run("t-long", 1, 1, platformv1.TaskRunSucceeded)
				long.Status.CompletionTime = mt(3) // active through minutes 2 and 3
				return []*platformv1.TaskRun{long}
			}(),
			want: []int{4, 5}, wantChecked: minute(6)},
		{name: "suspended: nothing is missed and nothing moves", checked: mt(1), latest: mt(5),
			edit:        func(st *platformv1.ScheduleTask) { st.Spec.Suspend = ptr.To(true) },
			wantChecked: minute(1)},
		{name: "resumed: fire times while suspended are not missed", checked: mt(1), latest: mt(5),
			edit:        func(st *platformv1.ScheduleTask) { st.Status.Conditions = ready(platformv1.ReasonSuspended) },
			wantChecked: later.Truncate(time.Minute)},
		{name: "schedule changed: counted from the change", checked: mt(1), latest: mt(5),
			edit:        func(st *platformv1.ScheduleTask) { st.Status.EffectiveSchedule = "0 * * * *" },
			wantChecked: later.Truncate(time.Minute)},
		{name: "a new task starts counting now", latest: mt(5), wantChecked: later.Truncate(time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := testutil.NewScheduleTask("ns", "t")
			task.Generation = 2
			task.Status.ObservedGeneration = 2
			task.Status.EffectiveSchedule = task.Spec.Schedule
			task.Status.Conditions = ready(platformv1.ReasonCronJobReady)
			task.Status.MissedRunsCheckedTime = tt.checked
			task.Status.MissedRuns = 7
			if tt.edit != nil {
				tt.edit(task)
			}
			obs := &pass{task: task, now: later, obs: &observation{
				cronJob: &batchv1.CronJob{Status: batchv1.CronJobStatus{LastScheduleTime: tt.latest}},
				jobs:    tt.jobs,
			}}
			missed, more := observeMissedRuns(obs, tt.runs)
			var got []int
			for _, m := range missed {
				got = append(got, int(m.Sub(minute(0))/time.Minute))
			}
			if !slices.Equal(got, tt.want) || more {
				t.Errorf("missed minutes %v (more %v), want %v", got, more, tt.want)
			}
			if obs.missed == nil || obs.missed.checked == nil || !obs.missed.checked.Time.Equal(tt.wantChecked) {
				t.Errorf("checked %v, want %v", obs.missed, tt.wantChecked)
			}
			if want := int64(7 + len(tt.want)); obs.missed.total != want {
				t.Errorf("total %d, want %d", obs.missed.total, want)
			}
			if len(tt.want) > 0 && !obs.missed.last.Time.Equal(minute(tt.want[len(tt.want)-1])) {
				t.Errorf("last missed %v, want minute %d", obs.missed.last, tt.want[len(tt.want)-1])
			}
		})
	}
}

func TestObserveMissedRuns_StopsCountingAtTheScanBound(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t")
	task.Status.EffectiveSchedule = task.Spec.Schedule
	start := now.Add(-200 * 24 * time.Hour).Truncate(time.Minute)
	task.Status.MissedRunsCheckedTime = &metav1.Time{Time: start}
	obs := &pass{task: task, now: now, obs: &observation{
		cronJob: &batchv1.CronJob{Status: batchv1.CronJobStatus{LastScheduleTime: &metav1.Time{Time: now.Truncate(time.Minute)}}}}}
	missed, more := observeMissedRuns(obs, nil)
	if !more || len(missed) != maxMissedScan {
		t.Errorf("%d missed, more %v; want %d and more", len(missed), more, maxMissedScan)
	}
	if !obs.missed.checked.Time.Equal(now.Truncate(time.Minute)) {
		t.Errorf("checked %v: the gap must be closed even when it was too long to count", obs.missed.checked)
	}
	if msg := missedMessage(missed, more, now, 0, platformv1.MissedRunsSkip); !strings.Contains(msg, "over 50000 fire times") {
		t.Errorf("message %q does not say the count is a floor", msg)
	}
}

func TestMissedMessage_NamesTheTimesTheNextRunAndWhatThePolicyDoes(t *testing.T) {
	times := []time.Time{now.Add(-3 * time.Minute), now.Add(-2 * time.Minute)}
	for policy, want := range map[platformv1.MissedRunsPolicy]string{
		platformv1.MissedRunsRunAll:    "Starting 2 of them as CatchUp runs",
		platformv1.MissedRunsSkip:      "They are skipped (missedRuns Skip)",
		platformv1.MissedRunsRunLatest: "They are skipped (missedRuns RunLatest)",
	} {
		msg := missedMessage(times, false, now, 2, policy)
		for _, part := range []string{want, times[0].UTC().Format(time.RFC3339), "the one of " + now.UTC().Format(time.RFC3339)} {
			if !strings.Contains(msg, part) {
				t.Errorf("%s: %q does not say %q", policy, msg, part)
			}
		}
	}
}

func TestRunJobName_CatchUpRunsTakeTheCronJobsName(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "nightly")
	fire := time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC)
	tr := &platformv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: "nightly-29936280"},
		Spec: platformv1.TaskRunSpec{Trigger: platformv1.TriggerCatchUp, ScheduledTime: &metav1.Time{Time: fire}}}
	// What the CronJob controller names the Job of that fire time.
	want := "nightly-" + "29936280"
	if fire.Unix()/60 != 29936280 {
		t.Fatalf("test's own arithmetic: %d minutes", fire.Unix()/60)
	}
	if got := runJobName(task, tr); got != want {
		t.Errorf("catch-up Job %q, want %q", got, want)
	}
	tr.Spec.Trigger = platformv1.TriggerBackfill
	if got := runJobName(task, tr); !strings.Contains(got, "-m") {
		t.Errorf("backfill Job %q, want a manual run's name", got)
	}
}
