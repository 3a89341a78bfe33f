// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

func newHistoryCommand(o *options) *cobra.Command {
	var limit int
	printFlags := core.NewPrintFlags()
	cmd := tasks.On(o.Options, help.Command("history"), printFlags.Validate, func(ctx context.Context, c client.WithWatch, st *platformv1.ScheduleTask) error {
		runs, err := taskRunsOf(ctx, c, st.Namespace, st.Name)
		if err != nil {
			return err
		}
		// The summary is of every run kept, whatever --limit shows.
		summary := Summarize(runs)
		if limit > 0 && len(runs) > limit {
			runs = runs[:limit]
		}
		if !printFlags.Human() {
			return printFlags.Print(o.Out(), o.Scheme, &platformv1.TaskRunList{Items: runs})
		}
		if len(runs) == 0 {
			fmt.Fprintf(o.IOStreams.ErrOut, "No runs of scheduletask %q in namespace %q yet.\n", st.Name, st.Namespace)
			return nil
		}
		if err := o.PrintTable(runTable(runs, o.Now()), printFlags, false, palette); err != nil {
			return err
		}
		fmt.Fprintf(o.Out(), "\n%s\n", summary)
		return nil
	})
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many runs (0: all kept)")
	printFlags.AddFlags(cmd)
	return cmd
}

// taskRunsOf lists a task's runs, newest first.
func taskRunsOf(ctx context.Context, c client.Client, ns, task string) ([]platformv1.TaskRun, error) {
	// Every run carries its task's label: the operator's from the start, a
	// user's from the admission webhook's defaulting.
	var list platformv1.TaskRunList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{platformv1.ScheduleTaskLabel: task}); err != nil {
		return nil, err
	}
	runs := list.Items
	slices.SortFunc(runs, func(a, b platformv1.TaskRun) int { return b.DueTime().Compare(a.DueTime()) })
	return runs, nil
}

// runColumns are the columns of history and of get's recent runs. Priority
// 1 marks the columns that only -o wide shows.
var runColumns = []metav1.TableColumnDefinition{
	{Name: "Run", Type: "string", Format: "name"},
	{Name: "Trigger", Type: "string", Description: "Scheduled, Manual, Backfill or CatchUp."},
	{Name: "Phase", Type: "string"},
	{Name: "Start", Type: "string", Description: "When the run's Job started."},
	{Name: "Duration", Type: "string", Description: "How long the run took, or has been running."},
	{Name: "Reason", Type: "string"},
	{Name: "Exit Code", Type: "string", Description: "The exit code of the last failed container."},
	{Name: "Attempts", Type: "integer", Priority: 1, Description: "Pods tried."},
	{Name: "Pod", Type: "string", Priority: 1, Description: "The run's last pod, for kubectl logs and describe."},
}

// runTable is the table of runs.
func runTable(runs []platformv1.TaskRun, now time.Time) *metav1.Table {
	return core.ObjectTable(runColumns, runs, func(tr *platformv1.TaskRun) []any {
		start, dur := "-", "-"
		if tr.Status.StartTime != nil {
			start = core.Relative(tr.Status.StartTime.Time, now)
			dur = duration.HumanDuration(RunDuration(tr, now))
		}
		exit := "-"
		if tr.Status.ExitCode != nil {
			exit = fmt.Sprint(*tr.Status.ExitCode)
		}
		return []any{tr.Name, string(tr.Spec.Trigger), core.OrDash(string(tr.Status.Phase)), start, dur,
			core.OrDash(tr.Status.Reason), exit, tr.Status.Attempts, core.OrDash(tr.Status.PodName)}
	})
}
