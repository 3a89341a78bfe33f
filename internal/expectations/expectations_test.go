// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package expectations

import (
	"errors"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestExpectations_RemembersPerKeyUntilTheTTL(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := Expectations[string, int]{TTL: time.Minute, Clock: clock}
	e.Remember("a", 1)
	if !e.Has("a", 1) || e.Has("a", 2) || e.Has("b", 1) {
		t.Fatalf("Has answers for values not remembered, or not for one that was")
	}
	clock.SetTime(clock.Now().Add(2 * time.Minute))
	if e.Has("a", 1) {
		t.Errorf("a value is remembered past its TTL")
	}
	e.Remember("b", 1) // expires a's old value
	if e.Len() != 1 {
		t.Errorf("%d keys remembered, want 1 once expired values are dropped", e.Len())
	}
	e.Forget("b")
	if e.Has("b", 1) || e.Len() != 0 {
		t.Errorf("Forget left something behind")
	}
}

func TestExpectations_HoldsAtMostOneAndAHalfTTLsOfValues(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := Expectations[int, int]{TTL: time.Minute, Clock: clock}
	// One value a second for ten minutes: a store that never expired would
	// hold 600 keys; one scanned on every Remember, 60.
	for i := range 600 {
		e.Remember(i, i)
		clock.SetTime(clock.Now().Add(time.Second))
		if n := e.Len(); n > 91 {
			t.Fatalf("%d keys after %d s, want at most 90 (1.5 TTL)", n, i+1)
		}
		if i >= 60 && e.Has(i-61, i-61) {
			t.Fatalf("value %d reported past its TTL", i-61)
		}
	}
}

// at is an object at version rv.
func at(uid, rv string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), ResourceVersion: rv}}
}

// write records a successful update of the object "uid" from version before.
func write(w *OwnWrites, before string) { w.Writing(at("uid", before))(nil) }

func TestOwnWrites_AVersionReplacedByOwnWriteIsStaleUntilTheCacheCatchesUp(t *testing.T) {
	var w OwnWrites
	write(&w, "10")
	write(&w, "11")
	if !w.Stale("uid", "10") || !w.Stale("uid", "11") {
		t.Fatalf("versions our writes replaced are not stale")
	}
	if w.Stale("uid", "12") {
		t.Fatalf("a version we did not replace is stale")
	}
	if w.Stale("uid", "10") {
		t.Errorf("after the cache showed a newer version, the old record should be gone")
	}
	if w.Stale("other", "10") {
		t.Errorf("another object's version is stale")
	}
	w.Writing(at("uid", "20"))(errors.New("conflict"))
	if w.Stale("uid", "20") {
		t.Errorf("a failed write made the version it did not replace stale")
	}
}

func TestOwnWrites_NotOwnEchoDropsTheEchoOfOwnWritesOnly(t *testing.T) {
	var w OwnWrites
	p := w.NotOwnEcho()
	update := func(old, rv string) bool {
		return p.Update(event.UpdateEvent{ObjectOld: at("uid", old), ObjectNew: at("uid", rv)})
	}
	// The echo may arrive before the write's answer.
	done := w.Writing(at("uid", "10"))
	if update("10", "11") {
		t.Errorf("the echo of our own write, arriving before its answer, passed")
	}
	done(nil)
	if !update("11", "12") {
		t.Errorf("someone else's write was dropped")
	}
	if !update("10", "11") {
		t.Errorf("an echo dropped once is dropped again (a resync repeats a version)")
	}

	// A failed write has no echo: the next version is someone else's.
	w.Writing(at("uid", "12"))(errors.New("conflict"))
	if !update("12", "13") {
		t.Errorf("after our write failed, someone else's write was dropped")
	}

	// A pass skipped as stale waits for the echo: it must pass.
	write(&w, "13")
	if !w.Stale("uid", "13") {
		t.Fatalf("the replaced version is not stale")
	}
	if !update("13", "14") {
		t.Errorf("the echo a skipped pass waits for was dropped")
	}
	write(&w, "14")
	if update("14", "15") {
		t.Errorf("the wait was not used up by the echo it waited for")
	}

	write(&w, "15")
	w.Forget("uid")
	if !update("15", "16") {
		t.Errorf("Forget left an expected echo behind")
	}
	if !p.Create(event.CreateEvent{Object: at("uid", "1")}) {
		t.Errorf("a create was dropped")
	}
}

func TestOwnWrites_WaitedForIsUsedByTheNextEventOnly(t *testing.T) {
	var w OwnWrites
	p := w.NotOwnEcho()
	write(&w, "10")
	write(&w, "11")
	if !w.Stale("uid", "10") {
		t.Fatalf("the replaced version is not stale")
	}
	// The echo of the first write arrives: the skipped pass waited for it.
	if !p.Update(event.UpdateEvent{ObjectOld: at("uid", "10"), ObjectNew: at("uid", "11")}) {
		t.Errorf("the event the skipped pass waits for was dropped")
	}
	if p.Update(event.UpdateEvent{ObjectOld: at("uid", "11"), ObjectNew: at("uid", "12")}) {
		t.Errorf("the second echo passed although nothing waits for it")
	}
}

func TestOwnWrites_NothingIsHeldOnceTheEchoArrived(t *testing.T) {
	var w OwnWrites
	p := w.NotOwnEcho()
	for i := range 100 {
		uid, before := fmt.Sprintf("uid-%d", i), fmt.Sprint(i)
		w.Writing(at(uid, before))(nil)
		if p.Update(event.UpdateEvent{ObjectOld: at(uid, before), ObjectNew: at(uid, before+"-next")}) {
			t.Fatalf("the echo of write %d passed", i)
		}
		if w.Stale(uid, before) {
			t.Fatalf("the version write %d replaced is stale after its echo: the cache holds the new one", i)
		}
	}
	if n, m := w.replaced.Len(), w.echoes.Len(); n != 0 || m != 0 {
		t.Errorf("after every echo arrived, %d replaced versions and %d echoes are held, want none", n, m)
	}
}
