// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/metrics"
)

// Defaults of the measurer's bounds (--analysis-max-in-flight and
// --analysis-max-in-flight-per-namespace). Each measurement in flight holds
// at most one query, so they bound the operator's queries at Prometheus:
// well below a default Prometheus's --query.max-concurrency of 20, which it
// shares with dashboards and rules, and fair between namespaces, so one
// tenant's hundred canaries (or slow queries) cannot take every slot.
const (
	DefaultMaxInFlight             = 8
	DefaultMaxInFlightPerNamespace = 2
)

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
	// measurementLateness is how long a measurement waited past its due
	// time for a slot.
	measurementLateness = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: metrics.Namespace,
		Name:      "appdeployment_analysis_lateness_seconds",
		Help:      "Time from when a canary measurement was due to when it started (waiting for a free slot).",
		Buckets:   []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60},
	})
	// measurementsDelayed counts the measurements that could not start
	// within their interval, by the namespace of their AppDeployment. The
	// namespace is a label because the question it answers is "whose
	// canaries wait", and its values are the namespaces with canaries.
	measurementsDelayed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Name:      "appdeployment_analysis_measurements_delayed_total",
		Help: "Canary measurements that started more than an analysis interval after they were due, " +
			"by namespace: the measurer's slots were taken.",
	}, []string{"namespace"})
)

// errNoPrometheus is the answer of every query when the manager was given
// no Prometheus address.
var errNoPrometheus = &analysis.OwnError{Msg: "the manager has no Prometheus address (--prometheus-address)"}

// measurer takes measurements off the reconcile workers. A pass asks for one
// (start); when it is due it joins its namespace's queue, and a goroutine
// takes it when a slot is free: at most maxInFlight at once, at most
// maxPerNamespace of one namespace, the namespaces served in turn (round
// robin), so a namespace with a hundred canaries waits for its own and
// delays nobody else's. The goroutine queries Prometheus, bounded by the
// request's timeout, keeps the answer, and wakes the AppDeployment through
// wake; the next pass reads it (latest) and records it. A Prometheus that
// accepts connections and never answers costs slots for a bounded time,
// never a worker, so no other AppDeployment (and no other kind) waits for it.
//
// While Prometheus itself fails (unreachable, a 5xx), one probe per
// interval stands in for the queries of every canary: the others' due
// measurements end at once with an Error, as their queries would have,
// and the first probe that gets an answer lets them query again.
type measurer struct {
	provider analysis.Provider
	scope    analysis.Scope
	clock    clock.PassiveClock
	// timers start measurements when they are due.
	timers clock.WithDelayedExecution
	wake   chan event.GenericEvent
	log    logr.Logger

	maxInFlight, maxPerNamespace int

	mu       sync.Mutex
	inFlight map[types.NamespacedName]measureKey
	done     map[types.NamespacedName]*measured
	// waiting are the measurements asked for before they are due, with
	// the timer that queues each.
	waiting map[types.NamespacedName]*waitingMeasurement
	// queued are the measurements due that wait for a slot, by
	// AppDeployment and in each namespace's queue; turns is the order in
	// which namespaces with queued measurements are served, and turn the
	// index of the next one.
	queued  map[types.NamespacedName]*queuedMeasurement
	queues  map[string][]*queuedMeasurement
	turns   []string
	turn    int
	running map[string]int
	total   int
	// down is when Prometheus began to fail (zero when it answers), and
	// downCause the last error that said so; probedAt is when the last
	// probe began, and probing, while one is running, is closed when it
	// has its answer.
	down, probedAt time.Time
	downCause      error
	probing        chan struct{}
}

// waitingMeasurement is a measurement that is queued when it is due.
type waitingMeasurement struct {
	key   measureKey
	due   time.Time
	timer clock.Timer
}

// queuedMeasurement is a due measurement waiting for a slot.
type queuedMeasurement struct {
	app types.NamespacedName
	req *measureRequest
	// since is when it joined the queue: its due time, or when it was asked
	// for when it was due already.
	since time.Time
}

// measurerOptions bound a measurer; zero values take the defaults.
type measurerOptions struct {
	scope                        analysis.Scope
	maxInFlight, maxPerNamespace int
	log                          logr.Logger
}

// newMeasurer returns a measurer that queries provider; a nil provider
// answers every query with an error, so analysed canaries hold with
// ProviderError and say why. A clock that cannot run timers (a passive
// one) leaves them to the real clock.
func newMeasurer(provider analysis.Provider, clk clock.PassiveClock, o measurerOptions) *measurer {
	if provider == nil {
		provider = noProvider{}
	}
	timers, ok := clk.(clock.WithDelayedExecution)
	if !ok {
		timers = clock.RealClock{}
	}
	if o.maxInFlight <= 0 {
		o.maxInFlight = DefaultMaxInFlight
	}
	if o.maxPerNamespace <= 0 {
		o.maxPerNamespace = DefaultMaxInFlightPerNamespace
	}
	if o.log.GetSink() == nil {
		o.log = logr.Discard()
	}
	return &measurer{
		provider:        provider,
		scope:           o.scope,
		clock:           clk,
		timers:          timers,
		wake:            make(chan event.GenericEvent, 1024),
		log:             o.log,
		maxInFlight:     o.maxInFlight,
		maxPerNamespace: min(o.maxPerNamespace, o.maxInFlight),
		inFlight:        map[types.NamespacedName]measureKey{},
		done:            map[types.NamespacedName]*measured{},
		waiting:         map[types.NamespacedName]*waitingMeasurement{},
		queued:          map[types.NamespacedName]*queuedMeasurement{},
		queues:          map[string][]*queuedMeasurement{},
		running:         map[string]int{},
	}
}

// latest is the last finished measurement of an AppDeployment, nil if none.
func (m *measurer) latest(app types.NamespacedName) *measured {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done[app]
}

// start asks for a measurement of an AppDeployment when it is due (at once
// when it is due already), unless one of the same key is in flight or one
// taken since it fell due waits to be recorded. A request for a later time
// replaces the one waiting or queued. The AppDeployment is woken when the
// answer is in.
//
// The second case is a pass that read the status before the answer of the
// measurement due was recorded, and asks for it again after that answer
// came in: taken again a second later, it would count twice.
func (m *measurer) start(ad *platformv1.AppDeployment, req *measureRequest) {
	app := types.NamespacedName{Namespace: ad.Namespace, Name: ad.Name}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	if wait := req.due.Sub(now); wait > 0 {
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
				// A fake clock runs this holding its own lock: the
				// time is the due time, not read again.
				m.enqueue(app, req, req.due)
			}
		})
		m.waiting[app] = w
		return
	}
	m.enqueue(app, req, now)
}

// enqueue puts the measurement of req for app in its namespace's queue,
// unless one of its key is in flight or its due time is measured already,
// and starts what the slots allow; now is the time. The caller holds m.mu.
func (m *measurer) enqueue(app types.NamespacedName, req *measureRequest, now time.Time) {
	if k, ok := m.inFlight[app]; ok && k == req.key {
		return
	}
	if d := m.done[app]; d != nil && d.key == req.key && !d.at.Before(req.due) {
		return
	}
	if q := m.queued[app]; q != nil {
		// Asked again while it waits: the newer request stands, in the
		// same place in the queue.
		q.req = req
		m.dispatch(now)
		return
	}
	since := req.due
	if since.IsZero() || since.After(now) {
		since = now
	}
	// A namespace with canaries has its series of delayed measurements from
	// its first one, at 0: "none delayed" is an answer too, and an alert
	// on its increase needs the series before the first delay.
	measurementsDelayed.WithLabelValues(app.Namespace)
	q := &queuedMeasurement{app: app, req: req, since: since}
	m.queued[app] = q
	if len(m.queues[app.Namespace]) == 0 {
		m.turns = append(m.turns, app.Namespace)
	}
	m.queues[app.Namespace] = append(m.queues[app.Namespace], q)
	m.dispatch(now)
}

// dispatch starts queued measurements while slots are free, taking the
// namespaces in turn and skipping those at their own bound. The caller holds
// m.mu.
func (m *measurer) dispatch(now time.Time) {
	for m.total < m.maxInFlight && len(m.turns) > 0 {
		started := false
		for i := 0; i < len(m.turns); i++ {
			idx := (m.turn + i) % len(m.turns)
			ns := m.turns[idx]
			if m.running[ns] >= m.maxPerNamespace {
				continue
			}
			q := m.queues[ns][0]
			m.queues[ns] = m.queues[ns][1:]
			m.turn = idx + 1
			if len(m.queues[ns]) == 0 {
				m.dropTurn(idx)
			} else if m.turn >= len(m.turns) {
				m.turn = 0
			}
			m.launch(q, now)
			started = true
			break
		}
		if !started {
			return
		}
	}
}

// dropTurn takes the namespace at idx, whose queue is empty, out of the
// turns, keeping the turn on the namespace that was to come next. The
// caller holds m.mu.
func (m *measurer) dropTurn(idx int) {
	delete(m.queues, m.turns[idx])
	m.turns = slices.Delete(m.turns, idx, idx+1)
	if idx < m.turn {
		m.turn--
	}
	if m.turn >= len(m.turns) {
		m.turn = 0
	}
}

// launch starts the measurement of q at now. The caller holds m.mu.
func (m *measurer) launch(q *queuedMeasurement, now time.Time) {
	app, req := q.app, q.req
	delete(m.queued, app)
	m.inFlight[app] = req.key
	m.running[app.Namespace]++
	m.total++
	late := now.Sub(q.since)
	measurementLateness.Observe(late.Seconds())
	delayed := req.interval > 0 && late > req.interval
	if delayed {
		measurementsDelayed.WithLabelValues(app.Namespace).Inc()
	}

	wakeObj := &platformv1.AppDeployment{}
	wakeObj.Namespace, wakeObj.Name = app.Namespace, app.Name
	go func() {
		res := m.measure(app, req)
		res.delayed = delayed
		m.mu.Lock()
		if m.inFlight[app] == req.key {
			delete(m.inFlight, app)
		}
		m.running[app.Namespace]--
		if m.running[app.Namespace] <= 0 {
			delete(m.running, app.Namespace)
		}
		m.total--
		m.done[app] = res
		m.dispatch(m.clock.Now())
		m.mu.Unlock()
		select {
		case m.wake <- event.GenericEvent{Object: wakeObj}:
		default:
			// The queue of wake-ups is full: the pass's own requeue comes.
		}
	}()
}

// measure takes one measurement of every criterion of req, or stands in for
// it while Prometheus fails (see measurer).
func (m *measurer) measure(app types.NamespacedName, req *measureRequest) *measured {
	ctx, cancel := context.WithTimeout(context.Background(), req.timeout)
	defer cancel()
	at := m.clock.Now()
	kind := "step"
	if req.key.preflight {
		kind = "preflight"
	}
	res := &measured{key: req.key, at: at}
	if cause := m.gate(ctx, req, at); cause != nil {
		for _, c := range req.criteria {
			res.results = append(res.results, analysis.Measurement{
				Name: analysis.CriterionName(c), Result: platformv1.MeasurementError, Cause: cause,
				Message: analysis.CriterionName(c) + ": Prometheus did not answer: " + analysis.Cause(cause),
			})
			measurementsTotal.WithLabelValues(string(platformv1.MeasurementError), metricOf(c)).Inc()
		}
		return res
	}
	var failing error
	for _, c := range req.criteria {
		compiled, err := analysis.Compile(c, m.scope)
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
		if r.Cause != nil {
			// Prometheus's own words stay here: they may quote series
			// the tenant must not read.
			m.log.Info("Canary query got no number", "appDeployment", app, "criterion", r.Name,
				"result", r.Result, "error", r.Cause.Error())
			if analysis.ProviderFailed(r.Cause) {
				failing = r.Cause
			}
		}
		measurementsTotal.WithLabelValues(string(r.Result), metricOf(c)).Inc()
		res.results = append(res.results, r)
	}
	if failing != nil {
		m.mu.Lock()
		if m.down.IsZero() {
			m.down, m.probedAt = at, at
		}
		m.downCause = failing
		m.mu.Unlock()
	}
	measurementDuration.WithLabelValues(kind).Observe(m.clock.Since(at).Seconds())
	return res
}

// probeQuery is the probe's query: it reads no series, so its answer
// says only that Prometheus evaluates queries.
const probeQuery = "vector(1)"

// gate decides, while Prometheus fails, whether this measurement probes it
// (once an interval has passed since the last probe, and none is running)
// or stands in without querying; one due while a probe runs waits for the
// probe's answer first; it returns the error to stand in with, or
// nil to query. A probe that gets an answer ends the outage for every
// canary.
func (m *measurer) gate(ctx context.Context, req *measureRequest, at time.Time) error {
	m.mu.Lock()
	if probing := m.probing; probing != nil {
		// A measurement due while the probe runs takes its answer rather
		// than the outage's: the canaries measured in the same instant
		// as the probe that ends an outage all query again.
		m.mu.Unlock()
		select {
		case <-probing:
		case <-ctx.Done():
		}
		m.mu.Lock()
	}
	if m.down.IsZero() {
		m.mu.Unlock()
		return nil
	}
	if m.probing != nil || at.Sub(m.probedAt) < max(req.interval, time.Second) {
		// The cause of the outage, in the operator's words, is what the
		// canary's own queries would have met.
		msg := analysis.Cause(m.downCause) + " (since " + m.down.UTC().Format(time.RFC3339) +
			"; probed once an interval)"
		m.mu.Unlock()
		return &analysis.OwnError{Msg: msg}
	}
	probing := make(chan struct{})
	m.probing, m.probedAt = probing, at
	m.mu.Unlock()

	_, err := m.provider.Query(ctx, probeQuery, at)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.probing = nil
	close(probing)
	if err != nil && analysis.ProviderFailed(err) {
		m.log.Info("Prometheus probe failed", "error", err.Error())
		m.downCause = err
		return err
	}
	m.log.Info("Prometheus answers again", "failingSince", m.down)
	m.down, m.downCause = time.Time{}, nil
	return nil
}

// metricOf is a criterion's metric label: its built-in metric, or query.
func metricOf(c platformv1.CanaryCriterion) string {
	if c.Metric == "" {
		return "query"
	}
	return string(c.Metric)
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
	if q := m.queued[app]; q != nil {
		delete(m.queued, app)
		m.queues[app.Namespace] = slices.DeleteFunc(m.queues[app.Namespace],
			func(o *queuedMeasurement) bool { return o == q })
		if len(m.queues[app.Namespace]) == 0 {
			m.dropTurn(slices.Index(m.turns, app.Namespace))
		}
	}
}

// noProvider is the Provider of a manager without a Prometheus address.
type noProvider struct{}

// Query fails: there is no Prometheus to ask.
func (noProvider) Query(context.Context, string, time.Time) (analysis.Value, error) {
	return analysis.Value{}, errNoPrometheus
}
