// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package recorder sends the controllers' events (events.k8s.io/v1) to the
// API server from a bounded queue, without the series cache of client-go's
// events broadcaster.
//
// That broadcaster (which the manager's GetEventRecorder uses) keeps a copy
// of every event it sent for six to twelve minutes, to turn a repeat of the
// same event into a series. The controllers send events on transitions only
// (a run started, a run finished, a CronJob created), each naming its own
// object: they never repeat, so the cache only holds them. After a burst of
// 20,000 finished runs it held some 40,000 events, about 20 MiB of the
// manager's memory (docs/performance.md, figure 3). It also starts one
// goroutine per event, so an API server that does not answer grows the
// manager without bound. Here the events are made by client-go's own
// recorder (names, times, references, reporting instance, as ever) and sent
// by a few workers from a queue of fixed length; when the queue is full,
// an event is dropped and counted.
//
// No tenant's events crowd out another's: events about one object are
// limited by a token bucket per object (DefaultObjectBurst, then one per
// DefaultObjectEvery; the rest are counted as limited), and the queue is a
// FIFO per namespace served round robin, of which one namespace may fill
// at most a quarter.
package recorder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/example/platform-operator/internal/text"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/example/platform-operator/internal/metrics"
)

// Defaults of Options.
const (
	// DefaultQueueLength holds a burst of a few thousand runs' events (a
	// few MiB at most) while the workers send them.
	DefaultQueueLength = 4096
	// DefaultWorkers send events in parallel. Each waits for the API
	// server's answer, so with a busy server (tens of milliseconds a
	// create) four of them sent fewer events a second than a growth of
	// thousands of runs records; sixteen keep the events client's rate
	// limiter, not the round trips, the bound.
	DefaultWorkers = 16
	// shutdownGrace is how long the queue is still sent once the manager
	// stops, so the last transitions are not lost.
	shutdownGrace = 5 * time.Second
)

// sendBackoff paces the retries of an event the API server did not take
// for a reason that may pass (it is unreachable, overloaded, timing out):
// five tries over about fifteen seconds, as the queue behind it waits.
var sendBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.25, Steps: 4}

var (
	// EventsSent counts events by outcome: sent, dropped (the queue, or
	// the namespace's share of it, was full), limited (too many about one
	// object), namespace_gone (its namespace was being deleted or gone, so
	// nobody could read it), failed (the API server refused it otherwise
	// or never answered).
	EventsSent = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Name:      "events_total",
		Help: "Events the controllers emitted, by outcome: sent, dropped (the send queue or the namespace's share of it was full), " +
			"limited (too many events about one object), namespace_gone (its namespace was being deleted or gone), failed.",
	}, []string{"outcome"})
	// EventsQueued is the number of events waiting to be sent.
	EventsQueued = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Name:      "events_queued",
		Help:      "Events waiting in the send queue.",
	})
)

// Outcomes of an event, the values of EventsSent's label.
const (
	OutcomeSent    = "sent"
	OutcomeDropped = "dropped"
	OutcomeLimited = "limited"
	OutcomeFailed  = "failed"
	// OutcomeNamespaceGone is an event the API server refused because its
	// namespace is being deleted or no longer exists: no one can read it,
	// so it is neither sent nor a loss.
	OutcomeNamespaceGone = "namespace_gone"
)

func init() {
	metrics.Registry.MustRegister(EventsSent, EventsQueued)
	for _, o := range []string{OutcomeSent, OutcomeDropped, OutcomeLimited, OutcomeNamespaceGone, OutcomeFailed} {
		EventsSent.WithLabelValues(o)
	}
}

// Options tunes a Provider; zero values take the defaults.
type Options struct {
	QueueLength int
	Workers     int
	// MaxQueuedPerNamespace is the most events of one namespace the queue
	// holds; a quarter of QueueLength by default.
	MaxQueuedPerNamespace int
	// ObjectBurst and ObjectEvery are the token bucket of each object's
	// events (DefaultObjectBurst, DefaultObjectEvery).
	ObjectBurst int
	ObjectEvery time.Duration
	// Clock refills the buckets; the real clock by default.
	Clock clock.PassiveClock
}

// withDefaults fills the zero values of o.
func (o Options) withDefaults() Options {
	if o.QueueLength <= 0 {
		o.QueueLength = DefaultQueueLength
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.MaxQueuedPerNamespace <= 0 {
		o.MaxQueuedPerNamespace = max(o.QueueLength/4, 1)
	}
	if o.ObjectBurst <= 0 {
		o.ObjectBurst = DefaultObjectBurst
	}
	if o.ObjectEvery <= 0 {
		o.ObjectEvery = DefaultObjectEvery
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

// Provider makes the controllers' recorders and sends what they record. It
// is a manager runnable that runs on every replica (a recorder used before
// it starts queues its events).
type Provider struct {
	scheme      *runtime.Scheme
	client      eventsv1client.EventsV1Interface
	broadcaster events.EventBroadcaster
	queue       *fairQueue
	limiter     *objectLimiter
	workers     int
	stopWatch   func()
	once        sync.Once
}

// New makes a Provider that sends through a client built from cfg, with a
// rate limiter of its own: cfg's rate, and a burst as long as the queue, so
// a burst of transitions that fits the queue is sent as fast as the API
// server takes it instead of waiting in the queue for tokens (where the
// next burst would find it full), and the controllers' own requests never
// wait behind events.
func New(cfg *rest.Config, scheme *runtime.Scheme, o Options) (*Provider, error) {
	o = o.withDefaults()
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter = nil
	cfg.Burst = max(cfg.Burst, o.QueueLength)
	c, err := eventsv1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("events client: %w", err)
	}
	return NewWithClient(c, scheme, o)
}

// NewWithClient makes a Provider that sends through c.
func NewWithClient(c eventsv1client.EventsV1Interface, scheme *runtime.Scheme, o Options) (*Provider, error) {
	o = o.withDefaults()
	p := &Provider{
		scheme: scheme, client: c, workers: o.Workers,
		// The sink is never started: the broadcaster only makes and
		// distributes events; this package sends them.
		broadcaster: events.NewBroadcaster(&events.EventSinkImpl{Interface: c}),
		queue:       newFairQueue(o.QueueLength, o.MaxQueuedPerNamespace),
		limiter:     newObjectLimiter(o.Clock, o.ObjectBurst, o.ObjectEvery),
	}
	// Watching from the start, so no event recorded before Start is lost:
	// it waits in the queue.
	stop, err := p.broadcaster.StartEventWatcher(p.enqueue)
	if err != nil {
		return nil, fmt.Errorf("watch recorded events: %w", err)
	}
	p.stopWatch = stop
	return p, nil
}

// Recorder returns a recorder whose events name controller as their
// reporting controller.
func (p *Provider) Recorder(controller string) events.EventRecorder {
	return p.broadcaster.NewRecorder(p.scheme, controller)
}

// MaxNoteBytes is the longest note an events.k8s.io Event takes, in bytes.
const MaxNoteBytes = 1024

// enqueue takes one recorded event; it never blocks the recorder.
func (p *Provider) enqueue(obj runtime.Object) {
	ev, ok := obj.(*eventsv1.Event)
	if !ok {
		return
	}
	// The API server refuses a longer note, and the event with it: every
	// note is cut here, once, rather than by each caller.
	ev.Note = text.TruncateBytes(ev.Note, MaxNoteBytes)
	switch {
	case !p.limiter.allow(ev):
		EventsSent.WithLabelValues(OutcomeLimited).Inc()
	case p.queue.push(ev):
		EventsQueued.Inc()
	default:
		EventsSent.WithLabelValues(OutcomeDropped).Inc()
	}
}

// NeedLeaderElection reports that every replica sends its events.
func (p *Provider) NeedLeaderElection() bool { return false }

// Start sends queued events until ctx ends, then for up to shutdownGrace
// more what is left, and stops the broadcaster.
func (p *Provider) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range p.workers {
		wg.Go(func() {
			for {
				ev, ok := p.queue.pop(ctx)
				if !ok {
					return
				}
				EventsQueued.Dec()
				p.send(ctx, ev)
			}
		})
	}
	<-ctx.Done()
	wg.Wait()
	p.stop()
	return nil
}

// stop stops watching the broadcaster and sends what is left in the queue
// for up to shutdownGrace.
func (p *Provider) stop() {
	p.once.Do(func() {
		p.stopWatch()
		p.broadcaster.Shutdown()
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		for {
			ev, ok := p.queue.tryPop()
			if !ok {
				return
			}
			EventsQueued.Dec()
			p.send(ctx, ev)
		}
	})
}

// send creates ev, retrying while the API server is unreachable or
// overloaded; an event it refuses otherwise is malformed and retrying would
// not help.
func (p *Provider) send(ctx context.Context, ev *eventsv1.Event) {
	err := wait.ExponentialBackoffWithContext(ctx, sendBackoff, func(ctx context.Context) (bool, error) {
		_, err := p.client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
			return true, nil
		case retriable(err):
			return false, nil
		default:
			return false, err
		}
	})
	switch {
	case err == nil:
		EventsSent.WithLabelValues(OutcomeSent).Inc()
		return
	case namespaceGone(err):
		// Events about a namespace's objects still queued when it is
		// deleted: not worth an error in the log.
		EventsSent.WithLabelValues(OutcomeNamespaceGone).Inc()
		return
	}
	EventsSent.WithLabelValues(OutcomeFailed).Inc()
	if errors.Is(err, context.Canceled) {
		return
	}
	ctrl.Log.WithName("events").Error(err, "Event not sent", "namespace", ev.Namespace,
		"regarding", ev.Regarding.Name, "reason", ev.Reason)
}

// retriable reports whether an error of a create may pass with time: no
// answer at all, or an answer that says the server is busy or failing.
// namespaceGone reports whether the API server refused an event because
// its namespace is being deleted (NamespaceLifecycle admits no new
// object into a terminating namespace, events included) or is gone.
func namespaceGone(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || apierrors.IsNotFound(err)
}

func retriable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)
}
