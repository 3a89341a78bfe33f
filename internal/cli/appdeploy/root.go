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

package appdeploy

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

// kind is the kind's name in messages and in the events' regarding.kind.
const kind = "AppDeployment"

// explainer says how to get the AppDeployment API into a cluster that lacks it.
var explainer = core.Explainer{Install: "install the CRDs first (make install, or the Helm chart charts/platform-operator)"}

// Colours that core has no name for. Paused asks a person for something;
// Progressing is on its way.
const (
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
)

// palette colours the phases in tables and in get.
var palette = core.Palette{
	string(platformv1.PhaseHealthy):     core.Green,
	string(platformv1.PhaseProgressing): cyan,
	string(platformv1.PhasePaused):      yellow,
	string(platformv1.PhaseDegraded):    core.Red,
}

// options are core's, for the AppDeployment commands.
type options struct {
	*core.Options
}

// Scheme returns the scheme the plugin reads the cluster with: the built-in
// kinds and platform.example.com/v1.
func Scheme() (*runtime.Scheme, error) {
	return core.NewScheme(platformv1.AddToScheme)
}

// NewRootCommand returns `kubectl appdeploy` with every subcommand.
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
	root := setUpRoot(&cobra.Command{
		Use:   "kubectl-appdeploy",
		Short: "Application releases: rolling, recreate and canary",
		Long: `kubectl appdeploy shows and drives platform-operator's AppDeployments: list
them, see where a release is, gate CI on it, promote, abort or retry a canary,
pause and resume, undo a release in the spec, and check manifests offline.`,
		Example: `  kubectl appdeploy list -A
  kubectl appdeploy get order-service
  kubectl appdeploy status order-service --watch --timeout 15m
  kubectl appdeploy promote order-service --wait
  kubectl appdeploy lint deploy/*.yaml`,
	}, o.Options)
	root.AddCommand(
		newListCommand(o),
		newGetCommand(o),
		newStatusCommand(o),
		newHistoryCommand(o),
	)
	root.AddCommand(newRequestCommands(o)...)
	root.AddCommand(
		newPauseCommand(o, true),
		newPauseCommand(o, false),
		newUndoCommand(o),
		newLintCommand(o),
	)
	return root
}

// explain turns the API's errors about an AppDeployment into ones that say
// what to do.
func explain(err error, name, ns string) error {
	return explainer.Explain(err, kind, name, ns)
}

// getApp reads an AppDeployment, with an error that says what to do.
func getApp(ctx context.Context, c client.Client, ns, name string) (*platformv1.AppDeployment, error) {
	ad := &platformv1.AppDeployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ad); err != nil {
		return nil, explain(err, name, ns)
	}
	return ad, nil
}

// onApp makes cmd a command on the one AppDeployment its argument names,
// which is what most commands are (see onObject); its namespace is the one
// to work in.
func (o *options) onApp(cmd *cobra.Command, check func() error,
	run func(ctx context.Context, c client.WithWatch, ad *platformv1.AppDeployment) error) *cobra.Command {
	return onObject(o.Options, cmd, func() client.ObjectList { return &platformv1.AppDeploymentList{} }, getApp, check, run)
}
