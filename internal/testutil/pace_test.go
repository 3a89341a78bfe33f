// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package testutil

import (
	"context"
	"testing"
	"time"
)

// TestPace_KeepsTheRateThroughAStalledBatch stalls one batch for longer
// than several ticks: the writes due meanwhile start at the next tick, in
// order and each once, and a rate that is not a whole number per tick is
// not rounded down.
func TestPace_KeepsTheRateThroughAStalledBatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	began := time.Now()
	var started []int
	stalled := false
	Pace(ctx, 25, 100*time.Millisecond, func(from, to int) {
		for i := from; i < to; i++ {
			started = append(started, i)
		}
		if !stalled {
			stalled = true
			time.Sleep(450 * time.Millisecond)
		}
	})
	elapsed := time.Since(began).Seconds()
	for i, n := range started {
		if n != i {
			t.Fatalf("write %d started as number %d: %v", i, n, started)
		}
	}
	// All but the writes due in the last tick have started.
	if want := int(elapsed*25) - 3; len(started) < want {
		t.Fatalf("%d writes started in %.2f s at 25 a second, want at least %d", len(started), elapsed, want)
	}
}
