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
	name, verb := "suspend", "suspended"
	if !suspend {
		name, verb = "resume", "resumed"
	}
	printFlags := core.NewActionPrintFlags(verb, o.Scheme)
	var printer printers.ResourcePrinter
	cmd := tasks.On(o.Options, help.Command(name), func() (err error) {
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
