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

// weightCollector reports the weight of every canary in progress.
type weightCollector struct {
	reader client.Reader
}

// Describe implements prometheus.Collector.
func (c *weightCollector) Describe(ch chan<- *prometheus.Desc) { ch <- weightDesc }

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
	}
}
