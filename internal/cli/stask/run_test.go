// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/testutil"
)

// createRunAs is a fake API server that names a created run
// data-check-manual-1 and gives it status, as if the operator had already
// run it, so run --wait sees the outcome when its watch starts.
func createRunAs(status platformv1.TaskRunStatus) interceptor.Funcs {
	return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if tr, ok := obj.(*platformv1.TaskRun); ok {
			tr.Name = tr.GenerateName + "1"
			tr.Status = status
		}
		return c.Create(ctx, obj, opts...)
	}}
}

func TestRun_WaitExitsWithTheRunsOutcome(t *testing.T) {
	for _, tt := range []struct {
		name     string
		status   platformv1.TaskRunStatus
		wantOut  string
		wantCode int
		wantErr  string
	}{
		{
			name:   "succeeded",
			status: platformv1.TaskRunStatus{Phase: platformv1.TaskRunSucceeded, Duration: "2s"},
			wantOut: "taskrun.platform.example.com/data-check-manual-1 created\n" +
				"data-check-manual-1 Succeeded\n" +
				"data-check-manual-1 succeeded after 2s\n",
		},
		{
			name: "failed",
			status: platformv1.TaskRunStatus{Phase: platformv1.TaskRunFailed, Reason: platformv1.ReasonBackoffLimitExceeded,
				ExitCode: ptr.To[int32](3), Message: "Job has reached the specified backoff limit"},
			wantOut: "taskrun.platform.example.com/data-check-manual-1 created\n" +
				"data-check-manual-1 Failed\n",
			wantCode: exitFailed,
			wantErr:  "data-check-manual-1 failed: BackoffLimitExceeded, exit code 3: Job has reached the specified backoff limit",
		},
		{
			// The operator has not seen the run yet: no phase to show.
			name:     "not yet seen by the operator at the timeout",
			status:   platformv1.TaskRunStatus{},
			wantOut:  "taskrun.platform.example.com/data-check-manual-1 created\n",
			wantCode: exitTimedOut,
			wantErr:  "data-check-manual-1 still - after 300ms",
		},
		{
			name:   "still running at the timeout",
			status: platformv1.TaskRunStatus{Phase: platformv1.TaskRunRunning},
			wantOut: "taskrun.platform.example.com/data-check-manual-1 created\n" +
				"data-check-manual-1 Running\n",
			wantCode: exitTimedOut,
			wantErr:  "data-check-manual-1 still Running after 300ms",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := execute(t, newClient(t, createRunAs(tt.status), cluster()...), "", "run", "data-check", "--wait", "--timeout", "300ms")
			if diff := cmp.Diff(tt.wantOut, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			code, msg := 0, ""
			if exit, ok := errors.AsType[*core.ExitError](err); ok {
				code, msg = exit.Code, exit.Error()
			} else if err != nil {
				t.Fatalf("err = %v, want an ExitError or nil", err)
			}
			if code != tt.wantCode || msg != tt.wantErr {
				t.Errorf("exit %d %q, want %d %q", code, msg, tt.wantCode, tt.wantErr)
			}
		})
	}
}

func TestFollowRun_AVersionWithoutPhaseIsNoStepBack(t *testing.T) {
	var out strings.Builder
	progress := core.NewProgress(&out, "r", false, clocktesting.NewFakePassiveClock(time.Now()))
	follow := followRun(progress)
	for _, phase := range []platformv1.TaskRunPhase{platformv1.TaskRunPending, "", platformv1.TaskRunPending,
		platformv1.TaskRunRunning, platformv1.TaskRunSucceeded} {
		done, err := follow(&platformv1.TaskRun{Status: platformv1.TaskRunStatus{Phase: phase}})
		if err != nil || done != (phase == platformv1.TaskRunSucceeded) {
			t.Fatalf("phase %q: done = %v, %v", phase, done, err)
		}
	}
	progress.Stop()
	if want := "r Pending\nr Running\nr Succeeded\n"; out.String() != want {
		t.Errorf("progress = %q, want %q", out.String(), want)
	}
}

func TestRun_CreatesAManualRunAndPrintsItAsAsked(t *testing.T) {
	c := newClient(t, createRunAs(platformv1.TaskRunStatus{}), cluster()...)
	out, _, err := execute(t, c, "", "run", "data-check", "-o", "name")
	if err != nil || out != "taskrun.platform.example.com/data-check-manual-1\n" {
		t.Fatalf("run -o name = %q, %v", out, err)
	}
	tr := &platformv1.TaskRun{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: "data-check-manual-1"}, tr); err != nil {
		t.Fatal(err)
	}
	want := platformv1.TaskRunSpec{ScheduleTaskName: "data-check", Trigger: platformv1.TriggerManual}
	if diff := cmp.Diff(want, tr.Spec); diff != "" {
		t.Errorf("the run's spec (-want +got):\n%s", diff)
	}
	if _, _, err := execute(t, c, "", "run", "ghost"); err == nil || err.Error() != `scheduletask "ghost" not found in namespace "team"` {
		t.Errorf("run of a missing task: %v", err)
	}
}

func TestSuspendAndResume_PatchTheTaskAndSaySo(t *testing.T) {
	c := newClient(t, interceptor.Funcs{}, cluster()...)
	for _, step := range []struct {
		verb, done string
		want       bool
	}{{"suspend", "suspended", true}, {"resume", "resumed", false}} {
		out, _, err := execute(t, c, "", step.verb, "heartbeat")
		if want := "scheduletask.platform.example.com/heartbeat " + step.done + "\n"; err != nil || out != want {
			t.Errorf("%s = %q, %v; want %q", step.verb, out, err, want)
		}
		st := &platformv1.ScheduleTask{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: "heartbeat"}, st); err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(st.Spec.Suspend, !step.want); got != step.want {
			t.Errorf("after %s, spec.suspend = %t", step.verb, got)
		}
	}
}

func TestSummarize_CountsFinishedRunsOnly(t *testing.T) {
	run := func(phase platformv1.TaskRunPhase, secs int) platformv1.TaskRun {
		return platformv1.TaskRun{Status: platformv1.TaskRunStatus{Phase: phase, StartTime: at(0), CompletionTime: at(time.Duration(secs) * time.Second)}}
	}
	for _, tt := range []struct {
		name string
		runs []platformv1.TaskRun
		want Summary
		line string
	}{
		{"none", nil, Summary{}, "no finished runs"},
		{"running only", []platformv1.TaskRun{run(platformv1.TaskRunRunning, 5)}, Summary{}, "no finished runs"},
		{
			"mixed",
			[]platformv1.TaskRun{run(platformv1.TaskRunSucceeded, 10), run(platformv1.TaskRunSucceeded, 30),
				run(platformv1.TaskRunFailed, 200), run(platformv1.TaskRunRunning, 999)},
			Summary{Finished: 3, Succeeded: 2, P50: 30 * time.Second, Max: 200 * time.Second},
			"2/3 succeeded (67%), p50 30s, max 3m20s",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.runs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
			if got.String() != tt.line {
				t.Errorf("String() = %q, want %q", got.String(), tt.line)
			}
		})
	}
}

func TestResume_AfterFailuresStartsTheStreakAgainWithoutTouchingOtherFields(t *testing.T) {
	flaky := testutil.NewScheduleTask("team", "flaky")
	flaky.Spec.SuspendAfterFailures = 3
	flaky.Status.ConsecutiveFailures = 3
	flaky.Status.Conditions = []metav1.Condition{{Type: platformv1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: platformv1.ReasonSuspendedAfterFailures}}
	c := newClient(t, interceptor.Funcs{}, append(cluster(), flaky)...)
	for _, name := range []string{"flaky", "heartbeat"} {
		if out, _, err := execute(t, c, "", "resume", name); err != nil || !strings.HasSuffix(out, " resumed\n") {
			t.Fatalf("resume %s = %q, %v", name, out, err)
		}
	}
	get := func(name string) *platformv1.ScheduleTask {
		st := &platformv1.ScheduleTask{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: name}, st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if got, want := get("flaky").Annotations[platformv1.ResumeAnnotation], now.Format(time.RFC3339Nano); got != want {
		t.Errorf("flaky's %s = %q, want a new value %q", platformv1.ResumeAnnotation, got, want)
	}
	if v, ok := get("heartbeat").Annotations[platformv1.ResumeAnnotation]; ok {
		t.Errorf("heartbeat had no failures, yet got %s=%q", platformv1.ResumeAnnotation, v)
	}
}

func TestRun_ParametersGoOnTheTaskRun(t *testing.T) {
	c := newClient(t, createRunAs(platformv1.TaskRunStatus{}), cluster()...)
	out, _, err := execute(t, c, "", "run", "data-check", "--env", "DRY_RUN=1", "--env", "A=x", "--env", "DRY_RUN=2",
		"--", "--table", "orders")
	if err != nil || out != "taskrun.platform.example.com/data-check-manual-1 created\n" {
		t.Fatalf("run = %q, %v", out, err)
	}
	tr := &platformv1.TaskRun{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: "data-check-manual-1"}, tr); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"--table", "orders"}, tr.Spec.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	want := []corev1.EnvVar{{Name: "DRY_RUN", Value: "2"}, {Name: "A", Value: "x"}}
	if diff := cmp.Diff(want, tr.Spec.Env); diff != "" {
		t.Errorf("env, a later value of a name replacing the earlier (-want +got):\n%s", diff)
	}
	for _, bad := range [][]string{{"run", "data-check", "extra"}, {"run", "data-check", "--env", "NOVALUE"}} {
		if _, _, err := execute(t, c, "", bad...); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}
