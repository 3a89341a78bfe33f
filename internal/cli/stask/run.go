// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

// Exit codes of run --wait, for scripts; any other error exits 1 too.
const (
	exitFailed   = 1
	exitTimedOut = 2
)

func newRunCommand(o *options) *cobra.Command {
	var wait bool
	var timeout time.Duration
	var env []string
	printFlags := core.NewActionPrintFlags("created", o.Scheme)
	var printer printers.ResourcePrinter
	var cmd *cobra.Command
	cmd = tasks.On(o.Options, help.Command("run"), func() (err error) {
		printer, err = printFlags.ToPrinter()
		return err
	}, func(ctx context.Context, c client.WithWatch, st *platformv1.ScheduleTask) error {
		tr := &platformv1.TaskRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: st.Namespace, GenerateName: st.Name + "-manual-"},
			Spec:       platformv1.TaskRunSpec{ScheduleTaskName: st.Name, Trigger: platformv1.TriggerManual},
		}
		if at := cmd.ArgsLenAtDash(); at >= 0 {
			tr.Spec.Args = cmd.Flags().Args()[at:]
		}
		vars, err := parseEnv(env)
		if err != nil {
			return err
		}
		tr.Spec.Env = vars
		if err := c.Create(ctx, tr); err != nil {
			return tasks.ExplainAbout(err, "TaskRun", tr.Name, st.Namespace)
		}
		if err := printer.PrintObj(tr, o.Out()); err != nil {
			return err
		}
		if !wait {
			return nil
		}
		return o.follow(ctx, c, client.ObjectKeyFromObject(tr), timeout)
	})
	// NAME, then only what follows --.
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if at := cmd.ArgsLenAtDash(); at == 1 || at < 0 && len(args) == 1 {
			return nil
		}
		return errors.New("run takes one task NAME; the run's args follow --, as in `run NAME -- ARG`")
	}
	cmd.Flags().StringArrayVar(&env, "env", nil, "K=V: set a variable for this run only (repeatable)")
	cmd.Flags().BoolVarP(&wait, "wait", "w", false, "follow the run until it ends")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "with --wait, how long to wait")
	printFlags.AddFlags(cmd)
	return cmd
}

// follow shows the run's phase as it changes, through a watch, until the
// run ends or timeout passes, and returns the outcome as run --wait's exit
// code: nil when it succeeded, an ExitError of exitFailed or exitTimedOut.
func (o *options) follow(ctx context.Context, c client.WithWatch, key client.ObjectKey, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	progress := core.NewProgress(o.Out(), key.Name, o.OutIsTerminal(), o.Clock)
	tr, err := core.WaitFor(ctx, c, &platformv1.TaskRun{}, &platformv1.TaskRunList{}, key, followRun(progress))
	progress.Stop()
	if errors.Is(err, context.DeadlineExceeded) {
		phase := ""
		if tr != nil {
			phase = string(tr.Status.Phase)
		}
		return &core.ExitError{Code: exitTimedOut, Err: fmt.Errorf("%s still %s after %s", key.Name, core.OrDash(phase), timeout)}
	}
	if err != nil {
		return err
	}
	if tr.Status.Phase == platformv1.TaskRunSucceeded {
		fmt.Fprintf(o.Out(), "%s succeeded after %s\n", key.Name, core.Safe(core.OrDash(tr.Status.Duration)))
		return nil
	}
	detail := tr.Status.Reason
	if tr.Status.ExitCode != nil {
		detail += fmt.Sprintf(", exit code %d", *tr.Status.ExitCode)
	}
	return &core.ExitError{Code: exitFailed, Err: fmt.Errorf("%s failed: %s: %s", key.Name, detail, tr.Status.Message)}
}

// followRun shows each phase of a run on progress and reports when it has
// finished. A run the operator has not seen yet has no phase; shown, it
// would read as "-" before Pending, so it is not.
func followRun(progress *core.Progress) func(*platformv1.TaskRun) (bool, error) {
	return func(tr *platformv1.TaskRun) (bool, error) {
		if tr.Status.Phase != "" {
			progress.Set(string(tr.Status.Phase))
		}
		return tr.IsFinished(), nil
	}
}

// parseEnv reads --env's K=V values, in order; a later K replaces an earlier.
func parseEnv(values []string) ([]corev1.EnvVar, error) {
	out := make([]corev1.EnvVar, 0, len(values))
	seen := map[string]int{}
	for _, v := range values {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: want NAME=VALUE", v)
		}
		if i, dup := seen[k]; dup {
			out[i].Value = val
			continue
		}
		seen[k] = len(out)
		out = append(out, corev1.EnvVar{Name: k, Value: val})
	}
	return out, nil
}
