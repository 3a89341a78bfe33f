// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/release"
)

// appRows is the AppDeployments' table, as apps.Rows.
func appRows(_ context.Context, o *core.Options, _ client.Client, list *platformv1.AppDeploymentList, _ []client.ListOption) (*metav1.Table, error) {
	return appTable(list.Items, o.Now()), nil
}

// appColumns are the columns of list and get -o wide, as the list help page
// documents them (core.Help.Columns).
var appColumns = help.Columns("list")

// appTable is the table of AppDeployments.
func appTable(apps []platformv1.AppDeployment, now time.Time) *metav1.Table {
	return core.ObjectTable(appColumns, apps, func(ad *platformv1.AppDeployment) []any {
		st := &ad.Status
		return []any{
			ad.Name, strategyType(&ad.Spec.Strategy), core.OrDash(st.StableVersion), core.OrDash(release.Version(&ad.Spec)),
			fmt.Sprintf("%d/%d", ptr.Deref(st.ReadyReplicas, 0), release.Replicas(&ad.Spec)),
			core.OrDash(string(st.Phase)), canaryWeight(st.Canary), age(ad.CreationTimestamp, now),
			ad.Spec.Image, core.OrDash(st.Message),
		}
	})
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
