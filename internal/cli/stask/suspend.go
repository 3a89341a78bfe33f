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
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

func newSuspendCommand(o *options, suspend bool) *cobra.Command {
	use, short, verb := "suspend NAME", "Stop a task's scheduled runs (runs in progress go on)", "suspended"
	if !suspend {
		use, short, verb = "resume NAME", "Let a suspended task run on its schedule again", "resumed"
	}
	printFlags := core.NewActionPrintFlags(verb, o.Scheme)
	var printer printers.ResourcePrinter
	cmd := o.onTask(&cobra.Command{Use: use, Short: short}, func() (err error) {
		printer, err = printFlags.ToPrinter()
		return err
	}, func(ctx context.Context, c client.WithWatch, st *platformv1.ScheduleTask) error {
		patch := client.MergeFrom(st.DeepCopy())
		st.Spec.Suspend = ptr.To(suspend)
		if err := c.Patch(ctx, st, patch); err != nil {
			return explain(err, st.Name, st.Namespace)
		}
		return printer.PrintObj(st, o.Out())
	})
	printFlags.AddFlags(cmd)
	return cmd
}
