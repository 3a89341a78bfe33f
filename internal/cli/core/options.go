// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options are what every command of a plugin shares: kubectl's connection
// flags, the streams, the clock and the client built from them.
type Options struct {
	// ConfigFlags are kubectl's own flags (--kubeconfig, --context, -n, ...),
	// so that a plugin reaches the cluster exactly as kubectl would.
	ConfigFlags *genericclioptions.ConfigFlags
	// IOStreams are where input comes from and output goes.
	IOStreams genericiooptions.IOStreams
	// Clock tells the time for ages and schedules; tests fix it.
	Clock clock.PassiveClock
	// Scheme knows the built-in kinds and the plugin's: the client decodes
	// with it, and printed objects get their apiVersion and kind from it.
	Scheme *runtime.Scheme
	// NewClient connects to the cluster. Tests of printing replace it with a
	// fake client; everything else keeps the default, built from ConfigFlags.
	NewClient func() (client.WithWatch, error)
}

// NewOptions returns Options for a plugin whose kinds scheme knows.
func NewOptions(streams genericiooptions.IOStreams, scheme *runtime.Scheme) *Options {
	o := &Options{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   streams,
		Clock:       clock.RealClock{},
		Scheme:      scheme,
	}
	o.NewClient = o.client
	return o
}

// NewScheme returns a scheme with the built-in kinds, which every plugin
// reads (events, pods), and the kinds that addToScheme register.
func NewScheme(addToScheme ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, addToScheme...) {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// AddFlags adds kubectl's connection flags to flags, normally the root
// command's persistent flags.
func (o *Options) AddFlags(flags *pflag.FlagSet) { o.ConfigFlags.AddFlags(flags) }

// client connects with kubectl's flags. It can watch, for WaitFor.
func (o *Options) client() (client.WithWatch, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: o.Scheme})
}

// Namespace is the namespace of -n, else the kubeconfig context's, else
// "default", as kubectl decides it.
func (o *Options) Namespace() (string, error) {
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

// Connect returns a client and the namespace to work in.
func (o *Options) Connect() (client.WithWatch, string, error) {
	c, err := o.NewClient()
	if err != nil {
		return nil, "", err
	}
	ns, err := o.Namespace()
	return c, ns, err
}

// Out is where results go.
func (o *Options) Out() io.Writer { return o.IOStreams.Out }

// Now is the current time by the Options' clock.
func (o *Options) Now() time.Time { return o.Clock.Now() }

// OutIsTerminal reports whether results go to a terminal, where progress
// may be redrawn in place and colour is drawn rather than stored.
func (o *Options) OutIsTerminal() bool { return IsTerminal(o.IOStreams.Out) }

// Open opens a file a command reads, "-" being standard input as in
// kubectl apply -f -. Closing standard input's reader leaves it open.
func (o *Options) Open(file string) (io.ReadCloser, error) {
	if file == "-" {
		return io.NopCloser(o.IOStreams.In), nil
	}
	return os.Open(file)
}

// CompleteNames completes a command's first argument with the names of
// newList's kind in the namespace, read from the cluster.
func (o *Options) CompleteNames(newList func() client.ObjectList) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, ns, err := o.Connect()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		list := newList()
		if err := c.List(cmd.Context(), list, client.InNamespace(ns)); err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		if err := meta.EachListItem(list, func(obj runtime.Object) error {
			m, err := meta.Accessor(obj)
			if err == nil {
				names = append(names, m.GetName())
			}
			return err
		}); err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
