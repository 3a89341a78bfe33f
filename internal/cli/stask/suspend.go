// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

func newSuspendCommand(o *options, suspend bool) *cobra.Command {
	cmd := &cobra.Command{Use: "suspend NAME", Short: "Stop a task's scheduled runs (runs in progress go on)"}
	verb := "suspended"
	if !suspend {
		cmd = &cobra.Command{Use: "resume NAME", Short: "Let a suspended task run on its schedule again",
			Long: `Let a task run on its schedule again: clear spec.suspend, and when the
operator suspended the task after repeated failures (suspendAfterFailures),
or runs have failed in a row, start its failure streak again from zero (a new
value of the platform.example.com/resume annotation). Both in one write.`}
		verb = "resumed"
	}
	printFlags := core.NewActionPrintFlags(verb, o.Scheme)
	var printer printers.ResourcePrinter
	cmd = tasks.On(o.Options, cmd, func() (err error) {
		printer, err = printFlags.ToPrinter()
		return err
	}, func(ctx context.Context, c client.WithWatch, st *platformv1.ScheduleTask) error {
		patch := client.MergeFrom(st.DeepCopy())
		st.Spec.Suspend = ptr.To(suspend)
		if !suspend && (st.Status.ConsecutiveFailures > 0 || st.SuspendedAfterFailures()) {
			if st.Annotations == nil {
				st.Annotations = map[string]string{}
			}
			st.Annotations[platformv1.ResumeAnnotation] = o.Now().UTC().Format(time.RFC3339Nano)
		}
		if err := c.Patch(ctx, st, patch); err != nil {
			return tasks.Explain(err, st.Name, st.Namespace)
		}
		return printer.PrintObj(st, o.Out())
	})
	printFlags.AddFlags(cmd)
	return cmd
}
