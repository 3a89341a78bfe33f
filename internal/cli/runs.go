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
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/schedule"
)

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

// printRunTable writes runs as a table.
func printRunTable(w io.Writer, runs []platformv1.TaskRun, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "RUN\tTRIGGER\tPHASE\tSTART\tDURATION\tREASON\tEXIT CODE")
	for i := range runs {
		tr := &runs[i]
		start, dur := "-", "-"
		if tr.Status.StartTime != nil {
			start = Relative(tr.Status.StartTime.Time, now)
			dur = Short(RunDuration(tr, now))
		}
		exit := "-"
		if tr.Status.ExitCode != nil {
			exit = fmt.Sprint(*tr.Status.ExitCode)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", tr.Name, tr.Spec.Trigger, orDash(string(tr.Status.Phase)),
			start, dur, orDash(tr.Status.Reason), exit)
	}
	return tw.Flush()
}

func newHistoryCommand(o *options) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:               "history NAME",
		Short:             "List a task's runs, newest first, with a summary",
		Example:           `  kubectl stask history data-check --limit 20`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeTaskNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, ns, err := o.connect()
			if err != nil {
				return err
			}
			if _, err := o.getTask(ctx, c, ns, args[0]); err != nil {
				return err
			}
			runs, err := taskRunsOf(ctx, c, ns, args[0])
			if err != nil {
				return err
			}
			summary := Summarize(runs)
			if limit > 0 && len(runs) > limit {
				runs = runs[:limit]
			}
			var table strings.Builder
			if err := printRunTable(&table, runs, o.now()); err != nil {
				return err
			}
			o.writeTable(table.String())
			fmt.Fprintf(o.out(), "\n%s\n", summary)
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many runs (0: all kept)")
	return cmd
}

func newGetCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:               "get NAME",
		Short:             "Show a task: its spec in brief, conditions, next runs, recent runs and events",
		Example:           `  kubectl stask get data-check`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeTaskNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, ns, err := o.connect()
			if err != nil {
				return err
			}
			st, err := o.getTask(ctx, c, ns, args[0])
			if err != nil {
				return err
			}
			runs, err := taskRunsOf(ctx, c, ns, st.Name)
			if err != nil {
				return err
			}
			var events eventsv1.EventList
			if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil && !apierrors.IsForbidden(err) {
				return err
			}
			return describeTask(o.out(), st, runs, events.Items, o.now())
		},
	}
}

// describeTask writes what `get` shows.
func describeTask(w io.Writer, st *platformv1.ScheduleTask, runs []platformv1.TaskRun, events []eventsv1.Event, now time.Time) error {
	s := &st.Spec
	fmt.Fprintf(w, "Name:         %s\nNamespace:    %s\n", st.Name, st.Namespace)
	fmt.Fprintf(w, "Schedule:     %s (%s)\n", s.Schedule, orDash(ptr.Deref(s.TimeZone, "")))
	fmt.Fprintf(w, "Image:        %s\n", s.Image)
	if len(s.Command)+len(s.Args) > 0 {
		fmt.Fprintf(w, "Command:      %s\n", strings.Join(append(slices.Clone(s.Command), s.Args...), " "))
	}
	fmt.Fprintf(w, "Concurrency:  %s   Suspended: %t   Backoff limit: %d   Deadline: %s\n",
		s.ConcurrencyPolicy, ptr.Deref(s.Suspend, false), ptr.Deref(s.BackoffLimit, 6), deadline(s.ActiveDeadlineSeconds))
	fmt.Fprintf(w, "Runs started: %d\n", st.Status.TriggerCount)

	fmt.Fprintln(w, "\nConditions:")
	for _, c := range st.Status.Conditions {
		fmt.Fprintf(w, "  %s=%s  %s: %s (%s)\n", c.Type, c.Status, c.Reason, c.Message, Relative(c.LastTransitionTime.Time, now))
	}

	fmt.Fprintln(w, "\nNext runs:")
	if ptr.Deref(s.Suspend, false) {
		fmt.Fprintln(w, "  none: the task is suspended")
	} else if sched, err := schedule.Parse(s.Schedule, ptr.Deref(s.TimeZone, "")); err != nil {
		fmt.Fprintf(w, "  %v\n", err)
	} else {
		for _, t := range sched.NextN(now, 5) {
			fmt.Fprintf(w, "  %s  (%s)\n", t.Format(time.RFC3339), Relative(t, now))
		}
	}

	fmt.Fprintln(w, "\nRecent runs:")
	if len(runs) == 0 {
		fmt.Fprintln(w, "  none yet")
	} else {
		if err := printRunTable(w, runs[:min(len(runs), 10)], now); err != nil {
			return err
		}
		fmt.Fprintln(w, Summarize(runs))
	}

	fmt.Fprintln(w, "\nRecent events:")
	var mine []eventsv1.Event
	for _, e := range events {
		if e.Regarding.Name == st.Name && e.Regarding.Kind == "ScheduleTask" {
			mine = append(mine, e)
		}
	}
	slices.SortFunc(mine, func(a, b eventsv1.Event) int { return eventTime(&a).Compare(eventTime(&b)) })
	if len(mine) > 10 {
		mine = mine[len(mine)-10:]
	}
	if len(mine) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, e := range mine {
		fmt.Fprintf(w, "  %-8s %-8s %-16s %s\n", Relative(eventTime(&e), now), e.Type, e.Reason, e.Note)
	}
	return nil
}

func eventTime(e *eventsv1.Event) time.Time {
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func deadline(s *int64) string {
	if s == nil {
		return "none"
	}
	return Short(time.Duration(*s) * time.Second)
}

func newLogsCommand(o *options) *cobra.Command {
	var last, follow bool
	cmd := &cobra.Command{
		Use:   "logs RUN | TASK --last",
		Short: "Print the logs of a run's pod",
		Example: `  kubectl stask logs data-check-29012345
  kubectl stask logs data-check --last -f`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, ns, err := o.connect()
			if err != nil {
				return err
			}
			runName := args[0]
			if last {
				st, err := o.getTask(ctx, c, ns, args[0])
				if err != nil {
					return err
				}
				if st.Status.LastTaskRunName == "" {
					return fmt.Errorf("scheduletask %q has no runs yet", st.Name)
				}
				runName = st.Status.LastTaskRunName
			}
			tr := &platformv1.TaskRun{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: runName}, tr); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("taskrun %q not found in namespace %q (for a task's latest run: kubectl stask logs TASK --last)", runName, ns)
				}
				return err
			}
			if tr.Status.PodName == "" {
				return fmt.Errorf("run %s has no pod yet (phase %s)", tr.Name, orDash(string(tr.Status.Phase)))
			}
			cfg, err := o.config.ToRESTConfig()
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			stream, err := cs.CoreV1().Pods(ns).GetLogs(tr.Status.PodName, &corev1.PodLogOptions{Container: "task", Follow: follow}).Stream(ctx)
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("the pod %s of run %s is gone (its Job was cleaned up by the task's history limit); its logs went with it", tr.Status.PodName, tr.Name)
			}
			if err != nil {
				return err
			}
			defer stream.Close()
			_, err = io.Copy(o.out(), stream)
			return err
		},
	}
	cmd.Flags().BoolVar(&last, "last", false, "NAME is a task: show its latest run's logs")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log as it grows")
	return cmd
}

// writeTable writes an aligned table, coloured where that helps.
func (o *options) writeTable(table string) {
	if useColor(o.streams.Out) {
		table = colorize(table)
	}
	fmt.Fprint(o.out(), table)
}

// connect returns a client and the namespace to work in.
func (o *options) connect() (client.Client, string, error) {
	c, err := o.newClient()
	if err != nil {
		return nil, "", err
	}
	ns, err := o.namespace()
	return c, ns, err
}
