// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
)

// fakePrometheus answers the built-in queries from numbers per track: the
// metric's value and the request count (the sample guard's query is the one
// with increase()).
type fakePrometheus struct {
	mu      sync.Mutex
	value   map[string]float64
	samples map[string]float64
	err     error
	asked   int
}

func newFakePrometheus(canary, stable float64) *fakePrometheus {
	return &fakePrometheus{
		value:   map[string]float64{platformv1.TrackCanary: canary, platformv1.TrackStable: stable},
		samples: map[string]float64{platformv1.TrackCanary: 600, platformv1.TrackStable: 1200},
	}
}

func (f *fakePrometheus) Query(_ context.Context, q string, _ time.Time) (analysis.Value, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if f.err != nil {
		return analysis.Value{}, f.err
	}
	track := platformv1.TrackCanary
	if strings.Contains(q, `track="stable"`) {
		track = platformv1.TrackStable
	}
	if strings.Contains(q, "increase(") {
		return analysis.Value{Number: f.samples[track]}, nil
	}
	return analysis.Value{Number: f.value[track]}, nil
}

func (f *fakePrometheus) set(change func(*fakePrometheus)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

// analysedApp is the design documents' manifest with short analysis
// settings: error_rate at most 0.5 %, measured every 5 s, 3 passes needed,
// 2 fails in a row fail it.
func analysedApp() *platformv1.AppDeployment {
	ad := canaryApp()
	ad.Spec.Strategy.CanaryCriteria = []platformv1.CanaryCriterion{{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}}
	ad.Spec.Strategy.Analysis = platformv1.Analysis{IntervalSeconds: 5}
	ad.Spec.Rollback.ProviderErrorGraceSeconds = 10
	return ad
}

// runFor runs passes, settling and the checks for d, a second at a time,
// and checks that no step completes on fewer Passes than minMeasurements:
// a step's counts stay in status, as its evidence, once it completed.
func (w *world) runFor(d time.Duration) {
	w.t.Helper()
	for end := w.now.Add(d); w.now.Before(end); w.now = w.now.Add(time.Second) {
		w.pass()
		w.check()
		w.settle()
		w.check()
		c := w.ad.Status.Canary
		if c == nil || c.Analysis == nil || c.Analysis.Step == nil || stepIndex(c) <= *c.Analysis.Step {
			continue
		}
		for _, cs := range c.Analysis.Criteria {
			if need := analysisSettings(w.ad, *c.Analysis.Step).minMeasurements; count(cs.Passes) < need || cs.LastResult != platformv1.MeasurementPass {
				w.t.Fatalf("step %d completed on %d passes of %s (last %s), want %d", *c.Analysis.Step+1, count(cs.Passes), cs.Name,
					cs.LastResult, need)
			}
		}
	}
}

func TestAnalysis_CanaryIsPromotedOnEvidence(t *testing.T) {
	w := newWorld(t, analysedApp())
	w.prometheus = newFakePrometheus(0.1, 0.1)
	w.run()
	w.setImage(image124)
	w.runFor(3 * time.Second)
	c := w.ad.Status.Canary
	if c == nil || c.Analysis == nil || c.Analysis.PreflightAt == nil || w.podsOf(platformv1.TrackCanary) != 1 {
		t.Fatalf("after the preflight: canary %+v, %d canary pods", c, w.podsOf(platformv1.TrackCanary))
	}
	w.expectEvents(EventCanaryStarted, EventAnalysisStarted)
	w.runFor(12 * time.Second)
	c = w.ad.Status.Canary
	if c == nil || len(c.Analysis.Criteria) != 1 {
		t.Fatalf("canary %+v: want it measured, not yet promoted", c)
	}
	cs := c.Analysis.Criteria[0]
	if cs.Name != "error_rate" || cs.LastResult != platformv1.MeasurementPass || count(cs.Passes) != 2 || cs.Threshold == "" ||
		ptr.Deref(cs.Samples, 0) != 600 || cs.Value != "0.1" || !strings.Contains(cs.Message, "error_rate") {
		t.Fatalf("criterion %+v after two measurements", cs)
	}
	w.runFor(10 * time.Second)
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	if w.ad.Status.StableVersion != v124 || w.ad.Status.LastOutcome.Result != platformv1.OutcomePromoted {
		t.Fatalf("status %+v", w.ad.Status)
	}
	w.expectEvents(EventStepCompleted, EventPromoted)
}

func TestAnalysis_FailingCanaryRollsBackAfterFailureLimitFailsInARow(t *testing.T) {
	w := newWorld(t, analysedApp())
	prom := newFakePrometheus(10, 0.1)
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runFor(10 * time.Second) // preflight, pods ready, one measurement
	if c := w.ad.Status.Canary; c == nil || c.Analysis == nil || len(c.Analysis.Criteria) == 0 || count(c.Analysis.Criteria[0].ConsecutiveFails) != 1 {
		t.Fatalf("after one failing measurement: canary %+v analysis %+v step %+v, %d measurements", c, c.Analysis, c.Step, w.measurements)
	}
	// A Pass breaks the run of Fails: one flaky sample never rolls back.
	prom.set(func(f *fakePrometheus) { f.value[platformv1.TrackCanary] = 0.1 })
	w.runFor(5 * time.Second)
	prom.set(func(f *fakePrometheus) { f.value[platformv1.TrackCanary] = 10 })
	w.runFor(5 * time.Second)
	if c := w.ad.Status.Canary; c == nil || count(c.Analysis.Criteria[0].ConsecutiveFails) != 1 || count(c.Analysis.Criteria[0].Fails) != 2 {
		t.Fatalf("a Pass between two Fails: canary %+v", c)
	}
	w.runFor(5 * time.Second)
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonRolledBack)
	o := w.ad.Status.LastOutcome
	if o.Result != platformv1.OutcomeRolledBack || o.Reason != ReasonAnalysisFailed || !strings.Contains(o.Message, "error_rate") {
		t.Fatalf("outcome %+v", o)
	}
	if w.deployments[platformv1.TrackCanary] != nil || w.podsOf(platformv1.TrackStable) != 3 || w.ad.Status.StableVersion != v123 {
		t.Fatal("the canary is not removed or the stable not whole")
	}
}

func TestAnalysis_NoDataPausesAndNeverPromotesUntilDataArrives(t *testing.T) {
	w := newWorld(t, analysedApp())
	prom := newFakePrometheus(0.1, 0.1)
	prom.samples[platformv1.TrackCanary] = 3 // fewer than minSamples (10)
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runFor(60 * time.Second)
	w.expectPhase(platformv1.PhasePaused, string(platformv1.PauseNoData))
	if w.ad.Status.PauseReason != platformv1.PauseNoData || w.ad.Status.StableVersion != v123 {
		t.Fatalf("status %+v", w.ad.Status)
	}
	if cs := w.ad.Status.Canary.Analysis.Criteria[0]; count(cs.Passes) != 0 || count(cs.NoData) < 10 {
		t.Fatalf("criterion %+v: NoData must never count as a Pass", cs)
	}
	w.expectEvents(EventAnalysisPaused)
	prom.set(func(f *fakePrometheus) { f.samples[platformv1.TrackCanary] = 600 })
	w.runFor(20 * time.Second)
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	w.expectEvents(EventAnalysisResumed, EventPromoted)
}

func TestAnalysis_OneMissingWindowHoldsTheStepWithoutPausing(t *testing.T) {
	w := newWorld(t, analysedApp())
	prom := newFakePrometheus(0.1, 0.1)
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	for w.ad.Status.Canary == nil || w.ad.Status.Canary.Analysis == nil || len(w.ad.Status.Canary.Analysis.Criteria) == 0 {
		w.runFor(time.Second)
	}
	// One measurement finds no samples (a scrape missed), then data again.
	prom.set(func(f *fakePrometheus) { f.samples[platformv1.TrackCanary] = 0 })
	for w.ad.Status.Canary.Analysis.Criteria[0].LastResult != platformv1.MeasurementNoData {
		w.runFor(time.Second)
	}
	prom.set(func(f *fakePrometheus) { f.samples[platformv1.TrackCanary] = 600 })
	if w.ad.Status.Phase == platformv1.PhasePaused {
		t.Fatalf("paused (%s) on one NoData; failureLimit is 2", w.ad.Status.Message)
	}
	passes := count(w.ad.Status.Canary.Analysis.Criteria[0].Passes)
	w.runFor(20 * time.Second)
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	if got := strings.Join(w.events, ","); strings.Contains(got, EventAnalysisPaused) || passes >= 3 {
		t.Fatalf("events %s, %d passes before the NoData: want no pause, and the step held", got, passes)
	}
}

func TestAnalysis_ReplacingAHeldCanaryIsNoResumption(t *testing.T) {
	w := newWorld(t, analysedApp())
	prom := newFakePrometheus(0.1, 0.1)
	prom.samples[platformv1.TrackCanary] = 0
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runFor(60 * time.Second)
	w.expectPhase(platformv1.PhasePaused, string(platformv1.PauseNoData))
	w.events = nil
	// A newer version replaces the canary the analysis held: that canary's
	// hold did not end because data arrived, so no AnalysisResumed says so.
	w.setImage(image125)
	w.runFor(3 * time.Second)
	if got := strings.Join(w.events, ","); strings.Contains(got, EventAnalysisResumed) {
		t.Fatalf("events %s: a replaced canary is not resumed", got)
	}
	w.expectEvents(EventCanaryReplaced, EventCanaryStarted)
}

func TestAnalysis_OnNoDataRollbackRollsBackAfterFailureLimitNoData(t *testing.T) {
	ad := analysedApp()
	ad.Spec.Rollback.OnNoData = platformv1.NoDataRollback
	w := newWorld(t, ad)
	prom := newFakePrometheus(0.1, 0.1)
	prom.samples[platformv1.TrackCanary] = 0
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runFor(20 * time.Second)
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonRolledBack)
	if o := w.ad.Status.LastOutcome; o.Reason != ReasonAnalysisNoData {
		t.Fatalf("outcome %+v", o)
	}
}

func TestAnalysis_PrometheusOutageStopsTheClockThenPausesAndResumesByItself(t *testing.T) {
	ad := analysedApp()
	ad.Spec.Strategy.CanaryPercent = 0
	ad.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 30, PauseSeconds: ptr.To[int32](30)}}
	w := newWorld(t, ad)
	prom := newFakePrometheus(0.1, 0.1)
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runFor(8 * time.Second)
	until := w.ad.Status.Canary.Step.PauseUntil.DeepCopy()
	prom.set(func(f *fakePrometheus) {
		f.err = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	})
	w.runFor(6 * time.Second)
	// Within the grace: measuring goes on, nothing pauses, nothing fails.
	w.expectPhase(platformv1.PhaseProgressing, platformv1.ReasonCanarying)
	if a := w.ad.Status.Canary.Analysis; a.ProviderErrorSince == nil || count(a.Criteria[0].Errors) == 0 {
		t.Fatalf("analysis %+v during the outage", a)
	}
	w.runFor(60 * time.Second)
	w.expectPhase(platformv1.PhasePaused, string(platformv1.PauseProviderError))
	if !strings.Contains(w.ad.Status.Message, "Prometheus is unreachable (dial failed)") {
		t.Fatalf("message %q does not say why", w.ad.Status.Message)
	}
	w.expectEvents(EventAnalysisPaused)
	outageStart := w.ad.Status.Canary.Analysis.ProviderErrorSince.Time
	prom.set(func(f *fakePrometheus) { f.err = nil })
	w.runFor(6 * time.Second)
	c := w.ad.Status.Canary
	if c == nil || c.Analysis.ProviderErrorSince != nil || c.Step.PauseUntil.Sub(until.Time) < w.now.Add(-6*time.Second).Sub(outageStart) {
		t.Fatalf("after the outage: canary %+v; the pause (until %s) must be lengthened by the outage", c, until)
	}
	w.expectEvents(EventAnalysisResumed)
	w.runFor(60 * time.Second)
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
}

func TestAnalysis_PreflightHoldsTheCanaryBeforeAnyPodWhilePrometheusIsDown(t *testing.T) {
	w := newWorld(t, analysedApp())
	prom := newFakePrometheus(0.1, 0.1)
	prom.err = errors.New("connection refused")
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runFor(30 * time.Second)
	w.expectPhase(platformv1.PhasePaused, string(platformv1.PauseProviderError))
	if w.deployments[platformv1.TrackCanary] != nil || w.podsOf(platformv1.TrackStable) != 3 {
		t.Fatal("the canary's pods were made before the preflight")
	}
	if c := w.ad.Status.Canary; c == nil || c.Analysis == nil || c.Analysis.PreflightAt != nil {
		t.Fatalf("canary %+v", c)
	}
	prom.set(func(f *fakePrometheus) { f.err = nil })
	w.runFor(10 * time.Second)
	if w.podsOf(platformv1.TrackCanary) != 1 {
		t.Fatalf("%d canary pods once Prometheus answers, want 1", w.podsOf(platformv1.TrackCanary))
	}
}

func TestAnalysis_InvalidQueryPausesNamingTheCriterionAndIsNeverPromoted(t *testing.T) {
	refused := &promv1.Error{Type: promv1.ErrBadData, Msg: `1:1: parse error: unknown function with name "rat"`}
	for _, c := range []struct {
		name string
		// at: how long the canary runs before Prometheus refuses its query.
		at time.Duration
	}{{"in the preflight", 0}, {"in a step", 12 * time.Second}} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, analysedApp())
			prom := newFakePrometheus(0.1, 0.1)
			w.prometheus = prom
			w.run()
			w.setImage(image124)
			w.runFor(c.at)
			prom.set(func(f *fakePrometheus) { f.err = refused })
			w.runFor(60 * time.Second)
			w.expectPhase(platformv1.PhasePaused, string(platformv1.PauseInvalidQuery))
			if msg := w.ad.Status.Message; !strings.Contains(msg, "error_rate: invalid") ||
				strings.Count(msg, "error_rate") != 1 {
				t.Fatalf("message %q: want the criterion named once, and why", msg)
			}
			if w.ad.Status.StableVersion != v123 {
				t.Fatalf("stable %s: a canary whose query is refused was promoted", w.ad.Status.StableVersion)
			}
			preflight := w.ad.Status.Canary.Analysis.PreflightAt == nil
			if preflight && (w.deployments[platformv1.TrackCanary] != nil || c.at > 0) {
				t.Fatalf("preflight %v, canary Deployment %v", preflight, w.deployments[platformv1.TrackCanary] != nil)
			}
			if cs := w.ad.Status.Canary.Analysis.Criteria[0]; preflight && cs.Passes != nil {
				t.Fatalf("criterion %+v: a preflight's answers count towards nothing", cs)
			}
			w.expectEvents(EventAnalysisPaused)
			// Fixed where the query goes (a recording rule, a relabelling):
			// the canary goes on by itself.
			prom.set(func(f *fakePrometheus) { f.err = nil })
			w.runFor(40 * time.Second)
			w.run()
			w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
		})
	}
}

// A query Prometheus gives up on every time costs it the whole timeout
// every interval: from the third timeout in a row the measurements space
// out, and an answer brings them back to one an interval.
func TestAnalysis_AQueryThatKeepsTimingOutIsAskedLessOften(t *testing.T) {
	timedOut := &promv1.Error{Type: promv1.ErrTimeout, Msg: "query timed out in expression evaluation"}
	w := newWorld(t, analysedApp())
	prom := newFakePrometheus(0.1, 0.1)
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runFor(12 * time.Second)
	prom.set(func(f *fakePrometheus) { f.err, f.asked = timedOut, 0 })
	w.runFor(120 * time.Second)
	cs := w.ad.Status.Canary.Analysis.Criteria[0]
	// Every 5 s, 24 measurements; with the backoff after the third (2, 4,
	// 8, 10 intervals): at 0, 5, 10, 20, 40, 80 and 130 s.
	measured := count(cs.Errors)
	if measured > 7 || count(cs.ConsecutiveTimeouts) < timeoutsBeforeBackoff {
		t.Fatalf("in 120 s of timeouts: %d measurements, criterion %+v; want at most 7, spaced out", measured, cs)
	}
	if prom.asked > 2*int(measured)+2 {
		t.Fatalf("%d queries for %d measurements", prom.asked, measured)
	}
	prom.set(func(f *fakePrometheus) { f.err = nil })
	w.runFor(60 * time.Second)
	if cs := w.ad.Status.Canary; cs != nil && cs.Analysis != nil && count(cs.Analysis.Criteria[0].ConsecutiveTimeouts) != 0 {
		t.Fatalf("after an answer: %+v, want the timeouts forgotten", cs.Analysis.Criteria[0])
	}
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
}

func TestAnalysis_CompareToStableCatchesACanaryWorseThanStableUnderTheThreshold(t *testing.T) {
	ad := analysedApp()
	ad.Spec.Strategy.CanaryCriteria[0].CompareToStable = platformv1.CompareToStable{MaxDelta: ptr.To(0.1)}
	w := newWorld(t, ad)
	w.prometheus = newFakePrometheus(0.4, 0.05) // under 0.5 %, but 0.35 worse than stable
	w.run()
	w.setImage(image124)
	w.runFor(30 * time.Second)
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonRolledBack)
	if o := w.ad.Status.LastOutcome; o.Reason != ReasonAnalysisFailed || !strings.Contains(o.Message, "stable") {
		t.Fatalf("outcome %+v", o)
	}
}

func TestAnalysis_PodFailureStillRollsBackWhilePrometheusIsDown(t *testing.T) {
	w := newWorld(t, analysedApp())
	prom := newFakePrometheus(0.1, 0.1)
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runFor(2 * time.Second) // the preflight answered; pods are being made
	_, rev := podTemplate(w.ad)
	prom.set(func(f *fakePrometheus) { f.err = errors.New("connection refused") })
	w.unready = func(r string) bool { return r == rev }
	w.fail = func(r string) string {
		if r == rev {
			return imagePullBackOff
		}
		return ""
	}
	w.runFor(10 * time.Second)
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonRolledBack)
	if o := w.ad.Status.LastOutcome; o.Reason != imagePullBackOff {
		t.Fatalf("outcome %+v", o)
	}
}

func TestMeasurer_ABlackHolePrometheusCostsNoWorker(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	m := newMeasurer(blackHole{block}, clocktesting.NewFakePassiveClock(time.Now()), measurerOptions{})
	ad := analysedApp()
	req := &measureRequest{key: measureKey{revision: "r1"}, criteria: ad.Spec.Strategy.CanaryCriteria,
		canary:     analysis.Vars{Namespace: ad.Namespace, Name: ad.Name, Track: platformv1.TrackCanary, Interval: time.Second},
		minSamples: 10, timeout: 200 * time.Millisecond}
	start := time.Now()
	m.start(ad, req)
	m.start(ad, req) // the same measurement is not started twice
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Fatalf("start took %s: it must not wait for Prometheus", d)
	}
	select {
	case <-m.wake:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up after the measurement's timeout")
	}
	got := m.latest(types.NamespacedName{Namespace: ad.Namespace, Name: ad.Name})
	if got == nil || len(got.results) != 1 || got.results[0].Result != platformv1.MeasurementError {
		t.Fatalf("measured %+v, want one Error", got)
	}
}

// blackHole is a Prometheus that never answers until its context ends.
type blackHole struct{ block chan struct{} }

func (b blackHole) Query(ctx context.Context, _ string, _ time.Time) (analysis.Value, error) {
	select {
	case <-ctx.Done():
		return analysis.Value{}, ctx.Err()
	case <-b.block:
		return analysis.Value{}, errors.New("closed")
	}
}

func TestRelease_PassBetweenSecondsIsAskedForWhenThePauseEndsNotASecondLater(t *testing.T) {
	ad := canaryApp()
	ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyCanary,
		Steps: []platformv1.CanaryStep{{Weight: 30, PauseSeconds: ptr.To[int32](30)}}}
	w := newWorld(t, ad)
	w.run()
	w.setImage(image124)
	w.runFor(5 * time.Second)
	c := w.ad.Status.Canary
	if c == nil || c.Step.PauseUntil == nil {
		t.Fatalf("canary %+v: want its step paused", c)
	}
	// A pass 2.4 s before the pause ends, woken by a pod or a resync.
	until := c.Step.PauseUntil.Time
	at := until.Add(-2400 * time.Millisecond)
	p := newPass(w.ad, w.observation(), at)
	p.decide()
	if want := until.Sub(at); p.requeueAfter != want {
		t.Fatalf("requeue after %s, want %s: the pass must come when the pause ends", p.requeueAfter, want)
	}
}

func TestAnalysis_MeasurementIsAskedForItsDueTimeBeforeItIsDue(t *testing.T) {
	w := newWorld(t, analysedApp())
	w.prometheus = newFakePrometheus(0.1, 0.1)
	w.run()
	w.setImage(image124)
	w.runFor(10 * time.Second)
	a := w.ad.Status.Canary.Analysis
	if a == nil || a.MeasuredAt == nil || a.Step == nil {
		t.Fatalf("analysis %+v: want a step measured", a)
	}
	// A pass 1.6 s after a measurement hands the next one to the measurer,
	// which starts it when it is due, without waiting for a worker.
	due := a.MeasuredAt.Add(5 * time.Second)
	p := newPass(w.ad, w.observation(), a.MeasuredAt.Add(1600*time.Millisecond))
	p.decide()
	if p.measure == nil || !p.measure.due.Equal(due) {
		t.Fatalf("measurement asked for %+v, want one due at %s", p.measure, due)
	}
}

func TestMeasurer_AMeasurementAskedForBeforeItIsDueStartsWhenDue(t *testing.T) {
	prom := &countingPrometheus{}
	start := time.Date(2026, 11, 30, 12, 0, 1, 600_000_000, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	m := newMeasurer(prom, clk, measurerOptions{})
	ad := analysedApp()
	due := start.Add(3400 * time.Millisecond)
	req := &measureRequest{key: measureKey{revision: "r1"}, criteria: ad.Spec.Strategy.CanaryCriteria,
		minSamples: 10, timeout: time.Second, due: due}
	m.start(ad, req)
	clk.Step(3399 * time.Millisecond)
	if got := prom.count(); got != 0 {
		t.Fatalf("%d queries before the measurement was due", got)
	}
	clk.Step(time.Millisecond)
	waitWake(t, m)
	got := m.latest(types.NamespacedName{Namespace: ad.Namespace, Name: ad.Name})
	if got == nil || !got.at.Equal(due) {
		t.Fatalf("measured %+v, want it taken at %s", got, due)
	}
}

// countingPrometheus answers every query at once and counts them.
type countingPrometheus struct {
	mu      sync.Mutex
	queries int
}

func (c *countingPrometheus) Query(context.Context, string, time.Time) (analysis.Value, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queries++
	return analysis.Value{Number: 100}, nil
}

func (c *countingPrometheus) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queries
}

// waitWake waits for the measurer's wake-up of a finished measurement.
func waitWake(t *testing.T, m *measurer) {
	t.Helper()
	select {
	case <-m.wake:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up after the measurement")
	}
}

func TestMeasurer_AMeasurementDueIsTakenOnceWhenAskedAgainBeforeItIsRecorded(t *testing.T) {
	prom := &countingPrometheus{}
	due := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(due.Add(50 * time.Millisecond))
	m := newMeasurer(prom, clk, measurerOptions{})
	ad := analysedApp()
	req := &measureRequest{key: measureKey{revision: "r1"}, criteria: ad.Spec.Strategy.CanaryCriteria,
		minSamples: 10, timeout: time.Second, due: due}
	m.start(ad, req)
	waitWake(t, m)
	once := prom.count()
	// A pass that read the status before the answer was recorded asks for
	// the same due measurement again, a second later.
	clk.SetTime(due.Add(1200 * time.Millisecond))
	m.start(ad, req)
	select {
	case <-m.wake:
		t.Fatal("the measurement due was taken a second time")
	case <-time.After(200 * time.Millisecond):
	}
	if got := prom.count(); got != once {
		t.Fatalf("%d queries after asking twice for one due measurement, want %d", got, once)
	}
	// The measurement due next is taken.
	next := *req
	next.due = due.Add(5 * time.Second)
	clk.SetTime(next.due)
	m.start(ad, &next)
	waitWake(t, m)
	if got := prom.count(); got != 2*once {
		t.Fatalf("%d queries after the next due measurement, want %d", got, 2*once)
	}
}
