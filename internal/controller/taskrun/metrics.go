// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	"github.com/prometheus/client_golang/prometheus"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/metrics"
)

var (
	// runsTotal counts runs that reached their final phase, by result.
	runsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Name:      "taskruns_total",
		Help:      "TaskRuns that finished, by result (Succeeded, Failed).",
	}, []string{"result"})

	// runDuration is how long finished runs took, start to completion.
	runDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: metrics.Namespace,
		Name:      "taskrun_duration_seconds",
		Help:      "Time from a run's start to its completion.",
		Buckets:   prometheus.ExponentialBuckets(1, 2, 14), // 1 s to about 4.5 h
	})

	// scheduleLag is how late scheduled runs started: from the time the
	// schedule named to the start of the run's Job.
	scheduleLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: metrics.Namespace,
		Name:      "schedule_lag_seconds",
		Help:      "Time from a run's scheduled time to the start of its Job.",
		Buckets:   []float64{0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300},
	})
)

func init() {
	metrics.Registry.MustRegister(runsTotal, runDuration, scheduleLag)
	// Both results exist from the start, so a rate() over them is defined
	// before the first run ends.
	for _, result := range []platformv1.TaskRunPhase{platformv1.TaskRunSucceeded, platformv1.TaskRunFailed} {
		runsTotal.WithLabelValues(string(result))
	}
}

// runFinished records a run that reached its final phase.
func runFinished(tr *platformv1.TaskRun) {
	runsTotal.WithLabelValues(string(tr.Status.Phase)).Inc()
	if s, c := tr.Status.StartTime, tr.Status.CompletionTime; s != nil && c != nil {
		runDuration.Observe(c.Sub(s.Time).Seconds())
	}
}

// runStarted records how late a scheduled run started.
func runStarted(tr *platformv1.TaskRun) {
	if s, st := tr.Spec.ScheduledTime, tr.Status.StartTime; s != nil && st != nil {
		scheduleLag.Observe(max(0, st.Sub(s.Time).Seconds()))
	}
}
