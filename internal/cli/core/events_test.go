// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

var eventsNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// dataUID is the UID of the ScheduleTask "data" the tests ask about.
const dataUID = types.UID("3f6d2c1e-0000-4000-8000-000000000001")

// task is the ScheduleTask team/data, as a command has read it.
func task() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "data", UID: dataUID}}
}

func event(name, kind, object, reason string, ago time.Duration) *eventsv1.Event {
	uid := types.UID("")
	if object == "data" {
		uid = dataUID
	}
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name},
		Regarding:  corev1.ObjectReference{Kind: kind, Name: object, Namespace: "team", UID: uid},
		Reason:     reason, Type: corev1.EventTypeNormal, Note: reason + " " + object,
		EventTime: metav1.NewMicroTime(eventsNow.Add(-ago)),
	}
}

// eventsClient is a fake client that answers field selectors on events as
// the API server does.
func eventsClient(funcs interceptor.Funcs, objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithObjects(objs...).WithInterceptorFuncs(funcs).
		WithIndex(&eventsv1.Event{}, "regarding.name", func(o client.Object) []string { return []string{o.(*eventsv1.Event).Regarding.Name} }).
		WithIndex(&eventsv1.Event{}, "regarding.kind", func(o client.Object) []string { return []string{o.(*eventsv1.Event).Regarding.Kind} }).
		WithIndex(&eventsv1.Event{}, "regarding.uid", func(o client.Object) []string {
			return []string{string(o.(*eventsv1.Event).Regarding.UID)}
		}).
		Build()
}

func TestEventsAbout_OnlyTheObjectsNewestOldestFirst(t *testing.T) {
	c := eventsClient(interceptor.Funcs{},
		event("e1", "ScheduleTask", "data", "First", 50*time.Minute),
		event("e2", "ScheduleTask", "data", "Third", 10*time.Minute),
		event("e3", "ScheduleTask", "data", "Second", 30*time.Minute),
		event("e4", "ScheduleTask", "other", "Elsewhere", time.Minute),
		event("e5", "Pod", "data", "NotATask", time.Minute),
		predecessor(event("e6", "ScheduleTask", "data", "OfTheDeletedTask", 5*time.Minute)),
	)
	got, err := EventsAbout(t.Context(), c, "ScheduleTask", task(), 2)
	if err != nil {
		t.Fatal(err)
	}
	reasons := make([]string, 0, len(got))
	for _, e := range got {
		reasons = append(reasons, e.Reason)
	}
	if diff := cmp.Diff([]string{"Second", "Third"}, reasons); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	var b strings.Builder
	WriteEvents(&b, got, eventsNow)
	WriteEvents(&b, nil, eventsNow)
	want := "  30m ago  Normal   Second           Second data\n" +
		"  10m ago  Normal   Third            Third data\n" +
		"  none\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteEvents (-want +got):\n%s", diff)
	}
}

// predecessor makes e an event of an earlier task of the same name, deleted
// since.
func predecessor(e *eventsv1.Event) *eventsv1.Event {
	e.Regarding.UID = "3f6d2c1e-0000-4000-8000-000000000000"
	return e
}

func TestEventsAbout_ForbiddenIsNoEvents(t *testing.T) {
	c := eventsClient(interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", nil)
	}})
	got, err := EventsAbout(t.Context(), c, "ScheduleTask", task(), 10)
	if err != nil || len(got) != 0 {
		t.Errorf("EventsAbout = %v, %v; want no events and no error", got, err)
	}
}
