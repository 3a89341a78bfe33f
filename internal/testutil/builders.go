// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package testutil holds object builders and helpers shared by the unit,
// integration and e2e tests, so every layer describes objects the same way.
package testutil

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// ScheduleTaskOption changes a ScheduleTask built by NewScheduleTask.
type ScheduleTaskOption func(*platformv1.ScheduleTask)

// NewScheduleTask returns a valid ScheduleTask that runs busybox every minute,
// changed by opts. Only fields a user would write are set: defaults are left
// to the API server.
func NewScheduleTask(namespace, name string, opts ...ScheduleTaskOption) *platformv1.ScheduleTask {
	st := &platformv1.ScheduleTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: platformv1.ScheduleTaskSpec{
			Schedule:        "* * * * *",
			Image:           "busybox:1.36",
			ContainerFields: platformv1.ContainerFields{Command: []string{"sh", "-c", "echo hello"}},
		},
	}
	for _, o := range opts {
		o(st)
	}
	return st
}

// WithSchedule sets spec.schedule.
func WithSchedule(schedule string) ScheduleTaskOption {
	return func(st *platformv1.ScheduleTask) { st.Spec.Schedule = schedule }
}

// WithConcurrencyPolicy sets spec.concurrencyPolicy.
func WithConcurrencyPolicy(p platformv1.ConcurrencyPolicy) ScheduleTaskOption {
	return func(st *platformv1.ScheduleTask) { st.Spec.ConcurrencyPolicy = p }
}

// WithBackoffLimit sets spec.backoffLimit.
func WithBackoffLimit(n int32) ScheduleTaskOption {
	return func(st *platformv1.ScheduleTask) { st.Spec.BackoffLimit = &n }
}

// WithSuspend sets spec.suspend.
func WithSuspend(suspend bool) ScheduleTaskOption {
	return func(st *platformv1.ScheduleTask) { st.Spec.Suspend = &suspend }
}

// NewManualTaskRun returns a TaskRun asking for a manual run of the task.
func NewManualTaskRun(namespace, name, task string) *platformv1.TaskRun {
	return &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: platformv1.TaskRunSpec{
			ScheduleTaskName: task,
			Trigger:          platformv1.TriggerManual,
		},
	}
}

// RestrictedAdmitted reports whether the operator's admission treats
// namespace as enforcing the restricted Pod Security Standard: it creates a
// ScheduleTask there in a server-side dry run, which the mutating webhook
// sees and nothing stores, and looks for the restricted defaults in what
// comes back. The webhook reads a namespace's labels from the manager's
// cache, as the API server's Pod Security admission does, so a test that
// labels a namespace waits for this before it creates what must be
// restricted.
func RestrictedAdmitted(ctx context.Context, c client.Client, namespace string) (bool, error) {
	probe := NewScheduleTask(namespace, "restricted-probe")
	if err := c.Create(ctx, probe, client.DryRunAll); err != nil {
		return false, err
	}
	sc := probe.Spec.SecurityContext
	return sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot, nil
}
