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
	use, short, verb, already := "pause NAME", "Hold a canary where it is (spec.paused)", "paused", "already paused"
	long := `Hold the AppDeployment's canary where it is, by setting spec.paused: no step
completes and no promotion starts until it is resumed; its pods keep
running. A rolling or recreate update is not held. spec.paused is part of
the spec: a GitOps tool that manages it may set it back.`
	if !pause {
		use, short, verb, already = "resume NAME", "Let a paused canary go on (spec.paused false)", "resumed", "not paused"
		long = `Let a paused AppDeployment's canary go on, by setting spec.paused to false.`
	}
	printFlags := core.NewActionPrintFlags(verb, o.Scheme)
	cmd := apps.On(o.Options, &cobra.Command{Use: use, Short: short, Long: long}, func() error {
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
