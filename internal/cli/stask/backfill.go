// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/schedule"
)

// MaxBackfillRuns is the most runs one backfill creates: a window with more
// fire times is refused before anything is created, so a typo in --from
// cannot start a year of minutely runs.
const MaxBackfillRuns = 100

// backfillTime reads --from and --to: RFC 3339, or a date (midnight UTC).
func backfillTime(flag, v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 time (2026-11-01T02:00:00Z) or a date (2026-11-01)", flag, v)
}

func newBackfillCommand(o *options) *cobra.Command {
	var from, to string
	var yes, force bool
	cmd := tasks.On(o.Options, help.Command("backfill"), func() error {
		if from == "" || to == "" {
			return fmt.Errorf("backfill needs --from and --to")
		}
		return nil
	}, func(ctx context.Context, c client.WithWatch, st *platformv1.ScheduleTask) error {
		start, err := backfillTime("from", from)
		if err != nil {
			return err
		}
		end, err := backfillTime("to", to)
		if err != nil {
			return err
		}
		if end.Before(start) {
			return fmt.Errorf("--to %s is before --from %s", to, from)
		}
		if now := o.Now(); end.After(now) {
			return fmt.Errorf("--to %s is in the future: a backfill runs past fire times only", to)
		}
		times, err := fireTimes(st, start, end)
		if err != nil {
			return err
		}
		if len(times) == 0 {
			return fmt.Errorf("the task's schedule %q does not fire from %s to %s", st.Spec.Schedule, from, to)
		}
		runs, err := taskRunsOf(ctx, c, st.Namespace, st.Name)
		if err != nil {
			return err
		}
		have := map[int64]string{}
		for _, tr := range runs {
			if tr.Spec.ScheduledTime != nil {
				have[tr.Spec.ScheduledTime.Unix()] = tr.Name
			}
		}
		out := o.Out()
		created := 0
		for _, t := range times {
			if name, ok := have[t.Unix()]; ok && !force {
				fmt.Fprintf(out, "%s  skip: run %s exists (--force runs it again)\n", t.UTC().Format(time.RFC3339), name)
				continue
			}
			if !yes {
				fmt.Fprintf(out, "%s  create\n", t.UTC().Format(time.RFC3339))
				continue
			}
			tr, err := createBackfillRun(ctx, c, st, t)
			if err != nil {
				return fmt.Errorf("after %d of the runs: %w", created, err)
			}
			created++
			fmt.Fprintf(out, "%s  taskrun.%s/%s created\n", t.UTC().Format(time.RFC3339), platformv1.GroupVersion.Group, tr.Name)
		}
		if !yes {
			fmt.Fprintln(out, "dry run: nothing created; --yes creates the runs")
		}
		return nil
	})
	cmd.Flags().StringVar(&from, "from", "", "the window's first instant (RFC 3339 or a date)")
	cmd.Flags().StringVar(&to, "to", "", "the window's last instant (RFC 3339 or a date), not in the future")
	cmd.Flags().BoolVar(&yes, "yes", false, "create the runs (without it, only print them)")
	cmd.Flags().BoolVar(&force, "force", false, "also run fire times that already have a run")
	return cmd
}

// fireTimes are the task's fire times from start to end, both included,
// read as the operator reads its schedule (H resolved, in its zone); more
// than MaxBackfillRuns is an error.
func fireTimes(st *platformv1.ScheduleTask, start, end time.Time) ([]time.Time, error) {
	effective, err := schedule.Effective(st.Spec.Schedule, st.Namespace, st.Name)
	if err != nil {
		return nil, err
	}
	s, err := schedule.Parse(effective, ptr.Deref(st.Spec.TimeZone, ""))
	if err != nil {
		return nil, err
	}
	var times []time.Time
	for t := s.Next(start.Add(-time.Second)); !t.IsZero() && !t.After(end); t = s.Next(t) {
		if len(times) == MaxBackfillRuns {
			return nil, fmt.Errorf("the window holds more than %d fire times of %q; backfill a narrower one at a time",
				MaxBackfillRuns, effective)
		}
		times = append(times, t)
	}
	return times, nil
}

// createBackfillRun creates the backfill run of fire time t, named after
// it so that running the same command again finds the run it made; a run
// of that name made before (with --force) gets a generated name instead.
func createBackfillRun(ctx context.Context, c client.Client, st *platformv1.ScheduleTask, t time.Time) (*platformv1.TaskRun, error) {
	tr := &platformv1.TaskRun{
		// The task label, as admission would set it, so that the next
		// backfill finds the run even where no webhook labels it.
		ObjectMeta: metav1.ObjectMeta{Namespace: st.Namespace,
			Name:   st.Name + "-backfill-" + strconv.FormatInt(t.Unix()/60, 10),
			Labels: map[string]string{platformv1.ScheduleTaskLabel: st.Name}},
		Spec: platformv1.TaskRunSpec{ScheduleTaskName: st.Name, Trigger: platformv1.TriggerBackfill,
			ScheduledTime: &metav1.Time{Time: t}},
	}
	err := c.Create(ctx, tr)
	if apierrors.IsAlreadyExists(err) {
		tr.Name, tr.GenerateName, tr.ResourceVersion = "", tr.Name+"-", ""
		err = c.Create(ctx, tr)
	}
	if err != nil {
		return nil, tasks.ExplainAbout(err, "TaskRun", tr.Name, st.Namespace)
	}
	return tr, nil
}
