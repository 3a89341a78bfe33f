// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package trafficsim

import (
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	platformv1 "github.com/example/platform-operator/api/v1"
)

const (
	// DefaultRate is how many requests per second each ready pod gets.
	DefaultRate = 10.0
	// DefaultTick is how often traffic is added.
	DefaultTick = time.Second

	// RequestsMetric and DurationMetric are the series the operator's
	// built-in canary queries read.
	RequestsMetric = "http_requests_total"
	DurationMetric = "http_request_duration_seconds"
	// HeaderRequestsMetric counts, of a group's requests, those a rule with
	// header matches sent it (a tester's requests): what a gateway's access
	// log would show, and what a test asks to tell them from the rest.
	HeaderRequestsMetric = "trafficsim_header_requests_total"
)

// The codes requests are answered with.
const (
	codeOK    = "200"
	codeError = "500"
)

// DurationBuckets are the upper bounds of http_request_duration_seconds.
// histogram_quantile interpolates linearly inside the bucket that holds the
// quantile, so a latency is resolved well only when it is a bucket's upper
// bound: with 0.05 and 2 among them, the p95 of requests that all take 2 s
// comes out as 1.95 (1 + 0.95 × (2 - 1)) and of requests that all take
// 0.05 s as 0.04875, where Prometheus's default buckets (no 2) would say
// 2.425 for the former.
var DurationBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 2.5, 5, 10}

// Group names the pods whose requests share one set of series: the pods of
// one revision on one track of one app, as a PodMonitor would label their
// samples.
type Group struct {
	Namespace, App, Track, Revision string
}

// GroupState is what the simulator knows of a group's pods.
type GroupState struct {
	// Pods counts the group's pods, Ready those with condition Ready=True;
	// only ready pods get requests, as only they are behind a Service.
	Pods, Ready int
	// Image is the first container's image of the group's pods (one
	// revision, so one image), which chooses the group's Behaviour.
	Image string
}

// Options configure a Simulator.
type Options struct {
	// Rate is how many requests per second each ready pod gets; DefaultRate
	// when zero.
	Rate float64
	// Tick is how often Serve adds traffic; DefaultTick when zero.
	Tick time.Duration
	// Log gets one line per change of a group; nothing is logged when unset.
	Log logr.Logger
}

// Simulator keeps the groups of pods it was told about and the request
// metrics of their simulated traffic. Its methods may be called
// concurrently.
type Simulator struct {
	rate float64
	tick time.Duration
	log  logr.Logger

	registry *prometheus.Registry
	requests *prometheus.CounterVec
	header   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	ready    chan struct{}

	mu     sync.Mutex
	pods   map[types.NamespacedName]podRecord
	groups map[Group]*groupState
	// podLabels are the pods' labels, which Services select by; routes,
	// services and turns are the routed traffic's (routing.go).
	podLabels map[types.NamespacedName]map[string]string
	routes    map[types.NamespacedName][]*routeRule
	services  map[types.NamespacedName]labels.Selector
	turns     map[types.NamespacedName]int
}

// podRecord is what a pod contributes to its group.
type podRecord struct {
	group Group
	ready bool
	image string
}

// groupState is a group's GroupState and its share of a request not yet
// observed.
type groupState struct {
	GroupState
	// carry is the fraction of a request that the counters have counted and
	// the histogram has not observed yet: counters take fractions of a
	// request, a histogram observes whole ones, and carrying the remainder
	// keeps the histogram's count within one request of the counters' sum.
	carry float64
}

// New returns a Simulator that knows no pods yet.
func New(o Options) (*Simulator, error) {
	if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) {
		return nil, fmt.Errorf("rate %v: must be a non-negative number of requests per second", o.Rate)
	}
	if o.Tick < 0 {
		return nil, fmt.Errorf("tick %s: must not be negative", o.Tick)
	}
	if o.Rate == 0 {
		o.Rate = DefaultRate
	}
	if o.Tick == 0 {
		o.Tick = DefaultTick
	}
	groupLabels := []string{"namespace", "app", "track", "revision"}
	s := &Simulator{
		rate: o.Rate,
		tick: o.Tick,
		log:  o.Log,
		// A registry of its own: the process's default one would add Go
		// runtime series, and an in-process simulator would share it with
		// whatever else the test binary registers.
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: RequestsMetric,
			Help: "Simulated HTTP requests by response code.",
		}, append(groupLabels, "code")),
		header: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: HeaderRequestsMetric,
			Help: "Simulated HTTP requests that a rule with header matches sent, of those counted by " + RequestsMetric + ".",
		}, groupLabels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    DurationMetric,
			Help:    "Simulated HTTP request latency in seconds.",
			Buckets: DurationBuckets,
		}, groupLabels),
		ready:     make(chan struct{}),
		pods:      map[types.NamespacedName]podRecord{},
		groups:    map[Group]*groupState{},
		podLabels: map[types.NamespacedName]map[string]string{},
		routes:    map[types.NamespacedName][]*routeRule{},
		services:  map[types.NamespacedName]labels.Selector{},
		turns:     map[types.NamespacedName]int{},
	}
	s.registry.MustRegister(s.requests, s.header, s.duration)
	return s, nil
}

// Handler serves the simulator's metrics in the Prometheus exposition
// format.
func (s *Simulator) Handler() http.Handler {
	return promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})
}

// Gatherer returns the registry Handler serves.
func (s *Simulator) Gatherer() prometheus.Gatherer {
	return s.registry
}

// GroupOf returns the group of a pod, and false for a pod outside any: one
// without the app or the track label. A pod without a revision label is in
// the group of revision "".
func GroupOf(pod *corev1.Pod) (Group, bool) {
	app, hasApp := pod.Labels[platformv1.AppNameLabel]
	track, hasTrack := pod.Labels[platformv1.TrackLabel]
	if !hasApp || !hasTrack {
		return Group{}, false
	}
	return Group{Namespace: pod.Namespace, App: app, Track: track, Revision: pod.Labels[platformv1.RevisionLabel]}, true
}

// isReady reports whether the pod's Ready condition is True.
func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// SetPod records the pod as it is now: its group, whether it is ready, its
// first container's image. A pod that has lost its group's labels is
// forgotten.
func (s *Simulator) SetPod(pod *corev1.Pod) {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	g, ok := GroupOf(pod)
	if !ok {
		s.DeletePod(key)
		return
	}
	rec := podRecord{group: g, ready: isReady(pod)}
	if len(pod.Spec.Containers) > 0 {
		rec.image = pod.Spec.Containers[0].Image
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.podLabels[key] = pod.Labels
	old, had := s.pods[key]
	if had && old == rec {
		return
	}
	touched := []Group{g}
	if had && old.group != g {
		touched = append(touched, old.group)
	}
	before := s.states(touched)
	if had {
		s.remove(old)
	}
	s.pods[key] = rec
	st := s.groups[g]
	if st == nil {
		st = &groupState{}
		s.groups[g] = st
	}
	st.Pods++
	if rec.ready {
		st.Ready++
	}
	st.Image = rec.image
	s.report(before)
}

// DeletePod forgets a pod. A group left without pods loses its series, as a
// real app's do (they go stale) when its last pod, and so the last target
// that served them, is gone.
func (s *Simulator) DeletePod(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.pods[key]
	if !had {
		return
	}
	before := s.states([]Group{old.group})
	s.remove(old)
	delete(s.pods, key)
	delete(s.podLabels, key)
	s.report(before)
}

// remove takes a pod's record out of its group's counts. The caller holds
// s.mu.
func (s *Simulator) remove(rec podRecord) {
	st := s.groups[rec.group]
	st.Pods--
	if rec.ready {
		st.Ready--
	}
}

// states returns the current state of groups (zero for a group not known).
// The caller holds s.mu.
func (s *Simulator) states(groups []Group) map[Group]GroupState {
	out := make(map[Group]GroupState, len(groups))
	for _, g := range groups {
		if st := s.groups[g]; st != nil {
			out[g] = st.GroupState
		} else {
			out[g] = GroupState{}
		}
	}
	return out
}

// report logs each group whose state differs from before, makes the series
// of a group that has just got ready pods (at zero, so that the first tick's
// requests are an increase Prometheus can see) and deletes the series of a
// group left without pods. The caller holds s.mu.
func (s *Simulator) report(before map[Group]GroupState) {
	for g, was := range before {
		st := s.groups[g]
		if st.GroupState == was {
			continue
		}
		b := BehaviourOf(st.Image)
		s.log.Info("Group changed", "namespace", g.Namespace, "app", g.App, "track", g.Track,
			"revision", g.Revision, "pods", st.Pods, "readyPods", st.Ready, "image", st.Image, "behaviour", b.String())
		switch {
		case st.Pods == 0:
			of := prometheus.Labels{"namespace": g.Namespace, "app": g.App, "track": g.Track, "revision": g.Revision}
			s.requests.DeletePartialMatch(of)
			s.header.DeletePartialMatch(of)
			s.duration.DeletePartialMatch(of)
			delete(s.groups, g)
		case st.Ready > 0 && was.Ready == 0 && !b.Idle:
			s.requests.WithLabelValues(g.Namespace, g.App, g.Track, g.Revision, codeOK)
			s.requests.WithLabelValues(g.Namespace, g.App, g.Track, g.Revision, codeError)
			s.duration.WithLabelValues(g.Namespace, g.App, g.Track, g.Revision)
		}
	}
}

// Groups returns the state of every group the simulator knows.
func (s *Simulator) Groups() map[Group]GroupState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[Group]GroupState, len(s.groups))
	for g, st := range s.groups {
		out[g] = st.GroupState
	}
	return out
}

// Tick adds the requests of elapsed time: to each group with ready pods,
// rate × ready pods × elapsed seconds requests, split by its Behaviour into
// codes 500 and 200 and observed at its latency. The counters are floats,
// so the split is exact at every tick and an error ratio computed from them
// is the Behaviour's own, whatever the scrape timing.
func (s *Simulator) Tick(elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts, header, routed := s.routedRequests(elapsed.Seconds())
	for g, st := range s.groups {
		b := BehaviourOf(st.Image)
		if st.Ready == 0 || b.Idle {
			continue
		}
		n := s.rate * float64(st.Ready) * elapsed.Seconds()
		if routed[g] {
			// Behind a served route: the route's requests, whole ones.
			n = float64(counts[g])
			if h := header[g]; h > 0 {
				s.header.WithLabelValues(g.Namespace, g.App, g.Track, g.Revision).Add(float64(h))
			}
		}
		errs := n * b.ErrorRatio
		s.requests.WithLabelValues(g.Namespace, g.App, g.Track, g.Revision, codeError).Add(errs)
		s.requests.WithLabelValues(g.Namespace, g.App, g.Track, g.Revision, codeOK).Add(n - errs)

		// A tolerance keeps 29.999999 (a sum of fractions) from losing a
		// whole request to rounding until the next tick.
		st.carry += n
		whole := math.Floor(st.carry + 1e-9)
		st.carry = max(st.carry-whole, 0)
		h := s.duration.WithLabelValues(g.Namespace, g.App, g.Track, g.Revision)
		latency := b.Latency.Seconds()
		for range int(whole) {
			h.Observe(latency)
		}
	}
}
