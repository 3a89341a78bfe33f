// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventsAbout returns the last limit events (events.k8s.io) regarding obj,
// of kind kind, oldest first. It asks the server for only those, with a
// field selector on regarding.kind, regarding.name and, as kubectl describe
// does, regarding.uid: an object deleted and created again under the same
// name has events of its own, not its predecessor's. A user who may not
// list events gets none rather than an error: events are an aside to what a
// command shows.
func EventsAbout(ctx context.Context, c client.Client, kind string, obj client.Object, limit int) ([]eventsv1.Event, error) {
	fields := client.MatchingFields{"regarding.kind": kind, "regarding.name": obj.GetName()}
	if uid := obj.GetUID(); uid != "" {
		fields["regarding.uid"] = string(uid)
	}
	var list eventsv1.EventList
	err := c.List(ctx, &list, client.InNamespace(obj.GetNamespace()), fields)
	if apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	events := list.Items
	slices.SortStableFunc(events, func(a, b eventsv1.Event) int { return EventTime(&a).Compare(EventTime(&b)) })
	return events[max(0, len(events)-limit):], nil
}

// EventTime is when an event happened: events.k8s.io's eventTime, or, for
// events recorded through the core/v1 API, when the event was created.
func EventTime(e *eventsv1.Event) time.Time {
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// WriteEvents writes events as a describe-style section's lines, indented
// by two spaces, or "  none". Type, reason and note are escaped with Safe:
// whoever may create events in the namespace writes them.
func WriteEvents(w io.Writer, events []eventsv1.Event, now time.Time) {
	if len(events) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for i := range events {
		e := &events[i]
		fmt.Fprintf(w, "  %-8s %-8s %-16s %s\n", Relative(EventTime(e), now), Safe(e.Type), Safe(e.Reason), Safe(e.Note))
	}
}
