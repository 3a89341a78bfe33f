// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package apply

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/objstatus"
	"github.com/example/platform-operator/internal/text"
)

// Bounds of RepairBackoff.
const (
	// RepairBackoffInitial is the wait before the second repair of a child
	// that keeps being changed; each repair after it doubles the wait.
	RepairBackoffInitial = time.Second
	// RepairBackoffMax caps the wait: a child someone changes in a loop is
	// still put back every five minutes.
	RepairBackoffMax = 5 * time.Minute
	// RepairQuiet is how long a child must go unchanged for its backoff to
	// start again from nothing and a contest over it to end. It is also
	// the window ContestedRepairs are counted in, so the backoff and the
	// ChildContested condition forget a fight together.
	RepairQuiet = 10 * time.Minute
	// ContestedRepairs repairs of one child within RepairQuiet make it
	// contested. With the doubling waits above, only someone who changes
	// the child again right after every repair for more than eight
	// minutes gets there; a person's few hand edits never do.
	ContestedRepairs = 10
)

// RepairsWithin is the most repairs of one child RepairBackoff allows in
// d of changes made right after every repair: the first at once, each next
// one after a doubled wait. An urgent repair (one that does not wait) may
// come on top of each of them, and one more after the last change. It is
// the bound a fight's write budget is derived from, and what
// docs/admission.md promises a co-tenant's loop costs.
func RepairsWithin(d time.Duration) int {
	if d < 0 {
		return 0
	}
	n, at, wait := 1, time.Duration(0), time.Duration(0)
	for {
		wait = min(max(2*wait, RepairBackoffInitial), RepairBackoffMax)
		if at+wait > d {
			return n
		}
		at += wait
		n++
	}
}

// RepairKey names a child: its kind and its namespace and name. The kind
// is part of it because an owner's children share its name (an
// AppDeployment's Deployment and Service).
type RepairKey struct {
	Kind string
	types.NamespacedName
}

// String is "Kind namespace/name".
func (k RepairKey) String() string { return k.Kind + " " + k.NamespacedName.String() }

// RepairBackoff spaces out the repairs of a child that someone keeps
// changing, so that a tenant who patches a child in a loop does not get a
// write of the operator for each of its own: the first repair after a quiet
// spell is immediate, and each repair within RepairQuiet of the last
// change doubles the wait before the next one, from RepairBackoffInitial to
// RepairBackoffMax. After ContestedRepairs repairs within RepairQuiet the
// child is contested (Contest) until it has gone unchanged for RepairQuiet.
//
// It only keeps time; the Applier asks it before each repair (Applier.Repairs).
// The memory is per child and held only while the child is being fought
// over: an entry is dropped once its child has been quiet for RepairQuiet
// and read again, or forgotten with its child.
type RepairBackoff struct {
	// Clock tells the time; the real clock when nil.
	Clock clock.PassiveClock

	mu       sync.Mutex
	children map[RepairKey]*childRepairs
}

// childRepairs is the fight over one child.
type childRepairs struct {
	// lastChange is when the child was last seen changed by someone else.
	lastChange time.Time
	// next is the earliest time of the next repair, and wait the backoff
	// that set it.
	next time.Time
	wait time.Duration
	// repairs are the times of the repairs within RepairQuiet, oldest first.
	repairs []time.Time
	// contested: ContestedRepairs repairs fell within RepairQuiet since the
	// last quiet spell.
	contested bool
	// manager is the field manager that changed the child before the
	// repair that made it contested.
	manager string
}

// Contest says whether a child is contested and by whom.
type Contest struct {
	// Contested: the child was repaired ContestedRepairs times within
	// RepairQuiet and has not been quiet for RepairQuiet since.
	Contested bool
	// Manager is the field manager that kept changing the child, when
	// the managedFields named one.
	Manager string
	// Repairs is how many repairs of the child fell within RepairQuiet.
	Repairs int
	// EndsIn is how long the child must stay unchanged for the contest to
	// end; a pass should look again then. Zero when not contested.
	EndsIn time.Duration
}

func (b *RepairBackoff) now() time.Time {
	if b.Clock == nil {
		return time.Now()
	}
	return b.Clock.Now()
}

// entry is the live record of key at now, nil when there is none; a record
// whose child has been quiet for RepairQuiet is dropped. b.mu must be held.
func (b *RepairBackoff) entry(key RepairKey, now time.Time) *childRepairs {
	c := b.children[key]
	if c != nil && now.Sub(c.lastChange) >= RepairQuiet {
		delete(b.children, key)
		return nil
	}
	return c
}

// Changed records that key was seen changed by someone else and returns how
// long its repair must wait: zero when it may be repaired now.
func (b *RepairBackoff) Changed(key RepairKey) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	c := b.entry(key, now)
	if c == nil {
		if b.children == nil {
			b.children = map[RepairKey]*childRepairs{}
		}
		c = &childRepairs{}
		b.children[key] = c
	}
	c.lastChange = now
	return max(c.next.Sub(now), 0)
}

// NextRepairContests reports whether the next repair of key would make it
// contested, so the caller can look up who changed it before repairing.
func (b *RepairBackoff) NextRepairContests(key RepairKey) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	c := b.entry(key, now)
	return c != nil && !c.contested && len(inWindow(c.repairs, now))+1 >= ContestedRepairs
}

// Repaired records a repair of key, after someone else's change, by
// manager (empty when unknown), and sets the wait before the next one.
func (b *RepairBackoff) Repaired(key RepairKey, manager string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	c := b.entry(key, now)
	if c == nil {
		// Repaired without Changed (an urgent repair of a first change).
		if b.children == nil {
			b.children = map[RepairKey]*childRepairs{}
		}
		c = &childRepairs{lastChange: now}
		b.children[key] = c
	}
	c.repairs = append(inWindow(c.repairs, now), now)
	if n := len(c.repairs); n > ContestedRepairs {
		c.repairs = slices.Clone(c.repairs[n-ContestedRepairs:])
	}
	c.wait = min(max(2*c.wait, RepairBackoffInitial), RepairBackoffMax)
	c.next = now.Add(c.wait)
	if manager != "" {
		c.manager = manager
	}
	if len(c.repairs) >= ContestedRepairs {
		c.contested = true
	}
}

// Contest says whether key is contested now.
func (b *RepairBackoff) Contest(key RepairKey) Contest {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	c := b.entry(key, now)
	if c == nil {
		return Contest{}
	}
	out := Contest{Contested: c.contested, Manager: c.manager, Repairs: len(inWindow(c.repairs, now))}
	if c.contested {
		out.EndsIn = c.lastChange.Add(RepairQuiet).Sub(now)
	}
	return out
}

// Forget drops every record of the children named key (of any kind), once
// they are deleted.
func (b *RepairBackoff) Forget(key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.children {
		if k.NamespacedName == key {
			delete(b.children, k)
		}
	}
}

// inWindow is the tail of times (oldest first) within RepairQuiet of now.
func inWindow(times []time.Time, now time.Time) []time.Time {
	i := 0
	for i < len(times) && now.Sub(times[i]) >= RepairQuiet {
		i++
	}
	return times[i:]
}

// ChangedBy names the field manager that most recently changed obj, other
// than own and than writers of a subresource (status, scale): the one a
// repair undoes. obj must carry its managedFields (read past the cache,
// which strips them). Empty when no entry is left.
func ChangedBy(entries []metav1.ManagedFieldsEntry, own string) string {
	var newest *metav1.ManagedFieldsEntry
	for i := range entries {
		e := &entries[i]
		if e.Manager == own || e.Subresource != "" {
			continue
		}
		if newest == nil || (e.Time != nil && (newest.Time == nil || newest.Time.Before(e.Time))) {
			newest = e
		}
	}
	if newest == nil {
		return ""
	}
	return newest.Manager
}

// Wait is how long the next repair of key is held back; zero when it may
// go now.
func (b *RepairBackoff) Wait(key RepairKey) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if c := b.entry(key, now); c != nil {
		return max(c.next.Sub(now), 0)
	}
	return 0
}

// ContestedChild is a child of an owner and its Contest.
type ContestedChild struct {
	Key RepairKey
	Contest
}

// SetChildContestedCondition sets ChildContested on an owner's conditions
// from its children's contests: True naming the first contested child and
// who changes it, and no condition when none is contested. It reports
// whether the condition turned True, the transition an event announces.
// It touches no other condition (Ready least of all).
func SetChildContestedCondition(conds *[]metav1.Condition, children []ContestedChild, generation int64, now time.Time) bool {
	was := meta.IsStatusConditionTrue(*conds, platformv1.ConditionChildContested)
	i := slices.IndexFunc(children, func(c ContestedChild) bool { return c.Contested })
	if i < 0 {
		meta.RemoveStatusCondition(conds, platformv1.ConditionChildContested)
		return false
	}
	objstatus.SetCondition(conds, metav1.Condition{Type: platformv1.ConditionChildContested, Status: metav1.ConditionTrue,
		Reason: platformv1.ReasonRepairedRepeatedly, Message: ContestedMessage(children[i])}, generation, now)
	return !was
}

// ContestedMessage says which child is contested, by whom, and what the
// operator does about it.
func ContestedMessage(c ContestedChild) string {
	by := "by another field manager"
	if c.Manager != "" {
		by = fmt.Sprintf("by field manager %q", c.Manager)
	}
	// No count in the message: a new count would be a status write.
	return text.Truncate(fmt.Sprintf("%s keeps being changed %s: changed back %d times within %s; "+
		"repairs are spaced out, up to %s apart, until it stays unchanged for %s",
		c.Key, by, ContestedRepairs, RepairQuiet, RepairBackoffMax, RepairQuiet), 1024)
}
