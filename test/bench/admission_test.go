// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"strings"
	"testing"
	"time"
)

func TestAdmissionLoad_SummarySinceCountsOnlyTheLaterWrites(t *testing.T) {
	l := &admissionLoad{}
	for i := range 200 {
		took := 10 * time.Millisecond
		if i >= 100 {
			took = time.Second
		}
		l.record(admissionWrite{kind: "create scheduletask", took: took})
	}
	from := l.written()
	if from != 200 {
		t.Fatalf("written = %d, want 200", from)
	}
	l.record(admissionWrite{kind: "create scheduletask", took: 2 * time.Second})
	if got := l.summarySince(from); got.Writes != 1 || got.Latency.P99 != 2 {
		t.Errorf("the last write alone: %d writes, p99 %v s; want 1 write of 2 s", got.Writes, got.Latency.P99)
	}
	if got := l.summarySince(0); got.Writes != 201 || got.Latency.P50 > 1 {
		t.Errorf("every write: %d writes, p50 %v s; want 201 writes", got.Writes, got.Latency.P50)
	}
}

func TestAdmissionRows_ShowEachRoundBesideThePooledFigure(t *testing.T) {
	var b strings.Builder
	admissionRows(&b, &results{Admission: &admissionResult{
		PerSecond: 100,
		Operator:  admissionRun{Writes: 3, Latency: stats{P99: 2.2}},
		Floor:     admissionRun{Writes: 3, Latency: stats{P99: 2.0}},
		Rounds:    []admissionRound{{P99Seconds: 2.4, FloorP99Seconds: 2.0}, {P99Seconds: 1.9, FloorP99Seconds: 2.0}},
	}})
	out := b.String()
	for _, want := range []string{"120s each side", "each of 2 rounds", "= 1.20", "= 0.95"} {
		if !strings.Contains(out, want) {
			t.Errorf("the rows lack %q:\n%s", want, out)
		}
	}
}
