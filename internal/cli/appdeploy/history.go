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
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

func newHistoryCommand(o *options) *cobra.Command {
	printFlags := core.NewPrintFlags()
	cmd := o.onApp(&cobra.Command{
		Use:   "history NAME",
		Short: "List the revisions promoted, newest first, and how the last release ended",
		Long: `List the revisions the AppDeployment promoted (status.revisions, newest first,
at most rollback.revisionHistoryLimit), which undo --to-revision can go back
to, and how the last release ended. With -o, the AppDeployment itself, e.g.
-o jsonpath='{.status.revisions[*].version}'.`,
		Example: `  kubectl appdeploy history order-service
  kubectl appdeploy history order-service -o jsonpath='{.status.revisions[0].image}'`,
	}, printFlags.Validate, func(_ context.Context, _ client.WithWatch, ad *platformv1.AppDeployment) error {
		if !printFlags.Human() {
			return printFlags.Print(o.Out(), o.Scheme, ad)
		}
		st := &ad.Status
		if len(st.Revisions) == 0 {
			fmt.Fprintf(o.IOStreams.ErrOut, "No promoted revisions of appdeployment %q in namespace %q yet.\n", ad.Name, ad.Namespace)
		} else if err := o.PrintTable(revisionTable(st.Revisions, o.Now()), printFlags, false, nil); err != nil {
			return err
		}
		if st.LastOutcome.Result != "" {
			fmt.Fprintf(o.Out(), "\nLast outcome: %s\n", core.Safe(outcomeLine(&st.LastOutcome, o.Now())))
		}
		return nil
	})
	printFlags.AddFlags(cmd)
	return cmd
}

// revisionColumns are the columns of history.
var revisionColumns = []metav1.TableColumnDefinition{
	{Name: "Revision", Type: "string", Description: "The pod template hash."},
	{Name: "Version", Type: "string"},
	{Name: "Image", Type: "string"},
	{Name: "Promoted", Type: "string", Description: "When the revision became the stable one."},
}

// revisionTable is the table of promoted revisions.
func revisionTable(revisions []platformv1.Revision, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: revisionColumns}
	for _, r := range revisions {
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells: []any{r.Revision, core.OrDash(r.Version), core.OrDash(r.Image), promotedAt(r.PromotedAt, now)},
		})
	}
	return t
}
