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
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/release"
)

func newListCommand(o *options) *cobra.Command {
	var all bool
	var selector string
	printFlags := core.NewPrintFlags()
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List AppDeployments with their stable and current versions and phase",
		Long: `List AppDeployments: the strategy, the version the stable pods run, the version
the spec asks for, ready pods of the spec's replicas, the phase, and the
canary's actual share of the ready pods. -o wide adds the image and the
status message.`,
		Example: `  kubectl appdeploy list
  kubectl appdeploy list -A -l team=payments
  kubectl appdeploy list -o jsonpath='{.items[*].metadata.name}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := printFlags.Validate(); err != nil {
				return err
			}
			c, ns, err := o.Connect()
			if err != nil {
				return err
			}
			opts, err := listScope(ns, all, selector)
			if err != nil {
				return err
			}
			var apps platformv1.AppDeploymentList
			if err := c.List(cmd.Context(), &apps, opts...); err != nil {
				return explain(err, "", ns)
			}
			if !printFlags.Human() {
				return printFlags.Print(o.Out(), o.Scheme, &apps)
			}
			if len(apps.Items) == 0 {
				core.NoResources(o.IOStreams.ErrOut, ns, all)
				return nil
			}
			return o.PrintTable(appTable(apps.Items, o.Now()), printFlags, all, palette)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list AppDeployments in every namespace")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector, e.g. team=payments")
	printFlags.AddFlags(cmd)
	return cmd
}

// appColumns are the columns of list and get -o wide. Priority 1 marks the
// columns that only -o wide shows.
var appColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name"},
	{Name: "Strategy", Type: "string", Description: "rolling, recreate or canary."},
	{Name: "Stable", Type: "string", Description: "The version the stable pods run."},
	{Name: "Current", Type: "string", Description: "The version the spec asks for."},
	{Name: "Ready", Type: "string", Description: "Ready pods of both tracks, of the spec's replicas."},
	{Name: "Phase", Type: "string"},
	{Name: "Weight", Type: "string", Description: "The canary's share of the ready pods."},
	{Name: "Age", Type: "string"},
	{Name: "Image", Type: "string", Priority: 1, Description: "The image the spec asks for."},
	{Name: "Message", Type: "string", Priority: 1, Description: "What the release is doing, in one line."},
}

// appTable is the table of AppDeployments.
func appTable(apps []platformv1.AppDeployment, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: appColumns}
	for i := range apps {
		ad := &apps[i]
		st := &ad.Status
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells: []any{
				ad.Name, strategyType(&ad.Spec.Strategy), core.OrDash(st.StableVersion), core.OrDash(release.Version(&ad.Spec)),
				fmt.Sprintf("%d/%d", ptr.Deref(st.ReadyReplicas, 0), release.Replicas(&ad.Spec)),
				core.OrDash(string(st.Phase)), canaryWeight(st.Canary), age(ad.CreationTimestamp, now),
				ad.Spec.Image, core.OrDash(st.Message),
			},
			// The printer reads the namespace of -A from the object.
			Object: runtime.RawExtension{Object: ad},
		})
	}
	return t
}

// strategyType is the strategy's type, with the API's default.
func strategyType(s *platformv1.Strategy) string {
	if s.Type == "" {
		return string(platformv1.StrategyRolling)
	}
	return string(s.Type)
}

// canaryWeight is the canary's actual share, "25%", or "-" without one.
func canaryWeight(c *platformv1.CanaryStatus) string {
	if c == nil || c.Weight == nil || c.Weight.Actual == nil {
		return "-"
	}
	return fmt.Sprintf("%d%%", *c.Weight.Actual)
}

// age is kubectl's AGE column.
func age(created metav1.Time, now time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created.Time))
}
