// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Plugin describes one kubectl plugin of the project by what is its own:
// the root command's help and its commands.
// Everything else a plugin's root needs is the same for every plugin and is
// done here, once: kubectl's connection flags on every command, the
// streams, a client that decodes the plugin's kinds, and errors left to
// Execute.
type Plugin struct {
	// Help is the plugin's help pages: root.md is the plugin's own, its
	// title the binary's name ("# kubectl NAME" for kubectl-NAME).
	Help Help
	// Commands builds the plugin's subcommands on o. Tests call it through
	// Root with Options of their own (a fake client, a fixed clock).
	Commands func(o *Options) []*cobra.Command
}

// Scheme returns the scheme the plugin reads the cluster with: the
// project's kinds, which every plugin of it drives, and the built-in ones,
// which every plugin reads (events, pods).
func (p *Plugin) Scheme() (*runtime.Scheme, error) {
	return NewScheme(platformv1.AddToScheme)
}

// NewRootCommand returns the plugin's root command, with every subcommand,
// reading and writing streams and reaching the cluster as kubectl would.
func (p *Plugin) NewRootCommand(streams genericiooptions.IOStreams) (*cobra.Command, error) {
	scheme, err := p.Scheme()
	if err != nil {
		return nil, err
	}
	return p.Root(NewOptions(streams, scheme)), nil
}

// Root builds the root command and its subcommands on o. Errors are left
// to Execute, which prints them once, as kubectl does, without usage text:
// a failed request is not a wrong command line.
func (p *Plugin) Root(o *Options) *cobra.Command {
	root := p.Help.Set("root", &cobra.Command{SilenceUsage: true, SilenceErrors: true})
	root.SetIn(o.IOStreams.In)
	root.SetOut(o.IOStreams.Out)
	root.SetErr(o.IOStreams.ErrOut)
	o.AddFlags(root.PersistentFlags())
	root.AddCommand(p.Commands(o)...)
	return root
}

// Main runs the plugin as its binary does, on the process's streams and
// arguments, and returns the exit code for os.Exit (see Execute).
func (p *Plugin) Main() int {
	root, err := p.NewRootCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return Execute(root)
}
