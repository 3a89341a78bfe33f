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

// Package cli implements `kubectl stask`, the kubectl plugin for
// ScheduleTasks and their runs. cmd/kubectl-stask only calls NewRootCommand.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// ExitError ends the command with a chosen exit code (run --wait: 1 failed, 2 timed out).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// options are what every command shares: kubectl's standard flags, the
// streams, and the clock.
type options struct {
	config  *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	clock   clock.PassiveClock
	// newClient is replaceable in tests of pure formatting.
	newClient func() (client.Client, error)
}

// NewRootCommand returns `kubectl stask` with every subcommand.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{
		config:  genericclioptions.NewConfigFlags(true),
		streams: streams,
		clock:   clock.RealClock{},
	}
	o.newClient = o.client
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
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	o.config.AddFlags(root.PersistentFlags())
	root.AddCommand(
		newListCommand(o),
		newGetCommand(o),
		newHistoryCommand(o),
		newLogsCommand(o),
		newRunCommand(o),
		newSuspendCommand(o, true),
		newSuspendCommand(o, false),
		newNextCommand(o),
		newLintCommand(o),
	)
	return root
}

// Main runs the plugin and returns the process's exit code.
func Main() int {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	err := NewRootCommand(streams).Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(streams.ErrOut, "error:", err)
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	return 1
}

// scheme knows the built-in kinds and the project's.
func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = platformv1.AddToScheme(s)
	return s
}

// client connects with kubectl's flags.
func (o *options) client() (client.Client, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme()})
}

// namespace is the namespace of -n, the kubeconfig context's, or default.
func (o *options) namespace() (string, error) {
	ns, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

// getTask reads a task, with an error that says what to do.
func (o *options) getTask(ctx context.Context, c client.Client, ns, name string) (*platformv1.ScheduleTask, error) {
	st := &platformv1.ScheduleTask{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, st); err != nil {
		return nil, explain(err, name, ns)
	}
	return st, nil
}

// explain turns the API's errors into ones that say what to do.
func explain(err error, name, ns string) error {
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && name == "":
		return errors.New("the ScheduleTask API is not installed in this cluster: install the CRDs first " +
			"(make install, or the Helm chart charts/platform-operator)")
	case apierrors.IsNotFound(err):
		return fmt.Errorf("scheduletask %q not found in namespace %q", name, ns)
	}
	return err
}

// out is where results go.
func (o *options) out() io.Writer { return o.streams.Out }

// now is the current time.
func (o *options) now() time.Time { return o.clock.Now() }
