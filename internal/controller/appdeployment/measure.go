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
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/metrics"
)

// maxMeasurements bounds the measurements in flight at once: each is a
// goroutine holding at most one Prometheus query, for at most its timeout.
const maxMeasurements = 32

var (
	// measurementsTotal counts the measurements of criteria by result, and
	// by metric (the built-in metric's name, or "query").
	measurementsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Name:      "appdeployment_analysis_measurements_total",
		Help: "Measurements of canary criteria by result (Pass, Fail, NoData, Error, Invalid) and metric " +
			"(a built-in metric, or query for a PromQL criterion).",
	}, []string{"result", "metric"})
	// measurementDuration is how long one measurement of all of a canary's
	// criteria took.
	measurementDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metrics.Namespace,
		Name:      "appdeployment_analysis_duration_seconds",
		Help:      "Time one measurement of a canary's criteria took, by kind (preflight or step).",
		Buckets:   []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"kind"})
)

// errNoPrometheus is the answer of every query when the manager was given
// no Prometheus address.
var errNoPrometheus = errors.New("the manager has no Prometheus address (--prometheus-address)")

// measurer takes measurements off the reconcile workers. A pass asks for one
// (start); a goroutine queries Prometheus, bounded by the request's timeout,
// keeps the answer, and wakes the AppDeployment through wake; the next pass
// reads it (latest) and records it. A Prometheus that accepts connections
// and never answers costs goroutines for a bounded time, never a worker, so
// no other AppDeployment (and no other kind) waits for it.
type measurer struct {
	provider analysis.Provider
	clock    clock.PassiveClock
	// timers start measurements when they are due.
	timers clock.WithDelayedExecution
	wake   chan event.GenericEvent
	slots  chan struct{}

	mu       sync.Mutex
	inFlight map[types.NamespacedName]measureKey
	done     map[types.NamespacedName]*measured
	// waiting are the measurements asked for before they are due, with
	// the timer that starts each.
	waiting map[types.NamespacedName]*waitingMeasurement
}

// waitingMeasurement is a measurement that starts when it is due.
type waitingMeasurement struct {
	key   measureKey
	due   time.Time
	timer clock.Timer
}

// newMeasurer returns a measurer that queries provider; a nil provider
// answers every query with an error, so analysed canaries hold with
// ProviderError and say why. A clock that cannot run timers (a passive
// one) leaves them to the real clock.
func newMeasurer(provider analysis.Provider, clk clock.PassiveClock) *measurer {
	if provider == nil {
		provider = noProvider{}
	}
	timers, ok := clk.(clock.WithDelayedExecution)
	if !ok {
		timers = clock.RealClock{}
	}
	return &measurer{
		provider: provider,
		clock:    clk,
		timers:   timers,
		wake:     make(chan event.GenericEvent, maxMeasurements),
		slots:    make(chan struct{}, maxMeasurements),
		inFlight: map[types.NamespacedName]measureKey{},
		done:     map[types.NamespacedName]*measured{},
		waiting:  map[types.NamespacedName]*waitingMeasurement{},
	}
}

// latest is the last finished measurement of an AppDeployment, nil if none.
func (m *measurer) latest(app types.NamespacedName) *measured {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done[app]
}

// start begins a measurement for an AppDeployment when it is due (at once
// when it is due already), unless one of the same key is in flight, one
// taken since it fell due waits to be recorded, or every slot is taken (the
// pass asks again later). A request for a later time replaces the one
// waiting. The AppDeployment is woken when the answer is in.
//
// The second case is a pass that read the status before the answer of the
// measurement due was recorded, and asks for it again after that answer
// came in: taken again a second later, it would count twice.
func (m *measurer) start(ad *platformv1.AppDeployment, req *measureRequest) {
	app := types.NamespacedName{Namespace: ad.Namespace, Name: ad.Name}
	m.mu.Lock()
	defer m.mu.Unlock()
	if wait := req.due.Sub(m.clock.Now()); wait > 0 {
		if w := m.waiting[app]; w != nil {
			if w.key == req.key && w.due.Equal(req.due) {
				return
			}
			w.timer.Stop()
		}
		w := &waitingMeasurement{key: req.key, due: req.due}
		w.timer = m.timers.AfterFunc(wait, func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.waiting[app] == w {
				delete(m.waiting, app)
				m.launch(app, req)
			}
		})
		m.waiting[app] = w
		return
	}
	m.launch(app, req)
}

// launch starts the measurement of req for app now, unless one of its key is
// in flight, its due time is measured already or no slot is free. The
// caller holds m.mu.
func (m *measurer) launch(app types.NamespacedName, req *measureRequest) {
	if k, ok := m.inFlight[app]; ok && k == req.key {
		return
	}
	if d := m.done[app]; d != nil && d.key == req.key && !d.at.Before(req.due) {
		return
	}
	select {
	case m.slots <- struct{}{}:
	default:
		return
	}
	m.inFlight[app] = req.key

	wakeObj := &platformv1.AppDeployment{}
	wakeObj.Namespace, wakeObj.Name = app.Namespace, app.Name
	go func() {
		defer func() { <-m.slots }()
		res := m.measure(req)
		m.mu.Lock()
		if m.inFlight[app] == req.key {
			delete(m.inFlight, app)
		}
		m.done[app] = res
		m.mu.Unlock()
		select {
		case m.wake <- event.GenericEvent{Object: wakeObj}:
		default:
			// The queue of wake-ups is full: the pass's own requeue comes.
		}
	}()
}

// measure takes one measurement of every criterion of req.
func (m *measurer) measure(req *measureRequest) *measured {
	ctx, cancel := context.WithTimeout(context.Background(), req.timeout)
	defer cancel()
	at := m.clock.Now()
	kind := "step"
	if req.key.preflight {
		kind = "preflight"
	}
	res := &measured{key: req.key, at: at}
	for _, c := range req.criteria {
		compiled, err := analysis.Compile(c)
		var r analysis.Measurement
		switch {
		case err != nil:
			r = analysis.Measurement{Name: analysis.CriterionName(c), Result: platformv1.MeasurementInvalid, Message: err.Error()}
		case req.key.preflight:
			r = analysis.Preflight(ctx, m.provider, compiled, req.stable, at)
		default:
			r = analysis.Measure(ctx, m.provider, compiled, req.canary, req.stable, req.minSamples, at)
		}
		if err == nil {
			r.Threshold = compiled.Threshold()
		}
		metric := string(c.Metric)
		if metric == "" {
			metric = "query"
		}
		measurementsTotal.WithLabelValues(string(r.Result), metric).Inc()
		res.results = append(res.results, r)
	}
	measurementDuration.WithLabelValues(kind).Observe(m.clock.Since(at).Seconds())
	return res
}

// forget drops what is kept of a deleted AppDeployment.
func (m *measurer) forget(app types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.done, app)
	if w := m.waiting[app]; w != nil {
		w.timer.Stop()
		delete(m.waiting, app)
	}
}

// noProvider is the Provider of a manager without a Prometheus address.
type noProvider struct{}

// Query fails: there is no Prometheus to ask.
func (noProvider) Query(context.Context, string, time.Time) (analysis.Value, error) {
	return analysis.Value{}, errNoPrometheus
}
