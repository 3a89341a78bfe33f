// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/metrics"
)

// weightDesc describes the canary weight gauge: one series per AppDeployment
// with a canary in progress, read from the cache at each scrape, so a
// finished or deleted canary leaves no stale series.
var weightDesc = prometheus.NewDesc(metrics.Namespace+"_appdeployment_canary_weight",
	"Share of an AppDeployment's ready pods that run its canary, in percent (status.canary.weight.actual).",
	[]string{"namespace", "name"}, nil)

// phaseDesc describes the phase gauge: one series per AppDeployment, 1,
// labelled with its phase and the reason of its Ready condition, for the
// alerts on releases rolled back, degraded, or held waiting (the series of a
// state lasts as long as the state, so an alert's `for` measures it).
var phaseDesc = prometheus.NewDesc(metrics.Namespace+"_appdeployment_phase",
	"1 for each AppDeployment, labelled with its phase (status.phase) and the reason of its Ready condition.",
	[]string{"namespace", "name", "phase", "reason"}, nil)

// weightCollector reports the weight of every canary in progress and the
// phase of every AppDeployment.
type weightCollector struct {
	reader client.Reader
}

// Describe implements prometheus.Collector.
func (c *weightCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- weightDesc
	ch <- phaseDesc
}

// Collect implements prometheus.Collector.
func (c *weightCollector) Collect(ch chan<- prometheus.Metric) {
	var list platformv1.AppDeploymentList
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Read-only: the cache's objects are shared, not copied.
	if err := c.reader.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(weightDesc, err)
		return
	}
	for i := range list.Items {
		ad := &list.Items[i]
		if cs := ad.Status.Canary; cs != nil && cs.Weight != nil {
			ch <- prometheus.MustNewConstMetric(weightDesc, prometheus.GaugeValue,
				float64(ptr.Deref(cs.Weight.Actual, 0)), ad.Namespace, ad.Name)
		}
		if ad.Status.Phase != "" {
			ch <- prometheus.MustNewConstMetric(phaseDesc, prometheus.GaugeValue, 1,
				ad.Namespace, ad.Name, string(ad.Status.Phase), readyReason(&ad.Status))
		}
	}
}
