// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
)

// gatedPrometheus holds every query until released, and records what was in
// flight at once, in all and by the namespace the query is confined to (the
// scope's matcher says which).
type gatedPrometheus struct {
	release chan struct{}

	mu          sync.Mutex
	inFlight    map[string]int
	total       int
	maxTotal    int
	maxByNS     map[string]int
	started     []string // namespaces, in the order their queries started
	down        bool     // answer as an unreachable Prometheus
	queriesSeen int
}

func newGatedPrometheus() *gatedPrometheus {
	return &gatedPrometheus{release: make(chan struct{}, 1000), inFlight: map[string]int{}, maxByNS: map[string]int{}}
}

var confinedTo = regexp.MustCompile(`namespace="([^"]*)"`)

func (g *gatedPrometheus) Query(ctx context.Context, q string, _ time.Time) (analysis.Value, error) {
	ns := "-"
	if m := confinedTo.FindStringSubmatch(q); m != nil {
		ns = m[1]
	}
	g.mu.Lock()
	g.queriesSeen++
	if g.down {
		g.mu.Unlock()
		return analysis.Value{}, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	}
	g.inFlight[ns]++
	g.total++
	g.maxTotal = max(g.maxTotal, g.total)
	g.maxByNS[ns] = max(g.maxByNS[ns], g.inFlight[ns])
	g.started = append(g.started, ns)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight[ns]--
		g.total--
		g.mu.Unlock()
	}()
	select {
	case <-g.release:
		return analysis.Value{Number: 1000}, nil
	case <-ctx.Done():
		return analysis.Value{}, ctx.Err()
	}
}

// startedCount is how many queries have started.
func (g *gatedPrometheus) startedCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.started)
}

// app is an analysed AppDeployment named name in namespace ns, with a custom
// criterion of one query (no samples query), so a measurement is one query.
func measuredApp(ns, name string) (*platformv1.AppDeployment, *measureRequest) {
	ad := analysedApp()
	ad.Namespace, ad.Name = ns, name
	ad.Spec.Strategy.CanaryCriteria = []platformv1.CanaryCriterion{{
		Name: "rps", Query: `sum(rate(http_requests_total{app="{{name}}"}[{{interval}}]))`, SuccessCondition: "result > 0.0",
	}}
	req := &measureRequest{key: measureKey{revision: "r1"}, criteria: ad.Spec.Strategy.CanaryCriteria,
		canary:   analysis.Vars{Namespace: ns, Name: name, Track: platformv1.TrackCanary, Interval: time.Minute},
		interval: time.Minute, timeout: 30 * time.Second}
	return ad, req
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestMeasurer_ANamespaceWithManyCanariesDelaysNobodyElse: twenty canaries
// of one namespace due at once, then one of another: the other's
// measurement starts as soon as a slot frees, before the busy namespace's
// queue has drained, and neither bound is ever exceeded.
func TestMeasurer_ANamespaceWithManyCanariesDelaysNobodyElse(t *testing.T) {
	prom := newGatedPrometheus()
	m := newMeasurer(prom, clock.RealClock{}, measurerOptions{maxInFlight: 3, maxPerNamespace: 2})
	for i := range 20 {
		ad, req := measuredApp("noisy", fmt.Sprintf("app-%d", i))
		m.start(ad, req)
	}
	eventually(t, "noisy's first two queries", func() bool { return prom.startedCount() == 2 })
	// The third slot is free, but noisy is at its own bound.
	time.Sleep(50 * time.Millisecond)
	if n := prom.startedCount(); n != 2 {
		t.Fatalf("%d queries started, want 2: one namespace took more than its bound", n)
	}
	quiet, req := measuredApp("quiet", "shop")
	m.start(quiet, req)
	eventually(t, "quiet's query", func() bool { return prom.startedCount() == 3 })
	for range 20 {
		prom.release <- struct{}{}
	}
	eventually(t, "every measurement", func() bool { return prom.startedCount() == 21 })
	prom.mu.Lock()
	defer prom.mu.Unlock()
	if prom.started[2] != "quiet" {
		t.Errorf("queries started in the order %v: want quiet's third, before noisy's queue drained", prom.started)
	}
	if prom.maxTotal > 3 || prom.maxByNS["noisy"] > 2 {
		t.Errorf("at most %d in flight, %d of noisy: want at most 3 and 2", prom.maxTotal, prom.maxByNS["noisy"])
	}
}

// TestMeasurer_NamespacesAreServedInTurn: with one slot, two namespaces'
// queues are served alternately.
func TestMeasurer_NamespacesAreServedInTurn(t *testing.T) {
	prom := newGatedPrometheus()
	m := newMeasurer(prom, clock.RealClock{}, measurerOptions{maxInFlight: 1, maxPerNamespace: 1})
	for i := range 3 {
		for _, ns := range []string{"a", "b"} {
			ad, req := measuredApp(ns, fmt.Sprintf("app-%d", i))
			m.start(ad, req)
		}
	}
	for i := 1; i <= 6; i++ {
		eventually(t, fmt.Sprintf("query %d", i), func() bool { return prom.startedCount() == i })
		prom.release <- struct{}{}
	}
	prom.mu.Lock()
	defer prom.mu.Unlock()
	if got := strings.Join(prom.started, ""); got != "ababab" {
		t.Errorf("namespaces served in the order %s, want ababab", got)
	}
}

// TestMeasurer_AMeasurementThatWaitsPastItsIntervalIsCountedDelayed: a
// measurement that could not start within its interval says so, in the
// result the pass records and in the metric.
func TestMeasurer_AMeasurementThatWaitsPastItsIntervalIsCountedDelayed(t *testing.T) {
	prom := newGatedPrometheus()
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	m := newMeasurer(prom, clk, measurerOptions{maxInFlight: 1})
	first, req1 := measuredApp("shop", "first")
	second, req2 := measuredApp("shop", "second")
	m.start(first, req1)
	m.start(second, req2)
	eventually(t, "the first query", func() bool { return prom.startedCount() == 1 })
	before := testutil.ToFloat64(measurementsDelayed.WithLabelValues("shop"))
	clk.Step(61 * time.Second)
	prom.release <- struct{}{}
	eventually(t, "the second query", func() bool { return prom.startedCount() == 2 })
	prom.release <- struct{}{}
	app := types.NamespacedName{Namespace: "shop", Name: "second"}
	eventually(t, "the second measurement", func() bool { return m.latest(app) != nil })
	if !m.latest(app).delayed {
		t.Error("the second measurement waited 61 s past its due time with an interval of 60 s: want it delayed")
	}
	if first := m.latest(types.NamespacedName{Namespace: "shop", Name: "first"}); first == nil || first.delayed {
		t.Errorf("the first measurement %+v: want it taken, not delayed", first)
	}
	if got := testutil.ToFloat64(measurementsDelayed.WithLabelValues("shop")) - before; got != 1 {
		t.Errorf("delayed measurements of shop counted %v, want 1", got)
	}
}

// TestMeasurer_WhilePrometheusIsDownOneProbeStandsForEveryCanary: with
// Prometheus unreachable, ten canaries due every second for ten seconds ask
// it once an interval, not ten times; each still gets its Error; and the
// first probe that is answered lets every canary query again.
func TestMeasurer_WhilePrometheusIsDownOneProbeStandsForEveryCanary(t *testing.T) {
	prom := newGatedPrometheus()
	prom.down = true
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	m := newMeasurer(prom, clk, measurerOptions{maxInFlight: 10, maxPerNamespace: 10})
	interval := 5 * time.Second
	measureAll := func(round int) {
		for i := range 10 {
			ad, req := measuredApp("shop", fmt.Sprintf("app-%d", i))
			req.interval, req.canary.Interval = interval, interval
			req.key.step = int32(round) // a new measurement each round
			m.start(ad, req)
		}
		eventually(t, fmt.Sprintf("round %d", round), func() bool {
			for i := range 10 {
				d := m.latest(types.NamespacedName{Namespace: "shop", Name: fmt.Sprintf("app-%d", i)})
				if d == nil || d.key.step != int32(round) {
					return false
				}
			}
			return true
		})
	}
	for round := range 10 {
		measureAll(round)
		for i := range 10 {
			d := m.latest(types.NamespacedName{Namespace: "shop", Name: fmt.Sprintf("app-%d", i)})
			r := d.results[0]
			if r.Result != platformv1.MeasurementError || r.Cause == nil {
				t.Fatalf("round %d: measured %+v while Prometheus is down, want an Error with its cause", round, r)
			}
			if !strings.Contains(r.Message, "Prometheus is unreachable (dial failed)") {
				t.Fatalf("round %d: message %q does not say why Prometheus fails", round, r.Message)
			}
		}
		clk.SetTime(clk.Now().Add(time.Second))
	}
	prom.mu.Lock()
	seen := prom.queriesSeen
	prom.down = false
	prom.mu.Unlock()
	// The first round found it down (up to ten queries at once); after that
	// one probe per 5 s interval: 10 s of rounds make at most two more.
	if seen > 12 {
		t.Errorf("%d queries in 10 s of outage for 10 canaries measured every second: want at most 12", seen)
	}
	clk.SetTime(clk.Now().Add(interval))
	go func() {
		for range 11 {
			prom.release <- struct{}{}
		}
	}()
	measureAll(10)
	for i := range 10 {
		d := m.latest(types.NamespacedName{Namespace: "shop", Name: fmt.Sprintf("app-%d", i)})
		if r := d.results[0]; r.Result != platformv1.MeasurementPass {
			t.Errorf("after the outage app-%d measured %+v, want a Pass", i, r)
		}
	}
}

// TestAnalysis_AnInvalidQueryBacksOffUntilTheSpecChanges: a query
// Prometheus refuses is asked again after 1, 2, 4, 8, then every 10
// intervals, and a change of the spec asks again after one.
func TestAnalysis_AnInvalidQueryBacksOffUntilTheSpecChanges(t *testing.T) {
	ad := analysedApp()
	ad.Generation = 1
	w := newWorld(t, ad)
	prom := newFakePrometheus(0.1, 0.1)
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runFor(10 * time.Second)
	prom.set(func(f *fakePrometheus) { f.err = &promv1.Error{Type: promv1.ErrBadData, Msg: "parse error"} })
	var gaps []time.Duration
	last := w.ad.Status.Canary.Analysis.MeasuredAt.Time
	for range 200 {
		w.runFor(time.Second)
		a := w.ad.Status.Canary.Analysis
		if a.MeasuredAt != nil && a.MeasuredAt.After(last) {
			gaps = append(gaps, a.MeasuredAt.Sub(last))
			last = a.MeasuredAt.Time
		}
	}
	want := []time.Duration{5, 5, 10, 20, 40, 50, 50} // the first is the one that found it Invalid
	for i := range want {
		want[i] *= time.Second
	}
	if len(gaps) < len(want) || fmt.Sprint(gaps[:len(want)]) != fmt.Sprint(want) {
		t.Fatalf("gaps between measurements %v, want %v first", gaps, want)
	}
	// A change of the spec (a new generation) asks again after one interval.
	w.ad.Generation++
	w.ad.Spec.Strategy.CanaryCriteria[0].Threshold = ptr.To(0.6)
	before := last
	w.runFor(6 * time.Second)
	if a := w.ad.Status.Canary.Analysis; !a.MeasuredAt.After(before) {
		t.Errorf("no measurement within an interval of a change of the spec (last %s)", a.MeasuredAt)
	}
}

// TestAnalysis_ADelayedMeasurementIsCountedInStatusAcrossSteps: the count of
// delayed measurements is the canary's: a new step keeps it.
func TestAnalysis_ADelayedMeasurementIsCountedInStatusAcrossSteps(t *testing.T) {
	ad := analysedApp()
	p := newPass(ad, &observation{}, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	a := &platformv1.AnalysisStatus{Step: ptr.To[int32](0)}
	results := []analysis.Measurement{{Name: "error_rate", Result: platformv1.MeasurementPass}}
	p.count(a, &measured{key: measureKey{revision: "r1"}, at: p.now.Time, results: results, delayed: true}, true)
	p.count(a, &measured{key: measureKey{revision: "r1"}, at: p.now.Add(time.Minute), results: results}, true)
	p.count(a, &measured{key: measureKey{revision: "r1"}, at: p.now.Add(2 * time.Minute), results: results, delayed: true}, true)
	if got := ptr.Deref(a.DelayedMeasurements, 0); got != 2 {
		t.Fatalf("delayedMeasurements %d after two delayed measurements of three, want 2", got)
	}
	c := &platformv1.CanaryStatus{Revision: "r1", Step: &platformv1.CanaryStepStatus{Index: ptr.To[int32](1)}, Analysis: a}
	p.analyze(c)
	if got := ptr.Deref(c.Analysis.DelayedMeasurements, 0); got != 2 || ptr.Deref(c.Analysis.Step, -1) != 1 {
		t.Errorf("after the step changed: delayedMeasurements %d of step %v, want 2 kept", got, c.Analysis.Step)
	}
}
