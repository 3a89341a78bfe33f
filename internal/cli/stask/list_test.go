// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/schedule"
	"github.com/example/platform-operator/internal/testutil"
)

func TestTaskTable_ShowsSpreadSchedulesAutoSuspensionAndFreshness(t *testing.T) {
	spread := testutil.NewScheduleTask("team", "backup", testutil.WithSchedule("H 2 * * *"))
	spread.Spec.StaleAfterSeconds = 3600
	spread.Spec.SuspendAfterFailures = 2
	spread.Status.ConsecutiveFailures = 2
	spread.Status.Conditions = []metav1.Condition{
		{Type: platformv1.ConditionReady, Status: metav1.ConditionFalse, Reason: platformv1.ReasonSuspendedAfterFailures},
		{Type: platformv1.ConditionFresh, Status: metav1.ConditionFalse, Reason: platformv1.ReasonStale},
	}
	effective, err := schedule.Effective("H 2 * * *", "team", "backup")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := scheduleCell(spread), "H 2 * * * = "+effective; got != want {
		t.Errorf("schedule cell %q, want %q", got, want)
	}
	if got := suspendedCell(spread); got != "failures" {
		t.Errorf("suspended cell %q, want failures", got)
	}
	if got := freshCell(spread); got != "False" {
		t.Errorf("fresh cell %q, want False", got)
	}
	if got := nextRun(spread, now); got != "-" {
		t.Errorf("next run %q of a task suspended after failures, want -", got)
	}

	var b strings.Builder
	if err := describeTask(&b, spread, nil, nil, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Schedule:     H 2 * * * = " + effective,
		"Failures:     2 in a row (suspends after 2)",
		"Fresh:        False (stale after 60m without a success)",
		"none: suspended after 2 failed runs in a row; `kubectl stask resume backup` resumes it",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("get does not show %q:\n%s", want, b.String())
		}
	}
}

func TestMissedCell_SaysHowManyWhenAndThePolicy(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	last := metav1.NewTime(now.Add(-2 * time.Hour))
	tests := []struct {
		spec   platformv1.ScheduleTaskSpec
		status platformv1.ScheduleTaskStatus
		want   string
	}{
		{want: "0 (RunLatest)"},
		{spec: platformv1.ScheduleTaskSpec{MissedRuns: platformv1.MissedRunsSkip}, want: "0 (Skip)"},
		{spec: platformv1.ScheduleTaskSpec{MissedRuns: platformv1.MissedRunsRunAll},
			status: platformv1.ScheduleTaskStatus{MissedRuns: 3, LastMissedTime: &last}, want: "3, the last 120m ago (RunAll, at most 10)"},
		{spec: platformv1.ScheduleTaskSpec{MissedRuns: platformv1.MissedRunsRunAll, MaxMissedRuns: 50}, want: "0 (RunAll, at most 50)"},
	}
	for _, tt := range tests {
		st := &platformv1.ScheduleTask{Spec: tt.spec, Status: tt.status}
		if got := missedCell(st, now); got != tt.want {
			t.Errorf("missedCell(%+v, %+v) = %q, want %q", tt.spec.MissedRuns, tt.status.MissedRuns, got, tt.want)
		}
	}
}
