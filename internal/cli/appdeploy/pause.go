// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

func newPauseCommand(o *options, pause bool) *cobra.Command {
	name, verb, already := "pause", "paused", "already paused"
	if !pause {
		name, verb, already = "resume", "resumed", "not paused"
	}
	printFlags := core.NewActionPrintFlags(verb, o.Scheme)
	cmd := apps.On(o.Options, help.Command(name), func() error {
		_, err := printFlags.ToPrinter()
		return err
	}, func(ctx context.Context, c client.WithWatch, ad *platformv1.AppDeployment) error {
		if ad.Spec.Paused == pause {
			// Nothing to write; said as kubectl rollout pause says it.
			printFlags.NamePrintFlags.Operation = already
		} else {
			patch := client.MergeFrom(ad.DeepCopy())
			ad.Spec.Paused = pause
			if err := c.Patch(ctx, ad, patch); err != nil {
				return apps.Explain(err, ad.Name, ad.Namespace)
			}
		}
		printer, err := printFlags.ToPrinter()
		if err != nil {
			return err
		}
		return printer.PrintObj(ad, o.Out())
	})
	printFlags.AddFlags(cmd)
	return cmd
}
