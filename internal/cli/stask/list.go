// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/schedule"
)

// taskRows is the tasks' table, as tasks.Rows: a task's runs are those
// that name it, listed in the namespaces alone (the selector is the
// tasks'), or by the task's label when there is one task.
func taskRows(ctx context.Context, o *core.Options, c client.Client, list *platformv1.ScheduleTaskList, namespaces []client.ListOption) (*metav1.Table, error) {
	var runs map[string][]platformv1.TaskRun
	if len(list.Items) == 1 {
		st := &list.Items[0]
		one, err := taskRunsOf(ctx, c, st.Namespace, st.Name)
		if err != nil {
			return nil, err
		}
		runs = map[string][]platformv1.TaskRun{st.Namespace + "/" + st.Name: one}
	} else {
		var err error
		if runs, err = runsByTask(ctx, c, namespaces); err != nil {
			return nil, err
		}
	}
	return taskTable(list.Items, runs, o.Now()), nil
}

// runsByTask lists the TaskRuns where the tasks are, keyed by namespace/task.
func runsByTask(ctx context.Context, c client.Client, opts []client.ListOption) (map[string][]platformv1.TaskRun, error) {
	var runs platformv1.TaskRunList
	if err := c.List(ctx, &runs, opts...); err != nil {
		return nil, err
	}
	out := map[string][]platformv1.TaskRun{}
	for _, tr := range runs.Items {
		k := tr.Namespace + "/" + tr.Spec.ScheduleTaskName
		out[k] = append(out[k], tr)
	}
	return out, nil
}

// taskColumns are the columns of list and get -o wide, as the list help page
// documents them (core.Help.Columns).
var taskColumns = help.Columns("list")

// taskTable is the table of tasks; runs are keyed by namespace/task.
func taskTable(tasks []platformv1.ScheduleTask, runs map[string][]platformv1.TaskRun, now time.Time) *metav1.Table {
	return core.ObjectTable(taskColumns, tasks, func(st *platformv1.ScheduleTask) []any {
		last := "-"
		if st.Status.LastScheduleTime != nil {
			last = core.Relative(st.Status.LastScheduleTime.Time, now)
		}
		return []any{
			st.Name, scheduleCell(st), core.OrDash(ptr.Deref(st.Spec.TimeZone, "")), suspendedCell(st),
			len(st.Status.ActiveRuns), last, core.OrDash(string(st.Status.LastResult)), nextRun(st, now),
			success(runs[st.Namespace+"/"+st.Name]), freshCell(st), st.Spec.Image, string(st.Spec.ConcurrencyPolicy),
		}
	})
}

// effectiveSchedule is the schedule the task's CronJob runs: its H fields
// resolved as the operator resolves them (the same function, so the two
// agree without reading the status).
func effectiveSchedule(st *platformv1.ScheduleTask) (string, error) {
	return schedule.Effective(st.Spec.Schedule, st.Namespace, st.Name)
}

// scheduleCell is the task's schedule, "H 2 * * * = 17 2 * * *" when it
// spreads with H.
func scheduleCell(st *platformv1.ScheduleTask) string {
	if e, err := effectiveSchedule(st); err == nil && e != st.Spec.Schedule {
		return st.Spec.Schedule + " = " + e
	}
	return st.Spec.Schedule
}

// suspendedCell is true, false, or failures when the operator suspended the
// task after repeated failures.
func suspendedCell(st *platformv1.ScheduleTask) string {
	switch {
	case ptr.Deref(st.Spec.Suspend, false):
		return "true"
	case st.SuspendedAfterFailures():
		return "failures"
	}
	return "false"
}

// freshCell is the Fresh condition's status, "-" for a task without
// staleAfterSeconds.
func freshCell(st *platformv1.ScheduleTask) string {
	if c := meta.FindStatusCondition(st.Status.Conditions, platformv1.ConditionFresh); c != nil && st.Spec.StaleAfterSeconds > 0 {
		return string(c.Status)
	}
	return "-"
}

// nextRun is "in 3m (15:00 CET)": relative, and absolute in the task's zone.
func nextRun(st *platformv1.ScheduleTask, now time.Time) string {
	if ptr.Deref(st.Spec.Suspend, false) || st.SuspendedAfterFailures() {
		return "-"
	}
	s, err := parseEffective(st)
	if err != nil {
		return "invalid schedule"
	}
	next := s.Next(now)
	if next.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%s (%s)", core.Relative(next, now), next.Format("2006-01-02 15:04 MST"))
}

// success is "9/10": succeeded of the finished runs kept.
func success(runs []platformv1.TaskRun) string {
	s := Summarize(runs)
	if s.Finished == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", s.Succeeded, s.Finished)
}
