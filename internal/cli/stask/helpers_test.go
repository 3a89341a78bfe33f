// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core/clitest"
	"github.com/example/platform-operator/internal/testutil"
)

// now is the time of every test; the schedules below fire at fixed times
// after it.
var now = clitest.Now

func at(d time.Duration) *metav1.Time { return clitest.At(d) }

// cluster is what the command tests read: two tasks in team with three
// runs and an event, and a task in another namespace.
func cluster() []client.Object {
	dataCheck := testutil.NewScheduleTask("team", "data-check", testutil.WithSchedule("0 */2 * * *"),
		testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent))
	dataCheck.Spec.Command = []string{"sh", "-c", "true"}
	dataCheck.Status = platformv1.ScheduleTaskStatus{
		LastScheduleTime: at(-81 * time.Second), LastResult: platformv1.RunSucceeded, TriggerCount: 2,
		Conditions: []metav1.Condition{{Type: platformv1.ConditionReady, Status: metav1.ConditionTrue,
			Reason: platformv1.ReasonCronJobReady, Message: "CronJob data-check is up to date", LastTransitionTime: *at(-time.Hour)}},
	}
	heartbeat := testutil.NewScheduleTask("team", "heartbeat", testutil.WithConcurrencyPolicy(platformv1.AllowConcurrent))
	heartbeat.Spec.TimeZone = ptr.To("Etc/UTC")
	heartbeat.Status = platformv1.ScheduleTaskStatus{LastScheduleTime: at(-11 * time.Second), ActiveRuns: []string{"heartbeat-1"}}
	elsewhere := testutil.NewScheduleTask("other", "elsewhere", testutil.WithSuspend(true))

	run := func(task, name string, due time.Duration, status platformv1.TaskRunStatus) *platformv1.TaskRun {
		return &platformv1.TaskRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Labels: map[string]string{platformv1.ScheduleTaskLabel: task}},
			Spec:       platformv1.TaskRunSpec{ScheduleTaskName: task, Trigger: platformv1.TriggerScheduled, ScheduledTime: at(due)},
			Status:     status,
		}
	}
	return []client.Object{
		dataCheck, heartbeat, elsewhere,
		run("data-check", "data-check-1", -10*time.Minute, platformv1.TaskRunStatus{
			Phase: platformv1.TaskRunFailed, StartTime: at(-10 * time.Minute), CompletionTime: at(-9 * time.Minute),
			Attempts: 1, Reason: platformv1.ReasonBackoffLimitExceeded, ExitCode: ptr.To[int32](3), PodName: "data-check-1-x7k2p"}),
		run("data-check", "data-check-2", -3*time.Minute, platformv1.TaskRunStatus{
			Phase: platformv1.TaskRunSucceeded, StartTime: at(-3 * time.Minute), CompletionTime: at(-3*time.Minute + 2*time.Second),
			Attempts: 1, Reason: platformv1.ReasonCompleted, PodName: "data-check-2-q9z4m"}),
		run("heartbeat", "heartbeat-1", -5*time.Second, platformv1.TaskRunStatus{
			Phase: platformv1.TaskRunRunning, StartTime: at(-5 * time.Second), Attempts: 1, PodName: "heartbeat-1-abcde"}),
		&eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "data-check.1"},
			Regarding:  corev1.ObjectReference{Kind: "ScheduleTask", Name: "data-check", Namespace: "team"},
			Reason:     "RunFailed", Type: corev1.EventTypeWarning, Note: "Run data-check-1 failed", EventTime: metav1.NewMicroTime(now.Add(-9 * time.Minute)),
		},
	}
}

// newClient is a fake cluster holding objs, with funcs in front of it.
func newClient(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) client.WithWatch {
	t.Helper()
	scheme, err := Plugin.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return clitest.NewClient(t, scheme, funcs, objs)
}

// execute runs the plugin in-process against c, in namespace team at now,
// and returns its standard output and error.
func execute(t *testing.T, c client.WithWatch, stdin string, args ...string) (string, string, error) {
	t.Helper()
	r := clitest.Execute(t, Plugin, c, stdin, args...)
	return r.Out, r.ErrOut, r.Err
}
