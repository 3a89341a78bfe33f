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
	wake     chan event.GenericEvent
	slots    chan struct{}

	mu       sync.Mutex
	inFlight map[types.NamespacedName]measureKey
	done     map[types.NamespacedName]*measured
}

// newMeasurer returns a measurer that queries provider; a nil provider
// answers every query with an error, so analysed canaries hold with
// ProviderError and say why.
func newMeasurer(provider analysis.Provider, clk clock.PassiveClock) *measurer {
	if provider == nil {
		provider = noProvider{}
	}
	return &measurer{
		provider: provider,
		clock:    clk,
		wake:     make(chan event.GenericEvent, maxMeasurements),
		slots:    make(chan struct{}, maxMeasurements),
		inFlight: map[types.NamespacedName]measureKey{},
		done:     map[types.NamespacedName]*measured{},
	}
}

// latest is the last finished measurement of an AppDeployment, nil if none.
func (m *measurer) latest(app types.NamespacedName) *measured {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done[app]
}

// start begins a measurement for an AppDeployment unless one of the same
// key is in flight or every slot is taken (the pass asks again later). The
// AppDeployment object is passed to wake it when the answer is in.
func (m *measurer) start(ad *platformv1.AppDeployment, req *measureRequest) {
	app := types.NamespacedName{Namespace: ad.Namespace, Name: ad.Name}
	m.mu.Lock()
	if k, ok := m.inFlight[app]; ok && k == req.key {
		m.mu.Unlock()
		return
	}
	select {
	case m.slots <- struct{}{}:
	default:
		m.mu.Unlock()
		return
	}
	m.inFlight[app] = req.key
	m.mu.Unlock()

	wakeObj := &platformv1.AppDeployment{}
	wakeObj.Namespace, wakeObj.Name = ad.Namespace, ad.Name
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
}

// noProvider is the Provider of a manager without a Prometheus address.
type noProvider struct{}

// Query fails: there is no Prometheus to ask.
func (noProvider) Query(context.Context, string, time.Time) (analysis.Value, error) {
	return analysis.Value{}, errNoPrometheus
}
