// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// cronJobJobName matches every name the CronJob controller gives a Job:
// <cronjob>-<minutes since the epoch>, written out in decimal.
var cronJobJobName = regexp.MustCompile(`^.+-[0-9]+$`)

func TestManualJobName_NeverACronJobJobName(t *testing.T) {
	manual := func(name, uid string) *platformv1.TaskRun {
		return &platformv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)}}
	}
	tests := []struct {
		name string
		run  *platformv1.TaskRun
	}{
		{"squatting the next scheduled Job", manual("nightly-29934076", "8d2c1a0e-0000-4000-8000-000000000001")},
		{"all digits", manual("29934076", "8d2c1a0e-0000-4000-8000-000000000002")},
		{"plain", manual("nightly-manual-x7k2p", "8d2c1a0e-0000-4000-8000-000000000003")},
		{"run-now run", manual("nightly-now-0a1b2c3d", "8d2c1a0e-0000-4000-8000-000000000004")},
		{"63 characters", manual(strings.Repeat("a", 54)+"-12345678", "8d2c1a0e-0000-4000-8000-000000000005")},
		{"253 characters", manual(strings.Repeat("b", 243)+"-123456789", "8d2c1a0e-0000-4000-8000-000000000006")},
		{"a dash at the cut", manual(strings.Repeat("c", 52)+"-"+strings.Repeat("9", 20), "8d2c1a0e-0000-4000-8000-000000000007")},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := manualJobName(tt.run)
			if cronJobJobName.MatchString(got) {
				t.Errorf("manualJobName(%q) = %q, a name the CronJob controller may give", tt.run.Name, got)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("manualJobName(%q) = %q: not a DNS label (a Job's pods carry its name as a label): %v", tt.run.Name, got, errs)
			}
			if again := manualJobName(tt.run.DeepCopy()); again != got {
				t.Errorf("not deterministic: %q then %q", got, again)
			}
			other := tt.run.DeepCopy()
			other.UID += "-recreated"
			if manualJobName(other) == got {
				t.Errorf("a run of the same name made again gets the same Job name %q", got)
			}
			if prev, ok := seen[got]; ok {
				t.Errorf("%q and %q share the Job name %q", prev, tt.run.Name, got)
			}
			seen[got] = tt.run.Name
		})
	}
}

func TestRunNumber_OnlyPlausibleNumbersCount(t *testing.T) {
	tests := []struct {
		value string
		want  int64
	}{
		{"", 0},
		{"1", 1},
		{"42", 42},
		{"0", 0},
		{"-3", 0},
		{"x", 0},
		{fmt.Sprint(platformv1.MaxRunNumber), platformv1.MaxRunNumber},
		{fmt.Sprint(platformv1.MaxRunNumber + 1), 0},
		{"9223372036854775807", 0},
		{"9223372036854775808", 0},
	}
	for _, tt := range tests {
		tr := &platformv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{platformv1.RunNumberAnnotation: tt.value}}}
		if got := tr.RunNumber(); got != tt.want {
			t.Errorf("RunNumber() of %q = %d, want %d", tt.value, got, tt.want)
		}
	}
	// A finished run cached without its annotations carries the number in
	// its status; where both are at hand, the annotation counts.
	slim := &platformv1.TaskRun{Status: platformv1.TaskRunStatus{RunNumber: 7}}
	if got := slim.RunNumber(); got != 7 {
		t.Errorf("RunNumber() of a run with status.runNumber 7 only = %d, want 7", got)
	}
	slim.Annotations = map[string]string{platformv1.RunNumberAnnotation: "8"}
	if got := slim.RunNumber(); got != 8 {
		t.Errorf("RunNumber() with annotation 8 and status 7 = %d, want 8", got)
	}
}

func TestSetRunsAdoptedCondition(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t")
	task.Generation = 4
	names := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("r%02d", n-i))
		}
		return out
	}
	tests := []struct {
		name string
		rs   []string
		want []metav1.Condition
	}{
		{"all adopted", nil, []metav1.Condition{{Type: platformv1.ConditionRunsAdopted, Status: metav1.ConditionTrue,
			Reason: platformv1.ReasonAllRunsAdopted, Message: "Every TaskRun naming this task is the task's", ObservedGeneration: 4}}},
		{"two foreign", []string{"b", "a"}, []metav1.Condition{{Type: platformv1.ConditionRunsAdopted,
			Status: metav1.ConditionFalse, Reason: platformv1.ReasonForeignController, ObservedGeneration: 4,
			Message: "TaskRuns naming this task are controlled by another object and cannot be adopted: a, b"}}},
		{"many foreign: ten named", names(12), []metav1.Condition{{Type: platformv1.ConditionRunsAdopted,
			Status: metav1.ConditionFalse, Reason: platformv1.ReasonForeignController, ObservedGeneration: 4,
			Message: "TaskRuns naming this task are controlled by another object and cannot be adopted: " +
				"r01, r02, r03, r04, r05, r06, r07, r08, r09, r10 and 2 more"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var conds []metav1.Condition
			setRunsAdoptedCondition(&conds, task, tt.rs, now)
			if d := cmp.Diff(tt.want, conds, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); d != "" {
				t.Errorf("conditions (-want +got):\n%s", d)
			}
		})
	}
}

func TestFiredFor_OnlyAJobTheScheduleStartedIsScheduled(t *testing.T) {
	fire := time.Date(2026, 12, 4, 10, 5, 0, 0, time.UTC) // a fire time of */5
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(fire.Add(d)) }
	named := func(m time.Time) string { return fmt.Sprintf("nightly-%d", m.Unix()/60) }
	tests := []struct {
		name     string
		schedule string
		zone     *string
		deadline *int64
		skip     bool
		job      string
		created  metav1.Time
		want     bool
	}{
		{name: "started at its fire time", job: named(fire), created: at(2 * time.Second), want: true},
		{name: "started late, before the next fire time", job: named(fire), created: at(4 * time.Minute), want: true},
		{name: "made ahead of its fire time", job: named(fire), created: at(-time.Minute)},
		{name: "made at or after the next fire time", job: named(fire), created: at(5 * time.Minute)},
		{name: "within the starting deadline", deadline: ptr.To[int64](30), job: named(fire), created: at(30 * time.Second), want: true},
		{name: "past the starting deadline", deadline: ptr.To[int64](30), job: named(fire), created: at(40 * time.Second)},
		{name: "a Skip task's deadline", skip: true, job: named(fire), created: at(2 * time.Minute)},
		{name: "a minute the schedule never fires at", job: named(fire.Add(time.Minute)), created: at(70 * time.Second)},
		{name: "a manual run's Job", job: "nightly-m1a2b3c4d", created: at(time.Second)},
		{name: "another CronJob's name", job: fmt.Sprintf("nightly2-%d", fire.Unix()/60), created: at(time.Second)},
		{name: "in the schedule's time zone", schedule: "5 19 * * *", zone: ptr.To("Asia/Tokyo"),
			job: named(fire), created: at(time.Second), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := testutil.NewScheduleTask("ns", "nightly")
			task.Spec.StartingDeadlineSeconds = tt.deadline
			if tt.skip {
				task.Spec.MissedRuns = platformv1.MissedRunsSkip
			}
			if tt.schedule == "" {
				tt.schedule = "*/5 * * * *"
			}
			cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly"},
				Spec: batchv1.CronJobSpec{Schedule: tt.schedule, TimeZone: tt.zone}}
			job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: tt.job, CreationTimestamp: tt.created}}
			got := firedFor(task, cj, job)
			switch {
			case tt.want && (got == nil || !got.Equal(&metav1.Time{Time: fire})):
				t.Errorf("Job %s created at %s: fired for %v, want %s", tt.job, tt.created.UTC(), got, fire)
			case !tt.want && got != nil:
				t.Errorf("Job %s created at %s: fired for %s, want no scheduled run", tt.job, tt.created.UTC(), got.UTC())
			}
		})
	}
}
