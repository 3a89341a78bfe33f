// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package recorder

import (
	"context"
	"sync"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/utils/clock"
)

// Defaults of the per-object limit and the namespaces' shares.
const (
	// DefaultObjectBurst events about one object are sent at once; after
	// that one more every DefaultObjectEvery. The controllers send an
	// event per transition, a few per run at most, so an object only
	// reaches the limit when something makes it flap (a tenant fighting the
	// operator over a child, a run loop gone wrong): its events then cost
	// the API server one write per DefaultObjectEvery, not one per flap.
	// The burst is client-go's own spam filter's (25 per object); the
	// refill is faster than its one per five minutes, since these events
	// are transitions, not repeats.
	DefaultObjectBurst = 25
	DefaultObjectEvery = 5 * time.Second
	// pruneEvery is how many events pass between sweeps of the full
	// buckets, which hold nothing a fresh bucket would not.
	pruneEvery = 1024
)

// objectLimiter is a token bucket per object an event is about.
type objectLimiter struct {
	clock clock.PassiveClock
	burst float64
	every time.Duration

	mu      sync.Mutex
	buckets map[string]*bucket
	seen    int
}

// bucket holds the tokens of one object at a time.
type bucket struct {
	tokens float64
	at     time.Time
}

func newObjectLimiter(clk clock.PassiveClock, burst int, every time.Duration) *objectLimiter {
	return &objectLimiter{clock: clk, burst: float64(burst), every: every, buckets: map[string]*bucket{}}
}

// allow takes a token of the object ev is about, and reports whether there
// was one.
func (l *objectLimiter) allow(ev *eventsv1.Event) bool {
	key := objectKey(ev)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	if l.seen++; l.seen%pruneEvery == 0 {
		l.prune(now)
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.every))
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// prune drops the buckets that have filled up again, so the memory follows
// the objects with recent events, not every object ever reported.
func (l *objectLimiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+float64(now.Sub(b.at))/float64(l.every) >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// objectKey names the object an event is about: its UID, else its kind,
// namespace and name.
func objectKey(ev *eventsv1.Event) string {
	r := ev.Regarding
	if r.UID != "" {
		return string(r.UID)
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// fairQueue holds the events waiting to be sent, a FIFO per namespace,
// and hands them out round robin between namespaces: a namespace with a
// thousand events queued delays another's next event by one send, not a
// thousand. Each namespace may hold at most perNamespace of the queue's
// length, so one namespace cannot fill it and have everyone else's
// events dropped.
type fairQueue struct {
	// ready holds a token per queued event, so a worker can wait for one
	// or for its context.
	ready        chan struct{}
	perNamespace int

	mu     sync.Mutex
	byNS   map[string][]*eventsv1.Event
	turn   []string // namespaces with queued events, the next to send first
	length int
}

func newFairQueue(length, perNamespace int) *fairQueue {
	return &fairQueue{ready: make(chan struct{}, length), perNamespace: perNamespace, byNS: map[string][]*eventsv1.Event{}}
}

// push queues ev and reports whether there was room for it.
func (q *fairQueue) push(ev *eventsv1.Event) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	queued := q.byNS[ev.Namespace]
	if q.length == cap(q.ready) || len(queued) >= q.perNamespace {
		return false
	}
	if len(queued) == 0 {
		q.turn = append(q.turn, ev.Namespace)
	}
	q.byNS[ev.Namespace] = append(queued, ev)
	q.length++
	q.ready <- struct{}{}
	return true
}

// pop waits for an event and returns the next one round robin; false when
// ctx ended first.
func (q *fairQueue) pop(ctx context.Context) (*eventsv1.Event, bool) {
	select {
	case <-ctx.Done():
		return nil, false
	case <-q.ready:
		return q.take(), true
	}
}

// tryPop returns the next event without waiting; false when none is queued.
func (q *fairQueue) tryPop() (*eventsv1.Event, bool) {
	select {
	case <-q.ready:
		return q.take(), true
	default:
		return nil, false
	}
}

// take removes the first event of the namespace whose turn it is, and
// sends that namespace to the back of the line. A token of ready was
// taken for it, so there is one.
func (q *fairQueue) take() *eventsv1.Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	ns := q.turn[0]
	q.turn = q.turn[1:]
	queued := q.byNS[ns]
	ev := queued[0]
	queued[0] = nil
	if queued = queued[1:]; len(queued) > 0 {
		q.byNS[ns] = queued
		q.turn = append(q.turn, ns)
	} else {
		delete(q.byNS, ns)
	}
	q.length--
	return ev
}
