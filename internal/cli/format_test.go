/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package cli

import (
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
)

func TestRelative(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now, "now"},
		{now.Add(3 * time.Minute), "in 3m"},
		{now.Add(-2 * time.Hour), "2h ago"},
		{now.Add(-(2*time.Hour + 5*time.Minute)), "2h5m ago"},
		{now.Add(45 * time.Second), "in 45s"},
		{now.Add(-(3*24*time.Hour + 4*time.Hour)), "3d4h ago"},
		{now.Add(10*time.Minute + 30*time.Second), "in 10m30s"},
	} {
		if got := Relative(tt.t, now); got != tt.want {
			t.Errorf("Relative(%v) = %q, want %q", tt.t.Sub(now), got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(phase platformv1.TaskRunPhase, secs int) platformv1.TaskRun {
		s, e := metav1.NewTime(start), metav1.NewTime(start.Add(time.Duration(secs)*time.Second))
		return platformv1.TaskRun{Status: platformv1.TaskRunStatus{Phase: phase, StartTime: &s, CompletionTime: &e}}
	}
	runs := []platformv1.TaskRun{
		run(platformv1.TaskRunSucceeded, 10), run(platformv1.TaskRunSucceeded, 30),
		run(platformv1.TaskRunFailed, 20), run(platformv1.TaskRunRunning, 999),
	}
	s := Summarize(runs)
	if s.Finished != 3 || s.Succeeded != 2 || s.P50 != 20*time.Second || s.Max != 30*time.Second {
		t.Errorf("Summarize = %+v", s)
	}
	if got, want := s.String(), "2/3 succeeded (67%), p50 20s, max 30s"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := Summarize(nil).String(); got != "no finished runs" {
		t.Errorf("empty summary = %q", got)
	}
}

func TestDescribeTask_ShowsSpecConditionsNextRunsRunsAndEvents(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	st := &platformv1.ScheduleTask{}
	st.Name, st.Namespace = "data-check", "team"
	st.Spec = platformv1.ScheduleTaskSpec{Schedule: "0 */2 * * *", Image: "busybox:1.36", Command: []string{"sh", "-c", "true"},
		ConcurrencyPolicy: platformv1.ForbidConcurrent}
	st.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "True", Reason: "CronJobReady", Message: "ok", LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
	start, end := metav1.NewTime(now.Add(-10*time.Minute)), metav1.NewTime(now.Add(-9*time.Minute))
	code := int32(3)
	runs := []platformv1.TaskRun{{
		ObjectMeta: metav1.ObjectMeta{Name: "data-check-1"},
		Spec:       platformv1.TaskRunSpec{Trigger: platformv1.TriggerScheduled},
		Status: platformv1.TaskRunStatus{Phase: platformv1.TaskRunFailed, StartTime: &start, CompletionTime: &end,
			Reason: "BackoffLimitExceeded", ExitCode: &code},
	}}
	events := []eventsv1.Event{{Regarding: corev1.ObjectReference{Kind: "ScheduleTask", Name: "data-check"},
		Reason: "RunFailed", Type: "Warning", Note: "Run data-check-1 failed", EventTime: metav1.NewMicroTime(now.Add(-9 * time.Minute))}}
	var b strings.Builder
	if err := describeTask(&b, st, runs, events, now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Schedule:     0 */2 * * * (-)", "Command:      sh -c true", "Concurrency:  Forbid",
		"Ready=True  CronJobReady: ok (1h ago)",
		"2026-11-29T14:00:00Z  (in 2h)", "2026-11-29T22:00:00Z  (in 10h)",
		"data-check-1", "BackoffLimitExceeded", "   3\n", "0/1 succeeded",
		"9m ago   Warning  RunFailed        Run data-check-1 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestColorize_PaintsResultsWithoutMovingColumns(t *testing.T) {
	table := "RUN   PHASE       REASON\na     Succeeded   Completed\nb     Failed      BackoffLimitExceeded\n"
	got := colorize(table)
	if !strings.Contains(got, green+"Succeeded"+reset) || !strings.Contains(got, red+"Failed"+reset) {
		t.Errorf("not coloured: %q", got)
	}
	strip := strings.NewReplacer(green, "", red, "", reset, "")
	if strip.Replace(got) != table {
		t.Errorf("colouring changed the text: %q", strip.Replace(got))
	}
	t.Setenv("NO_COLOR", "1")
	if useColor(os.Stdout) {
		t.Errorf("NO_COLOR is set, yet colour is on")
	}
}
