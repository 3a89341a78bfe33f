// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package recorder

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
)

// about is an event of namespace ns about the object named name there.
func about(ns, name string) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s.%d", name, time.Now().UnixNano())},
		Regarding:  corev1.ObjectReference{Kind: "ScheduleTask", Namespace: ns, Name: name},
	}
}

func TestObjectLimiter_BurstThenOneEveryIntervalPerObject(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	l := newObjectLimiter(clk, 5, 10*time.Second)
	allowed := func(name string, n int) int {
		got := 0
		for range n {
			if l.allow(about("ns", name)) {
				got++
			}
		}
		return got
	}
	if got := allowed("fought", 20); got != 5 {
		t.Errorf("%d of 20 events at once allowed, want the burst of 5", got)
	}
	if got := allowed("quiet", 1); got != 1 {
		t.Errorf("another object's event refused: its bucket is its own")
	}
	clk.Step(9 * time.Second)
	if got := allowed("fought", 1); got != 0 {
		t.Errorf("an event 9s after the burst allowed, want none before 10s")
	}
	clk.Step(time.Second)
	if got := allowed("fought", 3); got != 1 {
		t.Errorf("%d of 3 events 10s after the burst allowed, want 1", got)
	}
	clk.Step(time.Minute)
	l.prune(clk.Now())
	if len(l.buckets) != 0 {
		t.Errorf("%d buckets kept after they all filled up again, want 0", len(l.buckets))
	}
}

func TestFairQueue_ServesNamespacesRoundRobin(t *testing.T) {
	q := newFairQueue(100, 100)
	for i := range 50 {
		q.push(about("noisy", fmt.Sprint("n", i)))
	}
	for i := range 3 {
		q.push(about("quiet", fmt.Sprint("q", i)))
	}
	order := make([]string, 0, 8)
	for range 8 {
		ev, ok := q.pop(context.Background())
		if !ok {
			t.Fatal("queue empty")
		}
		order = append(order, ev.Regarding.Name)
	}
	// The quiet namespace's three events go out between the noisy one's
	// first four, not after its fifty.
	want := []string{"n0", "q0", "n1", "q1", "n2", "q2", "n3", "n4"}
	if d := cmp.Diff(want, order); d != "" {
		t.Errorf("send order (-want +got):\n%s", d)
	}
}

func TestFairQueue_ANamespaceFillsOnlyItsShare(t *testing.T) {
	q := newFairQueue(8, 2)
	pushed := 0
	for i := range 10 {
		if q.push(about("noisy", fmt.Sprint("n", i))) {
			pushed++
		}
	}
	if pushed != 2 {
		t.Errorf("a namespace queued %d events, want its share of 2", pushed)
	}
	for i := range 6 {
		for _, ns := range []string{"a", "b", "c"} {
			if !q.push(about(ns, fmt.Sprint(ns, i))) && i < 2 {
				t.Errorf("namespace %s's event %d dropped while the noisy one held the queue", ns, i)
			}
		}
	}
	if _, ok := q.tryPop(); !ok {
		t.Fatal("queue empty")
	}
	if q.length != 7 {
		t.Errorf("queue length %d after one pop of 8, want 7", q.length)
	}
}

func TestProvider_LimitsEventsAboutOneObject(t *testing.T) {
	cs := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Now())
	p, err := NewWithClient(cs.EventsV1(), scheme.Scheme, Options{ObjectBurst: 5, ObjectEvery: time.Hour, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	limited := testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeLimited))
	start(t, p)
	rec := p.Recorder("demo-controller")
	for i := range 20 {
		rec.Eventf(pod("fought"), nil, corev1.EventTypeNormal, "Repaired", "Update", "repair %d", i)
	}
	rec.Eventf(pod("bystander"), nil, corev1.EventTypeNormal, "Started", "Start", "run")
	waitFor(t, "the limited events", func() bool {
		return testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeLimited))-limited == 15
	})
	waitFor(t, "the events within the limits", func() bool { return len(eventsIn(t, cs)) == 6 })
	time.Sleep(100 * time.Millisecond)
	count := map[string]int{}
	for _, ev := range eventsIn(t, cs) {
		count[ev.Regarding.Name]++
	}
	if d := cmp.Diff(map[string]int{"fought": 5, "bystander": 1}, count); d != "" {
		t.Errorf("events sent by object (-want +got):\n%s", d)
	}
}
