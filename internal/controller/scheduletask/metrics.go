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

package scheduletask

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/metrics"
)

// Task states of the platform_operator_scheduletasks gauge; each task is in
// exactly one, the first that applies.
const (
	StateSuspended = "suspended"
	StateFailing   = "failing"
	StateActive    = "active"
	StateIdle      = "idle"
)

// taskState says which state a task counts in.
func taskState(st *platformv1.ScheduleTask) string {
	if ptr.Deref(st.Spec.Suspend, false) {
		return StateSuspended
	}
	if c := meta.FindStatusCondition(st.Status.Conditions, platformv1.ConditionReady); (c != nil && c.Status == metav1.ConditionFalse) ||
		st.Status.LastResult == platformv1.RunFailed {
		return StateFailing
	}
	if st.Status.Active {
		return StateActive
	}
	return StateIdle
}

// taskCollector counts ScheduleTasks by state when scraped, from the
// manager's cache, so the gauge is always what the cluster holds.
type taskCollector struct {
	reader client.Reader
	desc   *prometheus.Desc
}

// RegisterMetrics registers the platform_operator_scheduletasks gauge, read
// from reader (the manager's cache) on every scrape.
func RegisterMetrics(reader client.Reader) error {
	return metrics.Registry.Register(&taskCollector{
		reader: reader,
		desc: prometheus.NewDesc(metrics.Namespace+"_scheduletasks",
			"ScheduleTasks by state: active (a run in progress), idle, suspended, failing (Ready is False or the last run failed).",
			[]string{"state"}, nil),
	})
}

// Describe implements prometheus.Collector.
func (c *taskCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *taskCollector) Collect(ch chan<- prometheus.Metric) {
	var list platformv1.ScheduleTaskList
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Read-only, so the cache's objects are shared rather than deep-copied:
	// a scrape must not cost a copy of every task.
	if err := c.reader.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	counts := map[string]float64{StateActive: 0, StateIdle: 0, StateSuspended: 0, StateFailing: 0}
	for i := range list.Items {
		counts[taskState(&list.Items[i])]++
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, n, state)
	}
}
