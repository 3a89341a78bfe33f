// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/schedule"
)

// Sections of get are short: the newest few say what a task is doing; the
// rest is what history and kubectl events are for.
const (
	recentRuns   = 10
	recentEvents = 10
	nextRuns     = 5
)

func newGetCommand(o *options) *cobra.Command {
	return tasks.Describe(o.Options, help.Command("get"), func(ctx context.Context, c client.WithWatch, st *platformv1.ScheduleTask) error {
		runs, err := taskRunsOf(ctx, c, st.Namespace, st.Name)
		if err != nil {
			return err
		}
		events, err := core.EventsAbout(ctx, c, tasks.Name(), st, recentEvents)
		if err != nil {
			return err
		}
		return describeTask(o.Out(), st, runs, events, o.Now())
	})
}

// missedCell says how many fire times the task missed and what its policy
// does with them: "0 (RunLatest)", "3, the last 2h ago (RunAll, at most 10)".
func missedCell(st *platformv1.ScheduleTask, now time.Time) string {
	policy := string(st.Spec.MissedRuns)
	if policy == "" {
		policy = string(platformv1.MissedRunsRunLatest)
	}
	if st.Spec.MissedRuns == platformv1.MissedRunsRunAll {
		limit := st.Spec.MaxMissedRuns
		if limit <= 0 {
			limit = platformv1.DefaultMaxMissedRuns
		}
		policy += fmt.Sprintf(", at most %d", limit)
	}
	if st.Status.MissedRuns == 0 || st.Status.LastMissedTime == nil {
		return fmt.Sprintf("0 (%s)", policy)
	}
	return fmt.Sprintf("%d, the last %s (%s)", st.Status.MissedRuns, core.Relative(st.Status.LastMissedTime.Time, now), policy)
}

// describeTask writes what get shows by default.
func describeTask(w io.Writer, st *platformv1.ScheduleTask, runs []platformv1.TaskRun, events []eventsv1.Event, now time.Time) error {
	s := &st.Spec
	// Every text of the task is escaped with core.Safe: a tenant wrote it,
	// and someone else may be reading it.
	fmt.Fprintf(w, "Name:         %s\nNamespace:    %s\n", core.Safe(st.Name), core.Safe(st.Namespace))
	fmt.Fprintf(w, "Schedule:     %s (%s)\n", core.Safe(scheduleCell(st)), core.Safe(core.OrDash(ptr.Deref(s.TimeZone, ""))))
	fmt.Fprintf(w, "Image:        %s\n", core.Safe(s.Image))
	if len(s.Command)+len(s.Args) > 0 {
		fmt.Fprintf(w, "Command:      %s\n", core.Safe(strings.Join(append(slices.Clone(s.Command), s.Args...), " ")))
	}
	fmt.Fprintf(w, "Concurrency:  %s   Suspended: %t   Backoff limit: %d   Deadline: %s\n",
		core.Safe(string(s.ConcurrencyPolicy)), ptr.Deref(s.Suspend, false), ptr.Deref(s.BackoffLimit, platformv1.DefaultBackoffLimit), deadline(s.ActiveDeadlineSeconds))
	fmt.Fprintf(w, "Runs started: %d\n", st.Status.TriggerCount)
	fmt.Fprintf(w, "Missed runs:  %s\n", missedCell(st, now))
	if s.SuspendAfterFailures > 0 || st.Status.ConsecutiveFailures > 0 {
		line := fmt.Sprintf("Failures:     %d in a row", st.Status.ConsecutiveFailures)
		if s.SuspendAfterFailures > 0 {
			line += fmt.Sprintf(" (suspends after %d)", s.SuspendAfterFailures)
		}
		fmt.Fprintln(w, line)
	}
	if s.StaleAfterSeconds > 0 {
		fmt.Fprintf(w, "Fresh:        %s (stale after %s without a success)\n", freshCell(st),
			duration.HumanDuration(time.Duration(s.StaleAfterSeconds)*time.Second))
	}

	fmt.Fprintln(w, "\nConditions:")
	for _, c := range st.Status.Conditions {
		fmt.Fprintf(w, "  %s=%s  %s: %s (%s)\n", core.Safe(c.Type), core.Safe(string(c.Status)), core.Safe(c.Reason), core.Safe(c.Message),
			core.Relative(c.LastTransitionTime.Time, now))
	}

	fmt.Fprintln(w, "\nNext runs:")
	if ptr.Deref(s.Suspend, false) {
		fmt.Fprintln(w, "  none: the task is suspended")
	} else if st.SuspendedAfterFailures() {
		fmt.Fprintf(w, "  none: suspended after %d failed runs in a row; `kubectl stask resume %s` resumes it\n",
			st.Status.ConsecutiveFailures, core.Safe(st.Name))
	} else if sched, err := parseEffective(st); err != nil {
		// The error quotes the schedule and the zone, which a tenant wrote.
		fmt.Fprintf(w, "  %s\n", core.Safe(err.Error()))
	} else {
		for _, t := range sched.NextN(now, nextRuns) {
			fmt.Fprintf(w, "  %s  (%s)\n", t.Format(time.RFC3339), core.Relative(t, now))
		}
	}

	fmt.Fprintln(w, "\nRecent runs:")
	if len(runs) == 0 {
		fmt.Fprintln(w, "  none yet")
	} else {
		if err := core.PrintTable(w, runTable(runs[:min(len(runs), recentRuns)], now), core.TableOptions{}); err != nil {
			return err
		}
		fmt.Fprintln(w, Summarize(runs))
	}

	fmt.Fprintln(w, "\nRecent events:")
	core.WriteEvents(w, events, now)
	return nil
}

// parseEffective parses the schedule the task's CronJob runs.
func parseEffective(st *platformv1.ScheduleTask) (*schedule.Schedule, error) {
	e, err := effectiveSchedule(st)
	if err != nil {
		return nil, err
	}
	return schedule.Parse(e, ptr.Deref(st.Spec.TimeZone, ""))
}

// deadline renders activeDeadlineSeconds.
func deadline(s *int64) string {
	if s == nil {
		return "none"
	}
	return duration.HumanDuration(time.Duration(*s) * time.Second)
}
