// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
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

// taskCollector counts ScheduleTasks by state, and gives each task's last
// success and next fire time, when scraped, from the manager's cache: the
// gauges are always what the cluster holds, a deleted task's series go with
// it, and they cost nothing between scrapes.
type taskCollector struct {
	reader      client.Reader
	desc        *prometheus.Desc
	lastSuccess *prometheus.Desc
	nextRun     *prometheus.Desc
	failures    *prometheus.Desc
	fresh       *prometheus.Desc
	missed      *prometheus.Desc
}

// RegisterMetrics registers the platform_operator_scheduletasks gauge and
// the per-task gauges, read from reader (the manager's cache) on every
// scrape.
func RegisterMetrics(reader client.Reader) error {
	perTask := []string{"namespace", "name"}
	return metrics.Registry.Register(&taskCollector{
		reader: reader,
		desc: prometheus.NewDesc(metrics.Namespace+"_scheduletasks",
			"ScheduleTasks by state: active (a run in progress), idle, suspended, failing (Ready is False or the last run failed).",
			[]string{"state"}, nil),
		lastSuccess: prometheus.NewDesc(metrics.Namespace+"_scheduletask_last_success_timestamp_seconds",
			"When a run of the task last succeeded (status.lastSuccessfulTime), in seconds since the epoch; no series until one has.",
			perTask, nil),
		nextRun: prometheus.NewDesc(metrics.Namespace+"_scheduletask_next_schedule_timestamp_seconds",
			"When the task's schedule fires next (status.nextScheduleTime), in seconds since the epoch; no series while it is suspended.",
			perTask, nil),
		failures: prometheus.NewDesc(metrics.Namespace+"_scheduletask_consecutive_failures",
			"How many runs of the task failed in a row since its last success or resume (status.consecutiveFailures); no series while none did.",
			perTask, nil),
		fresh: prometheus.NewDesc(metrics.Namespace+"_scheduletask_fresh",
			"1 while a run of the task succeeded within its staleAfterSeconds, 0 when none did (the Fresh condition); only tasks with staleAfterSeconds have a series.",
			perTask, nil),
		missed: prometheus.NewDesc(metrics.Namespace+"_scheduletask_missed_runs_total",
			"Fire times of the task at which no run could start, the CronJob controller being down (status.missedRuns), since the task was created; no series until one was missed.",
			perTask, nil),
	})
}

// storeInformer is what a client-go informer offers beside the
// controller-runtime Informer interface: its store.
type storeInformer interface {
	GetStore() toolscache.Store
}

// eachTask calls fn with every ScheduleTask the cache holds. It walks the
// informer's store, whose objects are the cache's own and must not be
// changed: a List, even without deep copies, copies every task into a new
// slice, and at thousands of tasks that copy is alive while the scrape
// runs. A manager that is idle allocates little but its scrapes, so its
// collections start during them, and whatever a scrape holds raises the
// heap goal (and the RSS) of the whole idle time. A cache that is not a
// single informer's (one per namespace) is listed.
func (c *taskCollector) eachTask(ctx context.Context, fn func(*platformv1.ScheduleTask)) error {
	if informers, ok := c.reader.(cache.Informers); ok {
		inf, err := informers.GetInformer(ctx, &platformv1.ScheduleTask{})
		if err != nil {
			return err
		}
		if s, ok := inf.(storeInformer); ok {
			for _, obj := range s.GetStore().List() {
				if st, ok := obj.(*platformv1.ScheduleTask); ok {
					fn(st)
				}
			}
			return nil
		}
	}
	var list platformv1.ScheduleTaskList
	if err := c.reader.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	for i := range list.Items {
		fn(&list.Items[i])
	}
	return nil
}

// Describe implements prometheus.Collector.
func (c *taskCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.lastSuccess
	ch <- c.nextRun
	ch <- c.failures
	ch <- c.fresh
	ch <- c.missed
}

// Collect implements prometheus.Collector.
func (c *taskCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts := map[string]float64{StateActive: 0, StateIdle: 0, StateSuspended: 0, StateFailing: 0}
	err := c.eachTask(ctx, func(st *platformv1.ScheduleTask) {
		counts[taskState(st)]++
		if t := st.Status.LastSuccessfulTime; t != nil {
			ch <- prometheus.MustNewConstMetric(c.lastSuccess, prometheus.GaugeValue, float64(t.Unix()), st.Namespace, st.Name)
		}
		if t := st.Status.NextScheduleTime; t != nil {
			ch <- prometheus.MustNewConstMetric(c.nextRun, prometheus.GaugeValue, float64(t.Unix()), st.Namespace, st.Name)
		}
		// The failure streak and the missed runs are 0 for most tasks, and
		// a series for each of those would cost every scrape (its garbage
		// is most of a scrape's) for nothing: the alerts need only the
		// tasks that have one (ScheduleTaskMissedRuns compares with the
		// series' absence an hour before).
		if n := st.Status.ConsecutiveFailures; n > 0 {
			ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(n), st.Namespace, st.Name)
		}
		if n := st.Status.MissedRuns; n > 0 {
			ch <- prometheus.MustNewConstMetric(c.missed, prometheus.CounterValue, float64(n), st.Namespace, st.Name)
		}
		if f := meta.FindStatusCondition(st.Status.Conditions, platformv1.ConditionFresh); f != nil && st.Spec.StaleAfterSeconds > 0 {
			v := 0.0
			if f.Status == metav1.ConditionTrue {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.fresh, prometheus.GaugeValue, v, st.Namespace, st.Name)
		}
	})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, n, state)
	}
}
