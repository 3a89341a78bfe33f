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

// Package metrics defines the operator's own Prometheus metrics, served on
// the manager's metrics endpoint next to controller-runtime's. No label's
// values grow with the number of objects: controllers, results, reasons and
// states are small fixed sets.
package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	platformv1 "github.com/example/platform-operator/api/v1"
)

const namespace = "platform_operator"

var (
	// ReconcileDuration is how long each reconcile took, by controller and
	// result (success, error, requeue).
	ReconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace,
		Name:      "reconcile_duration_seconds",
		Help:      "Time one reconcile took, by controller and result (success, error, requeue).",
		Buckets:   []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
	}, []string{"controller", "result"})

	// ReconcileErrors counts failed reconciles by controller and the API
	// status reason of the error (Unknown for errors that are not API errors).
	ReconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace,
		Name:      "reconcile_errors_total",
		Help:      "Reconciles that returned an error, by controller and API status reason.",
	}, []string{"controller", "reason"})

	// TaskRuns counts runs that reached their final phase, by result.
	TaskRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace,
		Name:      "taskruns_total",
		Help:      "TaskRuns that finished, by result (Succeeded, Failed).",
	}, []string{"result"})

	// TaskRunDuration is how long finished runs took, start to completion.
	TaskRunDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace,
		Name:      "taskrun_duration_seconds",
		Help:      "Time from a run's start to its completion.",
		Buckets:   prometheus.ExponentialBuckets(1, 2, 14), // 1 s to about 4.5 h
	})

	// ScheduleLag is how late scheduled runs started: from the time the
	// schedule named to the start of the run's Job.
	ScheduleLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace,
		Name:      "schedule_lag_seconds",
		Help:      "Time from a run's scheduled time to the start of its Job.",
		Buckets:   []float64{0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300},
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(ReconcileDuration, ReconcileErrors, TaskRuns, TaskRunDuration, ScheduleLag)
}

// Instrument wraps a reconciler so each call is timed and each error counted.
func Instrument(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := time.Now()
		res, err := r.Reconcile(ctx, req)
		result := "success"
		switch {
		case err != nil:
			result = "error"
			ReconcileErrors.WithLabelValues(controller, errorReason(err)).Inc()
		case res.RequeueAfter > 0:
			result = "requeue"
		}
		ReconcileDuration.WithLabelValues(controller, result).Observe(time.Since(start).Seconds())
		return res, err
	})
}

// errorReason is the API status reason of err, a small fixed set.
func errorReason(err error) string {
	if errors.Is(err, reconcile.TerminalError(nil)) {
		return "Terminal"
	}
	if r := apierrors.ReasonForError(err); r != "" {
		return string(r)
	}
	return "Unknown"
}

// RunFinished records a run that reached its final phase.
func RunFinished(tr *platformv1.TaskRun) {
	TaskRuns.WithLabelValues(string(tr.Status.Phase)).Inc()
	if s, c := tr.Status.StartTime, tr.Status.CompletionTime; s != nil && c != nil {
		TaskRunDuration.Observe(c.Sub(s.Time).Seconds())
	}
}

// RunStarted records how late a scheduled run started.
func RunStarted(tr *platformv1.TaskRun) {
	if s, st := tr.Spec.ScheduledTime, tr.Status.StartTime; s != nil && st != nil {
		ScheduleLag.Observe(max(0, st.Sub(s.Time).Seconds()))
	}
}

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
	if c := meta.FindStatusCondition(st.Status.Conditions, platformv1.ConditionReady); (c != nil && c.Status == "False") ||
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

// RegisterTaskGauge registers the platform_operator_scheduletasks gauge,
// read from reader (the manager's cache) on every scrape.
func RegisterTaskGauge(reader client.Reader) error {
	return ctrlmetrics.Registry.Register(&taskCollector{
		reader: reader,
		desc: prometheus.NewDesc(namespace+"_scheduletasks",
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
