// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/metrics"
)

// Event reasons of an AppDeployment's release, one per transition.
const (
	EventCanaryStarted  = "CanaryStarted"
	EventCanaryReplaced = "CanaryReplaced"
	EventStepCompleted  = "StepCompleted"
	EventCanaryFailed   = "CanaryFailed"
	EventPromoted       = "Promoted"
	EventRolledBack     = "RolledBack"
	EventAborted        = "Aborted"
	EventReleased       = "Released"
	EventRequestIgnored = "RequestIgnored"
	// EventPreviewStarted: a blue-green release's preview runs beside the
	// stable pods; EventSwitched: the Service <name> moves to the preview's
	// pods (a switch back after a failure is said by EventRolledBack).
	EventPreviewStarted = "PreviewStarted"
	EventSwitched       = "Switched"
	// EventPaused and EventResumed: spec.paused holds a release, and lets
	// it go on; EventWaitingForApproval: a canary step waits for promote.
	EventPaused             = "Paused"
	EventResumed            = "Resumed"
	EventWaitingForApproval = "WaitingForApproval"
	// EventAnalysisStarted: every query answered for the stable track and
	// the canary's pods are made; EventAnalysisPaused and
	// EventAnalysisResumed: the analysis holds a canary (NoData,
	// ProviderError, InvalidQuery) and lets it go on.
	EventAnalysisStarted = "AnalysisStarted"
	EventAnalysisPaused  = "AnalysisPaused"
	EventAnalysisResumed = "AnalysisResumed"
	// EventChildContested: a child was changed back so often that its
	// repairs are spaced out (the ChildContested condition turned True).
	EventChildContested = "ChildContested"
)

var (
	// outcomes counts finished releases by result and reason.
	outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Name:      "appdeployment_outcomes_total",
		Help:      "Finished AppDeployment releases by result (Promoted, RolledBack, Aborted) and reason.",
	}, []string{"result", "reason"})
	// rolloutDuration is how long releases took, from their start to their outcome.
	rolloutDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metrics.Namespace,
		Name:      "appdeployment_rollout_duration_seconds",
		Help:      "Time from the start of an AppDeployment release (a canary, a rolling update) to its outcome, by result.",
		Buckets:   []float64{5, 15, 30, 60, 120, 300, 600, 1200, 3600, 4 * 3600},
	}, []string{"result"})
)

// emit sends the events of the transitions a written pass made, and counts
// the releases it ended. It runs only once the status that records them is
// stored, so a pass that failed to write does not announce what it did not
// record (and the next pass, which makes the same transition, does).
func (r *Reconciler) emit(ad *platformv1.AppDeployment, p *pass) {
	for _, t := range p.events {
		r.Recorder.Eventf(ad, nil, t.eventType, t.reason, t.action, "%s", t.message)
		if o := t.outcome; o != nil {
			outcomes.WithLabelValues(string(o.Result), o.Reason).Inc()
			if t.started != nil && o.FinishedAt != nil {
				rolloutDuration.WithLabelValues(string(o.Result)).Observe(max(o.FinishedAt.Sub(t.started.Time), time.Duration(0)).Seconds())
			}
		}
	}
}

// RegisterMetrics registers the controller's metrics, and the collector of
// the canaries' weights that reads the AppDeployments from reader.
func RegisterMetrics(reader client.Reader) error {
	for _, c := range []prometheus.Collector{outcomes, rolloutDuration, measurementsTotal, measurementDuration,
		measurementLateness, measurementsDelayed, &weightCollector{reader: reader}} {
		if err := metrics.Registry.Register(c); err != nil {
			return err
		}
	}
	return nil
}
