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
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// pollInterval is how often `run --wait` reads the run.
const pollInterval = 500 * time.Millisecond

func newRunCommand(o *options) *cobra.Command {
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "run NAME",
		Short: "Start a manual run of a task now",
		Long: `Start a manual run of a ScheduleTask now: a TaskRun with trigger Manual, which
the operator starts as a Job from the task's template, honouring its
concurrency policy. Prints the run's name. With --wait, follows the run and
exits 0 when it succeeded, 1 when it failed, 2 when --timeout passed first.`,
		Example: `  kubectl stask run data-check
  kubectl stask run data-check --wait --timeout 10m`,
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
			if _, err := o.getTask(ctx, c, ns, args[0]); err != nil {
				return err
			}
			tr := &platformv1.TaskRun{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: args[0] + "-manual-"},
				Spec:       platformv1.TaskRunSpec{ScheduleTaskName: args[0], Trigger: platformv1.TriggerManual},
			}
			if err := c.Create(ctx, tr); err != nil {
				return err
			}
			fmt.Fprintf(o.out(), "taskrun.platform.example.com/%s created\n", tr.Name)
			if !wait {
				return nil
			}
			return o.follow(ctx, c, client.ObjectKeyFromObject(tr), timeout)
		},
	}
	cmd.Flags().BoolVarP(&wait, "wait", "w", false, "follow the run until it ends")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "with --wait, how long to wait")
	return cmd
}

// follow prints the run's phase as it changes until it ends: a line each
// change, or one line redrawn in place on a terminal.
func (o *options) follow(ctx context.Context, c client.Client, key client.ObjectKey, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tty := isTerminal(o.streams.Out)
	var last platformv1.TaskRunPhase
	spinner := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	start := o.now()
	for tick := 0; ; tick++ {
		tr := &platformv1.TaskRun{}
		if err := c.Get(ctx, key, tr); err != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return err
		}
		phase := tr.Status.Phase
		if tty {
			fmt.Fprintf(o.out(), "\r%s %s  %s   ", spinner[tick%len(spinner)], orDash(string(phase)), Short(o.now().Sub(start)))
		} else if phase != last {
			fmt.Fprintf(o.out(), "%s %s\n", key.Name, orDash(string(phase)))
		}
		last = phase
		switch phase {
		case platformv1.TaskRunSucceeded:
			if tty {
				fmt.Fprintln(o.out())
			}
			fmt.Fprintf(o.out(), "%s succeeded after %s\n", key.Name, orDash(tr.Status.Duration))
			return nil
		case platformv1.TaskRunFailed:
			if tty {
				fmt.Fprintln(o.out())
			}
			detail := tr.Status.Reason
			if tr.Status.ExitCode != nil {
				detail += fmt.Sprintf(", exit code %d", *tr.Status.ExitCode)
			}
			return &ExitError{Code: 1, Err: fmt.Errorf("%s failed: %s: %s", key.Name, detail, tr.Status.Message)}
		}
		select {
		case <-ctx.Done():
			if tty {
				fmt.Fprintln(o.out())
			}
			return &ExitError{Code: 2, Err: fmt.Errorf("%s still %s after %s", key.Name, orDash(string(phase)), timeout)}
		case <-time.After(pollInterval):
		}
	}
}

// isTerminal reports whether w is a terminal, for progress drawn in place.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
