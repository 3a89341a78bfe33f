// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/release"
)

func newHistoryCommand(o *options) *cobra.Command {
	return apps.Show(o.Options, help.Command("history"), func(ctx context.Context, c client.WithWatch, ad *platformv1.AppDeployment, printFlags *core.PrintFlags) error {
		st := &ad.Status
		if len(st.Revisions) == 0 {
			fmt.Fprintf(o.IOStreams.ErrOut, "No promoted revisions of appdeployment %q in namespace %q yet.\n", ad.Name, ad.Namespace)
			return printOutcome(o, st)
		}
		kept, err := keptRevisions(ctx, c, ad)
		if err != nil {
			return apps.Explain(err, ad.Name, ad.Namespace)
		}
		if err := o.PrintTable(revisionTable(st.Revisions, kept, o.Now()), printFlags, false, nil); err != nil {
			return err
		}
		return printOutcome(o, st)
	})
}

// printOutcome writes how the last release ended, if one did.
func printOutcome(o *options, st *platformv1.AppDeploymentStatus) error {
	if st.LastOutcome.Result != "" {
		fmt.Fprintf(o.Out(), "\nLast outcome: %s\n", core.Safe(outcomeLine(&st.LastOutcome, o.Now())))
	}
	return nil
}

// keptRevisions reads the pod fields of the application's revisions from
// the ControllerRevisions the operator keeps, by revision hash.
func keptRevisions(ctx context.Context, c client.Client, ad *platformv1.AppDeployment) (map[string]*platformv1.AppDeploymentSpec, error) {
	var list appsv1.ControllerRevisionList
	if err := c.List(ctx, &list, client.InNamespace(ad.Namespace),
		client.MatchingLabels{platformv1.AppNameLabel: ad.Name}); err != nil {
		return nil, err
	}
	out := map[string]*platformv1.AppDeploymentSpec{}
	for i := range list.Items {
		cr := &list.Items[i]
		if !metav1.IsControlledBy(cr, ad) {
			continue
		}
		if spec, err := release.RevisionSpec(cr); err == nil {
			out[cr.Labels[platformv1.RevisionLabel]] = spec
		}
	}
	return out, nil
}

// podFieldNames name the pod fields of a spec, in the order history lists
// what changed, each with how to read it.
var podFieldNames = []struct {
	name string
	get  func(*platformv1.AppDeploymentSpec) any
}{
	{"image", func(s *platformv1.AppDeploymentSpec) any { return s.Image }},
	{"version", func(s *platformv1.AppDeploymentSpec) any { return s.Version }},
	{"command", func(s *platformv1.AppDeploymentSpec) any { return s.Command }},
	{"args", func(s *platformv1.AppDeploymentSpec) any { return s.Args }},
	{"env", func(s *platformv1.AppDeploymentSpec) any { return s.Env }},
	{"resources", func(s *platformv1.AppDeploymentSpec) any { return s.Resources }},
	{"port", func(s *platformv1.AppDeploymentSpec) any { return s.Port }},
	{"healthCheck", func(s *platformv1.AppDeploymentSpec) any { return s.HealthCheck }},
	{"serviceAccountName", func(s *platformv1.AppDeploymentSpec) any { return s.ServiceAccountName }},
	{"template", func(s *platformv1.AppDeploymentSpec) any { return s.Template }},
}

// changedFields names the pod fields that differ between a revision and
// the one promoted before it; "-" when either is not kept.
func changedFields(newer, older *platformv1.AppDeploymentSpec) string {
	if newer == nil || older == nil {
		return "-"
	}
	var names []string
	for _, f := range podFieldNames {
		if !equality.Semantic.DeepEqual(f.get(newer), f.get(older)) {
			names = append(names, f.name)
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ",")
}

// revisionColumns are the columns of history.
var revisionColumns = []metav1.TableColumnDefinition{
	{Name: "Revision", Type: "string", Description: "The pod template hash."},
	{Name: "Version", Type: "string"},
	{Name: "Image", Type: "string"},
	{Name: "Promoted", Type: "string", Description: "When the revision became the stable one."},
	{Name: "Changed", Type: "string", Description: "The pod fields that differ from the revision promoted before it."},
}

// revisionTable is the table of promoted revisions.
func revisionTable(revisions []platformv1.Revision, kept map[string]*platformv1.AppDeploymentSpec, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: revisionColumns}
	for i, r := range revisions {
		changed := "-"
		if i+1 < len(revisions) {
			changed = changedFields(kept[r.Revision], kept[revisions[i+1].Revision])
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells: []any{r.Revision, core.OrDash(r.Version), core.OrDash(r.Image), promotedAt(r.PromotedAt, now), changed},
		})
	}
	return t
}
