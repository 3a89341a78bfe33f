// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package schedule reads cron schedules exactly as the Kubernetes CronJob
// controller does (robfig/cron's standard parser: five fields or a
// descriptor such as @daily), in an IANA time zone. The operator, its
// webhooks and the kubectl plugin all use it, so they agree on every
// expression.
package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a parsed cron expression bound to a time zone.
type Schedule struct {
	spec cron.Schedule
	loc  *time.Location
}

// Parse parses expr in the zone named timeZone; an empty zone means UTC, as
// the kube-controller-manager runs in UTC in practically every cluster.
func Parse(expr, timeZone string) (*Schedule, error) {
	loc := time.UTC
	if timeZone != "" {
		l, err := time.LoadLocation(timeZone)
		if err != nil {
			return nil, fmt.Errorf("unknown time zone %q: %w", timeZone, err)
		}
		loc = l
	}
	// robfig/cron slices a TZ= or CRON_TZ= prefix up to the first space and
	// panics when there is none ("TZ=UTC"); such an expression has no
	// schedule, so reject it as the parser would have.
	if (strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=")) && !strings.Contains(expr, " ") {
		return nil, fmt.Errorf("invalid cron expression %q: a TZ= or CRON_TZ= prefix must be followed by a space and the schedule", expr)
	}
	spec, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression %q: %w", expr, err)
	}
	return &Schedule{spec: spec, loc: loc}, nil
}

// Next returns the first time the schedule fires strictly after t, in the
// schedule's zone, or the zero time when it never fires (e.g. "0 0 30 2 *").
func (s *Schedule) Next(t time.Time) time.Time {
	return s.spec.Next(t.In(s.loc))
}

// NextN returns the next n times the schedule fires after t.
func (s *Schedule) NextN(t time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	for range n {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}
