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

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

// explainer says how to get the ScheduleTask API into a cluster that lacks it.
var explainer = core.Explainer{Install: "install the CRDs first (make install, or the Helm chart charts/platform-operator)"}

// palette colours the outcomes of runs in tables.
var palette = core.Palette{
	string(platformv1.TaskRunSucceeded): core.Green,
	string(platformv1.TaskRunFailed):    core.Red,
}

// options are core's, for the ScheduleTask commands.
type options struct {
	*core.Options
}

// Scheme returns the scheme the plugin reads the cluster with: the built-in
// kinds and platform.example.com/v1.
func Scheme() (*runtime.Scheme, error) {
	return core.NewScheme(platformv1.AddToScheme)
}

// NewRootCommand returns `kubectl stask` with every subcommand.
func NewRootCommand(streams genericiooptions.IOStreams) (*cobra.Command, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	return newRootCommand(&options{Options: core.NewOptions(streams, scheme)}), nil
}

// newRootCommand builds the commands on o, which tests fill with a fake
// client and a fixed clock.
func newRootCommand(o *options) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-stask",
		Short: "Scheduled tasks and their runs",
		Long: `kubectl stask shows and drives platform-operator's ScheduleTasks: list them,
run one now and follow it, suspend and resume, see the history of runs and
their logs, and check schedules and manifests offline.`,
		Example: `  kubectl stask list -A
  kubectl stask run data-check --wait
  kubectl stask next "0 */2 * * *" --time-zone Europe/Berlin
  kubectl stask lint task.yaml`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(o.IOStreams.In)
	root.SetOut(o.IOStreams.Out)
	root.SetErr(o.IOStreams.ErrOut)
	o.AddFlags(root.PersistentFlags())
	root.AddCommand(
		newListCommand(o),
		newGetCommand(o),
		newHistoryCommand(o),
		newLogsCommand(o),
		newRunCommand(o),
		newBackfillCommand(o),
		newSuspendCommand(o, true),
		newSuspendCommand(o, false),
		newNextCommand(o),
		newLintCommand(o),
	)
	return root
}

// explain turns the API's errors about a ScheduleTask into ones that say
// what to do.
func explain(err error, name, ns string) error {
	return explainer.Explain(err, "ScheduleTask", name, ns)
}

// getTask reads a task, with an error that says what to do.
func getTask(ctx context.Context, c client.Client, ns, name string) (*platformv1.ScheduleTask, error) {
	st := &platformv1.ScheduleTask{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, st); err != nil {
		return nil, explain(err, name, ns)
	}
	return st, nil
}

// onTask makes cmd a command on the one task its argument names, which is
// what most commands are: it completes task names, runs check (the -o
// flags) before reaching the cluster, reads the task with an error that
// says what to do, and hands it to run. The task's namespace is the one to
// work in.
func (o *options) onTask(cmd *cobra.Command, check func() error,
	run func(ctx context.Context, c client.WithWatch, st *platformv1.ScheduleTask) error) *cobra.Command {
	cmd.Args = cobra.ExactArgs(1)
	cmd.ValidArgsFunction = o.completeTaskNames()
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		c, ns, err := o.Connect()
		if err != nil {
			return err
		}
		st, err := getTask(cmd.Context(), c, ns, args[0])
		if err != nil {
			return err
		}
		return run(cmd.Context(), c, st)
	}
	return cmd
}

// completeTaskNames completes a task name from the cluster.
func (o *options) completeTaskNames() cobra.CompletionFunc {
	return o.CompleteNames(func() client.ObjectList { return &platformv1.ScheduleTaskList{} })
}
