//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLockClusterCreation_OneClusterAtATimeUnderAWorkFolder holds the lock
// and shows that a second taker waits for it until its context ends, and
// gets it once it is released.
func TestLockClusterCreation_OneClusterAtATimeUnderAWorkFolder(t *testing.T) {
	t.Setenv("KWOK_WORKDIR", t.TempDir())
	unlock, err := lockClusterCreation(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if second, err := lockClusterCreation(ctx); !errors.Is(err, context.DeadlineExceeded) {
		if second != nil {
			second()
		}
		t.Fatalf("a second taker got the held lock (error %v), want it to wait until its context ends", err)
	}
	unlock()
	second, err := lockClusterCreation(t.Context())
	if err != nil {
		t.Fatalf("the released lock was not given to the next taker: %v", err)
	}
	second()
}
