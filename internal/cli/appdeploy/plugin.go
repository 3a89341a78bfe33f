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
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/internal/cli/core"
)

// This file holds what any plugin needs and core does not have yet; none
// of it knows AppDeployments. kubectl stask has its own copies of the same
// steps (its root.go and list.go), so these could move to core for both.

// setUpRoot makes root a plugin's root command: kubectl's connection flags
// on every command, the streams of o, and errors left to core.Execute,
// which prints them once, as kubectl does, without usage text.
func setUpRoot(root *cobra.Command, o *core.Options) *cobra.Command {
	root.SilenceUsage, root.SilenceErrors = true, true
	root.SetIn(o.IOStreams.In)
	root.SetOut(o.IOStreams.Out)
	root.SetErr(o.IOStreams.ErrOut)
	o.AddFlags(root.PersistentFlags())
	return root
}

// onObject makes cmd a command on the one object its argument names: it
// completes the argument with the names of newList's kind, runs check (the
// -o flags, say) before reaching the cluster, reads the object with get,
// whose error should say what to do, and hands it to run.
func onObject[T client.Object](o *core.Options, cmd *cobra.Command, newList func() client.ObjectList,
	get func(ctx context.Context, c client.Client, ns, name string) (T, error),
	check func() error, run func(ctx context.Context, c client.WithWatch, obj T) error) *cobra.Command {
	cmd.Args = cobra.ExactArgs(1)
	cmd.ValidArgsFunction = o.CompleteNames(newList)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		c, ns, err := o.Connect()
		if err != nil {
			return err
		}
		obj, err := get(cmd.Context(), c, ns, args[0])
		if err != nil {
			return err
		}
		return run(cmd.Context(), c, obj)
	}
	return cmd
}

// listScope is the scope of a listing as kubectl get takes it: the
// namespace ns, or every one with -A (all), and a label selector (-l).
func listScope(ns string, all bool, selector string) ([]client.ListOption, error) {
	var opts []client.ListOption
	if !all {
		opts = append(opts, client.InNamespace(ns))
	}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			return nil, fmt.Errorf("invalid selector %q: %w", selector, err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	return opts, nil
}
