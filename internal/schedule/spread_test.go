// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSpread_LeavesAnExpressionWithoutHAsItIs(t *testing.T) {
	for _, expr := range []string{"* * * * *", "0 2 * * THU", "@daily", "*/5 * * * MON-FRI"} {
		got, err := Spread(expr, "team-a/backup")
		if err != nil || got != expr {
			t.Errorf("Spread(%q) = %q, %v; want it unchanged", expr, got, err)
		}
	}
}

func TestSpread_IsStablePerTaskAndAValidScheduleInRange(t *testing.T) {
	tests := []struct {
		expr string
		// check judges the resolved field(s) that had H.
		check func(fields []string) error
	}{
		{"H 2 * * *", func(f []string) error { return inRange(f[0], 0, 59) }},
		{"H(0-29) H(1-5) * * *", func(f []string) error {
			if err := inRange(f[0], 0, 29); err != nil {
				return err
			}
			return inRange(f[1], 1, 5)
		}},
		{"0 0 H * H", func(f []string) error {
			if err := inRange(f[2], 1, 28); err != nil {
				return err
			}
			return inRange(f[4], 0, 6)
		}},
		{"H/15 * * * *", func(f []string) error { return stepFrom(f[0], 0, 59, 15) }},
		{"H(10-40)/10 * * * *", func(f []string) error { return stepFrom(f[0], 10, 40, 10) }},
		{"0 H,H(12-23) * * *", func(f []string) error {
			a, b, _ := strings.Cut(f[1], ",")
			if err := inRange(a, 0, 23); err != nil {
				return err
			}
			return inRange(b, 12, 23)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			first, err := Spread(tt.expr, "team-a/backup")
			if err != nil {
				t.Fatalf("Spread: %v", err)
			}
			if again, _ := Spread(tt.expr, "team-a/backup"); again != first {
				t.Errorf("not stable: %q then %q", first, again)
			}
			if err := Check(first); err != nil {
				t.Errorf("resolved %q does not pass Check: %v", first, err)
			}
			if err := tt.check(strings.Fields(first)); err != nil {
				t.Errorf("resolved %q: %v", first, err)
			}
		})
	}
}

// inRange checks that v is a single number from lo to hi.
func inRange(v string, lo, hi int) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return fmt.Errorf("%q is not one number from %d to %d", v, lo, hi)
	}
	return nil
}

// stepFrom checks that v is "s-hi/n" with s from lo to lo+n-1.
func stepFrom(v string, lo, hi, n int) error {
	var start, end, step int
	if _, err := fmt.Sscanf(v, "%d-%d/%d", &start, &end, &step); err != nil {
		return fmt.Errorf("%q is not start-end/step: %w", v, err)
	}
	if step != n || end != hi {
		return fmt.Errorf("%q: want step %d up to %d", v, n, hi)
	}
	if start < lo || start >= lo+n {
		return fmt.Errorf("%q: start %d not in [%d, %d)", v, start, lo, lo+n)
	}
	return nil
}

func TestSpread_SpreadsATeamOfTasksAcrossTheHour(t *testing.T) {
	minutes := map[string]int{}
	for i := range 1000 {
		got, err := Spread("H 2 * * *", fmt.Sprintf("team-%d/backup", i))
		if err != nil {
			t.Fatal(err)
		}
		minutes[strings.Fields(got)[0]]++
	}
	// 1,000 tasks over 60 minutes: about 17 each. Every minute is used, and
	// none takes more than three times its share, which a hash that is not
	// spreading (the same value for all, or a few) would fail.
	if len(minutes) != 60 {
		t.Errorf("1000 tasks use %d of the 60 minutes", len(minutes))
	}
	for m, n := range minutes {
		if n > 50 {
			t.Errorf("minute %s has %d of 1000 tasks", m, n)
		}
	}
}

func TestSpread_FieldsPickIndependently(t *testing.T) {
	same := 0
	for i := range 200 {
		got, _ := Spread("H H(0-23) * * *", fmt.Sprintf("ns/task-%d", i))
		f := strings.Fields(got)
		if f[0] == f[1] {
			same++
		}
	}
	// Independent picks agree about once in 24 (some 8 of 200); the same
	// hash for both fields would agree every time the minute is below 24.
	if same > 30 {
		t.Errorf("minute and hour agree for %d of 200 tasks", same)
	}
}

func TestSpread_RefusesMalformedH(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{"H * * *", "five-field form"},
		{"@daily H", "five-field form"},
		{"H(30-10) * * * *", "the lower first"},
		{"H(0-60) * * * *", "from 0 to 59"},
		{"0 H(5) * * *", "range such as"},
		{"H(0-5 * * * *", "no closing parenthesis"},
		{"H/0 * * * *", "positive number"},
		{"Hx * * * *", "may follow H"},
		{"0 0 H(0-3) * *", "from 1 to 28"},
	} {
		_, err := Spread(tt.expr, "ns/name")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Spread(%q) = %v, want an error saying %q", tt.expr, err, tt.want)
		}
	}
}

func TestEffective_NextRunOfASpreadTaskIsInItsRange(t *testing.T) {
	e, err := Effective("H(0-29) 2 * * *", "team-a", "backup")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(e, "")
	if err != nil {
		t.Fatal(err)
	}
	next := s.Next(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if next.Hour() != 2 || next.Minute() > 29 || next.Day() != 2 {
		t.Errorf("next run %v, want 2 December between 02:00 and 02:29", next)
	}
}
