// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package recorder

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
)

// These tests cover the queue and its retries, which are this package's;
// what the API server makes of an event is covered by the integration tests.

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
	}
}

func start(t *testing.T, p *Provider) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func eventsIn(t *testing.T, cs *fake.Clientset) []eventsv1.Event {
	t.Helper()
	list, err := cs.EventsV1().Events("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProvider_SendsWhatTheRecorderMade(t *testing.T) {
	cs := fake.NewClientset()
	p, err := NewWithClient(cs.EventsV1(), scheme.Scheme, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Recorded before the provider starts: it waits in the queue.
	p.Recorder("demo-controller").Eventf(pod("a"), pod("b"), corev1.EventTypeNormal, "Started", "Start", "run %d", 7)
	start(t, p)
	waitFor(t, "the event", func() bool { return len(eventsIn(t, cs)) == 1 })
	ev := eventsIn(t, cs)[0]
	if ev.Regarding.Name != "a" || ev.Related == nil || ev.Related.Name != "b" {
		t.Errorf("regarding %v, related %v; want a and b", ev.Regarding, ev.Related)
	}
	if ev.Reason != "Started" || ev.Action != "Start" || ev.Note != "run 7" || ev.ReportingController != "demo-controller" {
		t.Errorf("event %+v", ev)
	}
	if ev.Series != nil {
		t.Errorf("series %v on a first event", ev.Series)
	}
}

func TestProvider_CutsANoteTheAPIServerWouldRefuse(t *testing.T) {
	cs := fake.NewClientset()
	p, err := NewWithClient(cs.EventsV1(), scheme.Scheme, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start(t, p)
	// Two-byte characters, so that a cut at the byte limit would fall
	// inside one.
	p.Recorder("demo-controller").Eventf(pod("a"), nil, corev1.EventTypeNormal, "Started", "Start", "x%s",
		strings.Repeat("é", MaxNoteBytes))
	waitFor(t, "the event", func() bool { return len(eventsIn(t, cs)) == 1 })
	note := eventsIn(t, cs)[0].Note
	if len(note) > MaxNoteBytes || !utf8.ValidString(note) || !strings.HasSuffix(note, "…") {
		t.Errorf("note of %d bytes (valid UTF-8 %t), ending %q; want at most %d bytes, cut with an ellipsis",
			len(note), utf8.ValidString(note), note[max(0, len(note)-8):], MaxNoteBytes)
	}
}

func TestProvider_DropsWhatAFullQueueCannotHold(t *testing.T) {
	cs := fake.NewClientset()
	// One namespace may fill the whole of this queue.
	p, err := NewWithClient(cs.EventsV1(), scheme.Scheme, Options{QueueLength: 2, MaxQueuedPerNamespace: 2})
	if err != nil {
		t.Fatal(err)
	}
	dropped := testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeDropped))
	rec := p.Recorder("demo-controller")
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		rec.Eventf(pod(name), nil, corev1.EventTypeNormal, "Started", "Start", "run")
	}
	waitFor(t, "three drops", func() bool {
		return testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeDropped))-dropped == 3
	})
	start(t, p)
	waitFor(t, "the two queued events", func() bool { return len(eventsIn(t, cs)) == 2 })
	// The recorder hands events over from goroutines, so which two were
	// queued is not fixed; that no more than two were sent is.
	time.Sleep(100 * time.Millisecond)
	if n := len(eventsIn(t, cs)); n != 2 {
		t.Errorf("%d events sent, want the 2 the queue held", n)
	}
}

func TestProvider_RetriesOnlyWhatMayPass(t *testing.T) {
	old := sendBackoff
	sendBackoff.Duration = 10 * time.Millisecond
	t.Cleanup(func() { sendBackoff = old })

	cs := fake.NewClientset()
	var tries atomic.Int32
	cs.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ev := a.(k8stesting.CreateAction).GetObject().(*eventsv1.Event)
		switch ev.Regarding.Name {
		case "busy": // busy twice, then taken
			if tries.Add(1) <= 2 {
				return true, nil, apierrors.NewServiceUnavailable("busy")
			}
		case "bad":
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, ev.Name, nil)
		}
		return false, nil, nil
	})
	p, err := NewWithClient(cs.EventsV1(), scheme.Scheme, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	failed := testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeFailed))
	start(t, p)
	rec := p.Recorder("demo-controller")
	rec.Eventf(pod("bad"), nil, corev1.EventTypeNormal, "Started", "Start", "run")
	rec.Eventf(pod("busy"), nil, corev1.EventTypeNormal, "Started", "Start", "run")
	waitFor(t, "the busy event", func() bool { return len(eventsIn(t, cs)) == 1 })
	if ev := eventsIn(t, cs)[0]; ev.Regarding.Name != "busy" {
		t.Errorf("sent %s, want busy", ev.Regarding.Name)
	}
	if n := tries.Load(); n != 3 {
		t.Errorf("busy event tried %d times, want 3", n)
	}
	if d := testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeFailed)) - failed; d != 1 {
		t.Errorf("%v events failed, want 1 (the invalid one, not retried)", d)
	}
}

func TestProvider_AnEventWhoseNamespaceIsGoingIsNeitherSentNorLost(t *testing.T) {
	cs := fake.NewClientset()
	var tries atomic.Int32
	cs.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ev := a.(k8stesting.CreateAction).GetObject().(*eventsv1.Event)
		tries.Add(1)
		switch ev.Regarding.Name {
		case "terminating": // as NamespaceLifecycle refuses it
			err := apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, ev.Name,
				fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ev.Namespace))
			err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
			return true, nil, err
		case "gone":
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, ev.Namespace)
		case "refused":
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"},
				ev.Name, fmt.Errorf("no"))
		}
		return false, nil, nil
	})
	p, err := NewWithClient(cs.EventsV1(), scheme.Scheme, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	gone := testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeNamespaceGone))
	failed := testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeFailed))
	start(t, p)
	rec := p.Recorder("demo-controller")
	for _, name := range []string{"terminating", "gone", "refused"} {
		rec.Eventf(pod(name), nil, corev1.EventTypeNormal, "Started", "Start", "run")
	}
	waitFor(t, "the three events tried", func() bool { return tries.Load() == 3 })
	waitFor(t, "their outcomes counted", func() bool {
		return testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeNamespaceGone))-gone == 2 &&
			testutil.ToFloat64(EventsSent.WithLabelValues(OutcomeFailed))-failed == 1
	})
}
