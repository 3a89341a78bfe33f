// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package expectations

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Expectations remembers, per key, values this manager has caused and the
// cache may not show yet, in the style of Kueue's and the ReplicaSet
// controller's expectations. The ScheduleTask controller keeps two: the
// resourceVersions its own writes replaced (a pass starting from one of those
// would read stale data and end in a conflict), and the Jobs whose runs it
// deleted (a stale cache must not make it record them again).
//
// Values are only compared for equality. With a TTL, a value is dropped that
// long after it was remembered: long after any cache catches up, and short
// enough that the store does not grow with the cluster's history.
type Expectations[K, V comparable] struct {
	// TTL, when positive, bounds how long a value is remembered.
	TTL time.Duration
	// Clock tells time for the TTL; the real clock when nil.
	Clock clock.PassiveClock

	mu sync.Mutex
	m  map[K]map[V]time.Time
	// swept is when expire last scanned m.
	swept time.Time
}

// Remember records v under key.
func (e *Expectations[K, V]) Remember(key K, v V) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	if e.m == nil {
		e.m = map[K]map[V]time.Time{}
	}
	e.expire(now)
	if e.m[key] == nil {
		e.m[key] = map[V]time.Time{}
	}
	e.m[key][v] = now
}

// Has reports whether v is remembered under key.
func (e *Expectations[K, V]) Has(key K, v V) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.m[key][v]
	return ok && (e.TTL <= 0 || e.now().Sub(t) <= e.TTL)
}

// Take reports whether v is remembered under key, and forgets it.
func (e *Expectations[K, V]) Take(key K, v V) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.m[key][v]
	if !ok {
		return false
	}
	delete(e.m[key], v)
	if len(e.m[key]) == 0 {
		delete(e.m, key)
	}
	return e.TTL <= 0 || e.now().Sub(t) <= e.TTL
}

// Forget drops everything remembered under key.
func (e *Expectations[K, V]) Forget(key K) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

// Len is the number of keys with something remembered.
func (e *Expectations[K, V]) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}

// expire drops values older than the TTL; the caller holds the lock. It
// scans the store at most twice a TTL: a scan on every Remember would cost,
// in a burst of writes, the square of the values remembered. Between scans
// an expired value is only kept, never reported (Has and Take check its
// age), so the store holds at most one and a half TTLs of values.
func (e *Expectations[K, V]) expire(now time.Time) {
	if e.TTL <= 0 || now.Sub(e.swept) < e.TTL/2 {
		return
	}
	e.swept = now
	for k, vs := range e.m {
		for v, t := range vs {
			if now.Sub(t) > e.TTL {
				delete(vs, v)
			}
		}
		if len(vs) == 0 {
			delete(e.m, k)
		}
	}
}

func (e *Expectations[K, V]) now() time.Time {
	if e.Clock == nil {
		return time.Now()
	}
	return e.Clock.Now()
}

// OwnWriteTTL bounds how long OwnWrites remembers a write: far longer than
// a cache takes to show it, or its event to arrive.
const OwnWriteTTL = 2 * time.Minute

// OwnWrites remembers, per object UID, the updates this manager is making
// or has made, each by the resourceVersion it replaced. An update sent with
// that resourceVersion as its precondition either fails or makes the next
// version of the object, so the version it replaced names it in two places.
//
// In a pass: a pass that starts from a version the manager has already
// replaced would work from stale data and end in a conflict (at scale, a
// storm of them); it is skipped instead (Stale), because the watch event of
// the write that replaced it is on its way and starts a pass on fresh data.
//
// In the watch: the update event whose old object is the replaced version is
// the echo of the manager's own write. The pass that wrote knew what it
// wrote, so the echo need not wake the object again (NotOwnEcho), unless a
// pass skipped as stale waits for exactly that event. The write is
// registered before it is sent, since its echo may arrive before its answer.
//
// What is remembered of a write is dropped when its echo arrives or a later
// pass finds the cache caught up, and in any case after OwnWriteTTL: the last write of an object
// that is never written again (a finished run) must not stay for the life
// of the manager.
type OwnWrites struct {
	init     sync.Once
	replaced Expectations[string, string]
	echoes   Expectations[string, string]
	// waiting holds the UIDs whose pass was skipped as stale.
	waiting sync.Map
}

// Writing records that an update of obj, conditioned on obj's current
// resourceVersion, is about to be sent; call the returned function with the
// update's error once it returns. A failed update is forgotten.
func (w *OwnWrites) Writing(obj client.Object) (done func(error)) {
	w.init.Do(func() { w.replaced.TTL, w.echoes.TTL = OwnWriteTTL, OwnWriteTTL })
	uid, before := string(obj.GetUID()), obj.GetResourceVersion()
	w.replaced.Remember(uid, before)
	w.echoes.Remember(uid, before)
	return func(err error) {
		if err != nil {
			w.replaced.Take(uid, before)
			w.echoes.Take(uid, before)
		}
	}
}

// Stale reports whether version rv of object uid is one this manager's own
// writes replaced. Any other version means the cache has caught up (or
// someone else wrote), and what was remembered of the object is dropped.
func (w *OwnWrites) Stale(uid, rv string) bool {
	if w.replaced.Has(uid, rv) {
		w.waiting.Store(uid, struct{}{})
		return true
	}
	w.replaced.Forget(uid)
	w.echoes.Forget(uid)
	return false
}

// NotOwnEcho drops the update events that are the echo of this manager's
// own writes, and passes every other event. Such an update changes nothing
// the writing pass did not know; waking the object for it would only repeat
// that pass. The exception is an echo a pass skipped as stale waits for.
func (w *OwnWrites) NotOwnEcho() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		uid, before := string(e.ObjectNew.GetUID()), e.ObjectOld.GetResourceVersion()
		echo := w.echoes.Take(uid, before)
		if echo {
			// The cache holds the written version now, so no pass can start
			// from the one it replaced: remembering it would only hold
			// memory, for every object written, until the TTL.
			w.replaced.Take(uid, before)
		}
		_, waited := w.waiting.LoadAndDelete(uid)
		return !echo || waited
	}}
}

// Forget drops what is known of an object, once it is gone.
func (w *OwnWrites) Forget(uid string) {
	w.replaced.Forget(uid)
	w.echoes.Forget(uid)
	w.waiting.Delete(uid)
}
