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

package stask

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/schedule"
)

func newListCommand(o *options) *cobra.Command {
	var all bool
	var selector string
	printFlags := core.NewPrintFlags()
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List ScheduleTasks with their last and next runs",
		Example: `  kubectl stask list
  kubectl stask list -A -l team=data
  kubectl stask list -o yaml
  kubectl stask list -o jsonpath='{.items[*].metadata.name}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := printFlags.Validate(); err != nil {
				return err
			}
			ctx := cmd.Context()
			c, ns, err := o.Connect()
			if err != nil {
				return err
			}
			// The label selector is the tasks'; runs are found by the task
			// they name, so they are listed with the namespace only.
			var nsOpts []client.ListOption
			if !all {
				nsOpts = append(nsOpts, client.InNamespace(ns))
			}
			opts := slices.Clone(nsOpts)
			if selector != "" {
				sel, err := labels.Parse(selector)
				if err != nil {
					return fmt.Errorf("invalid selector %q: %w", selector, err)
				}
				opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
			}
			var tasks platformv1.ScheduleTaskList
			if err := c.List(ctx, &tasks, opts...); err != nil {
				return explain(err, "", ns)
			}
			if !printFlags.Human() {
				return printFlags.Print(o.Out(), o.Scheme, &tasks)
			}
			if len(tasks.Items) == 0 {
				core.NoResources(o.IOStreams.ErrOut, ns, all)
				return nil
			}
			runs, err := runsByTask(ctx, c, nsOpts)
			if err != nil {
				return err
			}
			return o.PrintTable(taskTable(tasks.Items, runs, o.Now()), printFlags, all, palette)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list tasks in every namespace")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector, e.g. team=data")
	printFlags.AddFlags(cmd)
	return cmd
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

// taskColumns are the columns of list and get -o wide. Priority 1 marks
// the columns that only -o wide shows.
var taskColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name"},
	{Name: "Schedule", Type: "string", Description: "The cron expression, and the one its CronJob runs when it spreads with H."},
	{Name: "Timezone", Type: "string", Description: "The zone the schedule is read in."},
	{Name: "Suspended", Type: "string", Description: "true, false, or failures: suspended by the operator after suspendAfterFailures failed runs in a row."},
	{Name: "Active", Type: "integer", Description: "Runs in progress."},
	{Name: "Last Run", Type: "string", Description: "When a run was last started."},
	{Name: "Last Result", Type: "string", Description: "The result of the newest finished run."},
	{Name: "Next Run", Type: "string", Description: "When the schedule fires next, relative and in the task's zone."},
	{Name: "Success", Type: "string", Description: "Succeeded of the finished runs kept."},
	{Name: "Fresh", Type: "string", Description: "Whether a run succeeded within staleAfterSeconds (the Fresh condition); - without it."},
	{Name: "Image", Type: "string", Priority: 1},
	{Name: "Policy", Type: "string", Priority: 1, Description: "The concurrency policy."},
}

// taskTable is the table of tasks; runs are keyed by namespace/task.
func taskTable(tasks []platformv1.ScheduleTask, runs map[string][]platformv1.TaskRun, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: taskColumns}
	for i := range tasks {
		st := &tasks[i]
		last := "-"
		if st.Status.LastScheduleTime != nil {
			last = core.Relative(st.Status.LastScheduleTime.Time, now)
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells: []any{
				st.Name, scheduleCell(st), core.OrDash(ptr.Deref(st.Spec.TimeZone, "")), suspendedCell(st),
				len(st.Status.ActiveRuns), last, core.OrDash(string(st.Status.LastResult)), nextRun(st, now),
				success(runs[st.Namespace+"/"+st.Name]), freshCell(st), st.Spec.Image, string(st.Spec.ConcurrencyPolicy),
			},
			// The printer reads the namespace of -A from the object.
			Object: runtime.RawExtension{Object: st},
		})
	}
	return t
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
