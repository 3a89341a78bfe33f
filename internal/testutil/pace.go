// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package testutil

import (
	"context"
	"time"
)

// Pace starts work at perSecond a second until ctx ends: every interval
// it calls batch with the numbers of the writes due by then that have not
// started, [from, to). A tick a busy machine delays or drops is made up
// at the next one, so the rate holds over the whole run instead of
// falling with every late tick, and a rate that does not divide into
// ticks (25 a second in tenths) is kept exactly rather than rounded down.
func Pace(ctx context.Context, perSecond int, interval time.Duration, batch func(from, to int)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	began, next := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			due := int(now.Sub(began).Seconds() * float64(perSecond))
			if due > next {
				batch(next, due)
				next = due
			}
		}
	}
}
