// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// failed is a run due at minute m that failed for reason.
func failed(name string, m int, reason string) *platformv1.TaskRun {
	tr := run(name, m, m, platformv1.TaskRunFailed)
	tr.Status.Reason = reason
	return tr
}

func TestFailureStreak_CountsFailuresSinceTheLastSuccessAndResume(t *testing.T) {
	at := func(m int) *metav1.Time {
		t := metav1.NewTime(now.Truncate(time.Hour).Add(time.Duration(m)*time.Minute + 10*time.Second))
		return &t
	}
	tests := []struct {
		name      string
		runs      []*platformv1.TaskRun
		lastOK    *metav1.Time // status.lastSuccessfulTime
		resumedAt *metav1.Time // status.handledRequests.resumedAt
		want      int32
		newest    string
	}{
		{name: "none failed", runs: []*platformv1.TaskRun{run("a", 1, 1, platformv1.TaskRunSucceeded)}, want: 0},
		{name: "three in a row", want: 3, newest: "d", runs: []*platformv1.TaskRun{
			run("a", 1, 1, platformv1.TaskRunSucceeded), failed("b", 2, platformv1.ReasonBackoffLimitExceeded),
			failed("c", 3, platformv1.ReasonDeadlineExceeded), failed("d", 4, platformv1.ReasonBackoffLimitExceeded)}},
		{name: "a success breaks the streak", want: 1, newest: "d", runs: []*platformv1.TaskRun{
			failed("b", 2, platformv1.ReasonBackoffLimitExceeded), run("c", 3, 3, platformv1.TaskRunSucceeded),
			failed("d", 4, platformv1.ReasonBackoffLimitExceeded)}},
		{name: "a success retention deleted still breaks it", lastOK: at(3), want: 1, newest: "d", runs: []*platformv1.TaskRun{
			failed("b", 2, platformv1.ReasonBackoffLimitExceeded), failed("d", 4, platformv1.ReasonBackoffLimitExceeded)}},
		{name: "runs stopped or never started do not count", want: 1, newest: "b", runs: []*platformv1.TaskRun{
			failed("b", 2, platformv1.ReasonBackoffLimitExceeded), failed("c", 3, platformv1.ReasonCancelled),
			failed("d", 4, platformv1.ReasonConcurrencyForbidden), failed("e", 5, platformv1.ReasonTaskCannotRun)}},
		{name: "a resume starts again from zero", resumedAt: at(3), want: 1, newest: "d",
			runs: []*platformv1.TaskRun{failed("b", 2, platformv1.ReasonBackoffLimitExceeded),
				failed("c", 3, platformv1.ReasonBackoffLimitExceeded), failed("d", 4, platformv1.ReasonBackoffLimitExceeded)}},
		{name: "running runs do not count", want: 1, newest: "b", runs: []*platformv1.TaskRun{
			failed("b", 2, platformv1.ReasonBackoffLimitExceeded), run("c", 3, 3, platformv1.TaskRunRunning)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := testutil.NewScheduleTask("ns", "t")
			task.Status.LastSuccessfulTime = tt.lastOK
			n, newest := failureStreak(task, tt.resumedAt, tt.runs)
			if n != tt.want {
				t.Errorf("streak %d, want %d", n, tt.want)
			}
			if got := ""; newest != nil {
				got = newest.Name
				if got != tt.newest {
					t.Errorf("newest failure %q, want %q", got, tt.newest)
				}
			} else if tt.newest != "" {
				t.Errorf("no newest failure, want %q", tt.newest)
			}
		})
	}
}

func TestBuildStatus_SuspendedAfterFailuresIsReadyFalseWithNoNextRun(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t", testutil.WithSchedule("* * * * *"))
	task.Spec.SuspendAfterFailures = 2
	obs := &pass{task: task, failures: 2, suspendedAfterFailures: true, newestFailure: failed("d", 4, platformv1.ReasonBackoffLimitExceeded)}
	st := buildStatus(task, obs, now)
	c := meta.FindStatusCondition(st.Conditions, platformv1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != platformv1.ReasonSuspendedAfterFailures {
		t.Fatalf("Ready = %+v, want False/%s", c, platformv1.ReasonSuspendedAfterFailures)
	}
	for _, want := range []string{"2 runs failed in a row", "the newest d", "kubectl stask resume t"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q does not say %q", c.Message, want)
		}
	}
	if st.ConsecutiveFailures != 2 || st.NextScheduleTime != nil {
		t.Errorf("consecutiveFailures %d, nextScheduleTime %v; want 2 and none", st.ConsecutiveFailures, st.NextScheduleTime)
	}
}

func TestBuildStatus_EffectiveScheduleResolvesH(t *testing.T) {
	task := testutil.NewScheduleTask("team-a", "backup", testutil.WithSchedule("H 2 * * *"))
	st := buildStatus(task, &pass{task: task}, now)
	if st.EffectiveSchedule == "" || strings.Contains(st.EffectiveSchedule, "H") || !strings.HasSuffix(st.EffectiveSchedule, " 2 * * *") {
		t.Fatalf("effectiveSchedule %q, want a concrete minute and hour 2", st.EffectiveSchedule)
	}
	if st.NextScheduleTime == nil || st.NextScheduleTime.Hour() != 2 {
		t.Errorf("nextScheduleTime %v, want at 02:xx", st.NextScheduleTime)
	}
}

func TestSetFreshCondition(t *testing.T) {
	created := metav1.NewTime(now.Add(-2 * time.Hour))
	ok := metav1.NewTime(now.Add(-30 * time.Minute))
	tests := []struct {
		name      string
		stale     int64
		lastOK    *metav1.Time
		want      metav1.ConditionStatus // "" for no condition
		wantIn    time.Duration
		inMessage string
	}{
		{name: "unset: no condition", stale: 0, lastOK: &ok, want: ""},
		{name: "succeeded within", stale: 3600, lastOK: &ok, want: metav1.ConditionTrue, wantIn: 30 * time.Minute,
			inMessage: "The last run succeeded at " + ok.UTC().Format(time.RFC3339)},
		{name: "succeeded too long ago", stale: 600, lastOK: &ok, want: metav1.ConditionFalse,
			inMessage: "longer ago than staleAfterSeconds (600)"},
		{name: "never succeeded: counted from creation", stale: 3600, want: metav1.ConditionFalse,
			inMessage: "No run has succeeded since the task was created at " + created.UTC().Format(time.RFC3339)},
		{name: "never succeeded, young task", stale: 3 * 3600, want: metav1.ConditionTrue, wantIn: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := testutil.NewScheduleTask("ns", "t")
			task.CreationTimestamp = created
			task.Spec.StaleAfterSeconds = tt.stale
			conds := []metav1.Condition{{Type: platformv1.ConditionFresh, Status: metav1.ConditionUnknown}}
			in := setFreshCondition(&conds, task, tt.lastOK, now)
			c := meta.FindStatusCondition(conds, platformv1.ConditionFresh)
			switch {
			case tt.want == "" && c != nil:
				t.Fatalf("condition %+v left on a task without staleAfterSeconds", c)
			case tt.want == "":
				return
			case c == nil || c.Status != tt.want:
				t.Fatalf("Fresh = %+v, want %s", c, tt.want)
			}
			if in != tt.wantIn {
				t.Errorf("turns in %v, want %v", in, tt.wantIn)
			}
			if !strings.Contains(c.Message, tt.inMessage) {
				t.Errorf("message %q does not say %q", c.Message, tt.inMessage)
			}
		})
	}
}
