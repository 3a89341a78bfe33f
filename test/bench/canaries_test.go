// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestMeasurementLateness_IsStartMinusTheStatusTimeBeforePlusTheInterval(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	starts := []time.Time{
		t0, // first step: due after its pods were ready
		t0.Add(61*time.Second + 700*time.Millisecond), // second step's first: likewise
		// Due at 12:02:01 (12:01:01.7 as status has it, whole seconds,
		// plus a minute): 0.5 s late.
		t0.Add(121*time.Second + 500*time.Millisecond),
		// Due at 12:03:01: on time.
		t0.Add(181 * time.Second),
		// Due at 12:04:01, 3.25 s late, but after the window.
		t0.Add(244*time.Second + 250*time.Millisecond),
	}
	got := measurementLateness(starts, time.Minute, t0, t0.Add(200*time.Second))
	want := []time.Duration{500 * time.Millisecond, 0}
	if !slices.Equal(got, want) {
		t.Errorf("lateness %v, want %v", got, want)
	}
	// One due at 12:04:01 and not started when the window ends at
	// 12:04:05: 4 s late at least.
	got = measurementLateness(starts[:4], time.Minute, t0, t0.Add(245*time.Second))
	want = []time.Duration{500 * time.Millisecond, 0, 4 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("lateness %v, want %v", got, want)
	}
}

func TestQueryProxy_NotesEachMeasurementStartOnceAndTellsTheNamespace(t *testing.T) {
	p := &queryProxy{starts: map[types.NamespacedName][]time.Time{}}
	query := func(q, at string) url.Values { return url.Values{"query": {q}, "time": {at}} }
	sel := `sum(rate(http_requests_total{app="web",track="canary",namespace="team-a"}[1m]))`
	for _, f := range []url.Values{query(sel, "1796644800.25"), query(sel, "1796644800.25"), query(sel, "1796644860.5")} {
		if ns := p.note(f); ns != "team-a" {
			t.Errorf("namespace %q, want team-a", ns)
		}
	}
	if ns := p.note(query("vector(1)", "1796644800")); ns != "" {
		t.Errorf("the probe's namespace %q, want none", ns)
	}
	starts := p.starts[types.NamespacedName{Namespace: "team-a", Name: "web"}]
	if len(starts) != 2 || starts[1].Sub(starts[0]) != 60250*time.Millisecond {
		t.Errorf("starts %v, want two, 60.25 s apart", starts)
	}
	if p.queries != 4 {
		t.Errorf("%d queries counted, want 4", p.queries)
	}
}
