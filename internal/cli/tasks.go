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
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/schedule"
)

func newListCommand(o *options) *cobra.Command {
	var all bool
	var selector, output string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List ScheduleTasks with their last and next runs",
		Example: `  kubectl stask list
  kubectl stask list -A -l team=data
  kubectl stask list -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := o.newClient()
			if err != nil {
				return err
			}
			opts := []client.ListOption{}
			ns := ""
			if !all {
				if ns, err = o.namespace(); err != nil {
					return err
				}
				opts = append(opts, client.InNamespace(ns))
			}
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
			switch output {
			case "json", "yaml", "name":
				return printObjects(o.out(), output, &tasks)
			case "", "wide":
			default:
				return fmt.Errorf("unknown output format %q: use json, yaml, name or wide", output)
			}
			runs, err := runsByTask(ctx, c, opts)
			if err != nil {
				return err
			}
			var table strings.Builder
			if err := printTaskTable(&table, tasks.Items, runs, all, output == "wide", o.now()); err != nil {
				return err
			}
			o.writeTable(table.String())
			return nil
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list tasks in every namespace")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector, e.g. team=data")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml, name or wide")
	return cmd
}

// runsByTask lists the TaskRuns where the tasks are, keyed by namespace/task.
func runsByTask(ctx context.Context, c client.Client, opts []client.ListOption) (map[string][]platformv1.TaskRun, error) {
	var runs platformv1.TaskRunList
	// The label selector is the tasks'; runs are found by the task they name.
	var nsOpts []client.ListOption
	for _, o := range opts {
		if _, ok := o.(client.InNamespace); ok {
			nsOpts = append(nsOpts, o)
		}
	}
	if err := c.List(ctx, &runs, nsOpts...); err != nil {
		return nil, err
	}
	out := map[string][]platformv1.TaskRun{}
	for _, tr := range runs.Items {
		k := tr.Namespace + "/" + tr.Spec.ScheduleTaskName
		out[k] = append(out[k], tr)
	}
	return out, nil
}

// printTaskTable writes the list table.
func printTaskTable(w io.Writer, tasks []platformv1.ScheduleTask, runs map[string][]platformv1.TaskRun, withNamespace, wide bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	if withNamespace {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprint(tw, "NAME\tSCHEDULE\tTIMEZONE\tSUSPENDED\tACTIVE\tLAST RUN\tLAST RESULT\tNEXT RUN\tSUCCESS")
	if wide {
		fmt.Fprint(tw, "\tIMAGE\tPOLICY")
	}
	fmt.Fprintln(tw)
	for i := range tasks {
		st := &tasks[i]
		if withNamespace {
			fmt.Fprintf(tw, "%s\t", st.Namespace)
		}
		zone := ptr.Deref(st.Spec.TimeZone, "")
		last := "-"
		if st.Status.LastScheduleTime != nil {
			last = Relative(st.Status.LastScheduleTime.Time, now)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%d\t%s\t%s\t%s\t%s",
			st.Name, st.Spec.Schedule, orDash(zone), ptr.Deref(st.Spec.Suspend, false), len(st.Status.ActiveRuns),
			last, orDash(string(st.Status.LastResult)), nextRun(st, now), success(runs[st.Namespace+"/"+st.Name]))
		if wide {
			fmt.Fprintf(tw, "\t%s\t%s", st.Spec.Image, st.Spec.ConcurrencyPolicy)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// nextRun is "in 3m (15:00 CET)": relative, and absolute in the task's zone.
func nextRun(st *platformv1.ScheduleTask, now time.Time) string {
	if ptr.Deref(st.Spec.Suspend, false) {
		return "-"
	}
	s, err := schedule.Parse(st.Spec.Schedule, ptr.Deref(st.Spec.TimeZone, ""))
	if err != nil {
		return "invalid schedule"
	}
	next := s.Next(now)
	if next.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%s (%s)", Relative(next, now), next.Format("2006-01-02 15:04 MST"))
}

// success is "9/10": succeeded of the finished runs kept.
func success(runs []platformv1.TaskRun) string {
	s := Summarize(runs)
	if s.Finished == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", s.Succeeded, s.Finished)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printObjects writes a list as JSON, YAML or names, as kubectl -o does.
func printObjects(w io.Writer, format string, list *platformv1.ScheduleTaskList) error {
	list.APIVersion, list.Kind = "v1", "List"
	for i := range list.Items {
		list.Items[i].APIVersion = platformv1.GroupVersion.String()
		list.Items[i].Kind = "ScheduleTask"
	}
	switch format {
	case "json":
		return (&printers.JSONPrinter{}).PrintObj(list, w)
	case "yaml":
		return (&printers.YAMLPrinter{}).PrintObj(list, w)
	default:
		for _, st := range list.Items {
			fmt.Fprintf(w, "scheduletask.platform.example.com/%s\n", st.Name)
		}
		return nil
	}
}

func newSuspendCommand(o *options, suspend bool) *cobra.Command {
	use, short, verb := "suspend NAME", "Stop a task's scheduled runs (runs in progress go on)", "suspended"
	if !suspend {
		use, short, verb = "resume NAME", "Let a suspended task run on its schedule again", "resumed"
	}
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeTaskNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := o.newClient()
			if err != nil {
				return err
			}
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			st, err := o.getTask(ctx, c, ns, args[0])
			if err != nil {
				return err
			}
			patch := client.MergeFrom(st.DeepCopy())
			st.Spec.Suspend = ptr.To(suspend)
			if err := c.Patch(ctx, st, patch); err != nil {
				return err
			}
			fmt.Fprintf(o.out(), "scheduletask.platform.example.com/%s %s\n", st.Name, verb)
			return nil
		},
	}
}

// completeTaskNames completes task names from the cluster.
func (o *options) completeTaskNames(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := o.newClient()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	ns, err := o.namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var tasks platformv1.ScheduleTaskList
	if err := c.List(cmd.Context(), &tasks, client.InNamespace(ns)); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names := make([]string, 0, len(tasks.Items))
	for _, st := range tasks.Items {
		names = append(names, st.Name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
