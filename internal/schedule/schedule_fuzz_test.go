// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package schedule

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// fuzzEpoch and fuzzSpan bound the instants the fuzzer asks Next about: forty
// years from 2000, spanning decades of DST changes and the zone database's
// rules for the future.
var fuzzEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const fuzzSpan = 40 * 365 * 24 * 60 * 60 // seconds

// fuzzRuns is how many firings NextN is asked for.
const fuzzRuns = 5

// FuzzParse protects what the operator, its webhook and the CLI rely on when
// they read a schedule: Parse never panics, whatever a user typed; it accepts
// exactly what the CronJob controller's parser (cron.ParseStandard) accepts
// without panicking, in a zone the time zone database knows; and a parsed
// schedule only moves forward: Next is strictly after the time it is given
// (or zero when the schedule never fires) and in the task's zone, and NextN
// is strictly increasing, starts with Next and stops early only when the
// schedule never fires again. It also protects admission's stricter reading:
// Check accepts exactly what the parser accepts less robfig/cron's @every
// (the documented language), and what it accepts never fires twice within a
// minute.
func FuzzParse(f *testing.F) {
	for _, seed := range []struct {
		expr, zone string
		offset     int64
	}{
		{"* * * * *", "", 0},
		{"*/15 * * * *", "", 0},
		{"0 */2 * * *", "UTC", 0},
		{"5-55/10 9-17 * * MON-FRI", "Europe/Berlin", 0},
		{"0 0 1,15 * *", "", 0},
		{"0 12 * JAN-MAR,DEC SUN", "", 0},
		{"30 2 * * *", "America/New_York", 826_200_000}, // the eve of 2026-03-08, when 2:30 is skipped
		{"30 1 * * *", "America/New_York", 846_763_200}, // the eve of 2026-11-01, when 1:30 happens twice
		{"0 1 * * *", "Europe/London", 828_014_400},     // the eve of 2026-03-29, when 1:00 is skipped
		{"45 2 * * *", "Pacific/Chatham", 843_696_000},  // +12:45; 2:45 is skipped on 2026-09-27
		{"0 0 * * *", "America/Sao_Paulo", 594_561_600}, // 2018-11-04 had no midnight
		{"0 0 29 2 *", "", 0},
		{"0 0 30 2 *", "", 0}, // never fires
		{"0 0 31 4,6,9,11 *", "Asia/Kolkata", 0},
		{"0 0 ? * *", "", 0},
		{"@yearly", "", 0},
		{"@annually", "Australia/Lord_Howe", 0}, // 30-minute DST
		{"@monthly", "", 0},
		{"@weekly", "", 0},
		{"@daily", "Europe/London", 0},
		{"@midnight", "", 0},
		{"@hourly", "Asia/Kathmandu", 0},
		{"@every 90s", "", 0},
		{"@every 1s", "", 0},
		{"@every", "", 0},
		{"TZ=UTC @every 1s", "", 0},
		{"CRON_TZ=UTC   @every 2s", "", 0},
		{"*/10 * * * * *", "", 0},
		{"@every -1h", "", 0},
		{"@reboot", "", 0},
		{"@fortnightly", "", 0},
		{"TZ=America/New_York 0 9 * * *", "", 0},
		{"CRON_TZ=Europe/London 30 1 * * *", "Pacific/Chatham", 0},
		{"TZ=Mars/Olympus 0 9 * * *", "", 0},
		{"", "", 0},
		{" ", "UTC", 0},
		{"* * * *", "", 0},
		{"0 0 * * * *", "", 0},
		{"61 * * * *", "", 0},
		{"* 24 * * *", "", 0},
		{"*/0 * * * *", "", 0},
		{"5-1 * * * *", "", 0},
		{"1-2-3 * * * *", "", 0},
		{"a b c d e", "", 0},
		{"* * * * *", "Mars/Olympus", 0},
		{"* * * * *", "Local", 0},
		{"* * * * *", "../etc/passwd", 0},
		{"* * * * *", "America/", 0},
	} {
		f.Add(seed.expr, seed.zone, seed.offset)
	}

	f.Fuzz(func(t *testing.T, expr, zone string, offset int64) {
		checkErr := Check(expr)
		if wantOK := parseStandard(expr) == nil && !isEvery(expr); (checkErr == nil) != wantOK {
			t.Fatalf("Check(%q) error = %v, but cron.ParseStandard error = %v and @every = %t",
				expr, checkErr, parseStandard(expr), isEvery(expr))
		}
		if checkErr == nil {
			s, err := Parse(expr, "")
			if err != nil {
				t.Fatalf("Check(%q) accepted what Parse refuses: %v", expr, err)
			}
			from := fuzzEpoch.Add(time.Duration(uint64(offset)%fuzzSpan) * time.Second)
			prev := time.Time{}
			for _, r := range s.NextN(from, fuzzRuns) {
				if !prev.IsZero() && r.Sub(prev) < time.Minute {
					t.Fatalf("Check(%q) accepted a schedule that fires at %v and again at %v", expr, prev, r)
				}
				prev = r
			}
		}

		s, err := Parse(expr, zone)

		wantLoc, zoneErr := time.LoadLocation(zone) // "" is UTC, as in Parse
		cronErr := parseStandard(expr)
		if wantOK := zoneErr == nil && cronErr == nil; (err == nil) != wantOK {
			t.Fatalf("Parse(%q, %q) error = %v, but zone error = %v and cron.ParseStandard error = %v",
				expr, zone, err, zoneErr, cronErr)
		}
		if err != nil {
			return
		}

		from := fuzzEpoch.Add(time.Duration(uint64(offset)%fuzzSpan) * time.Second)
		next := s.Next(from)
		if !next.IsZero() {
			if !next.After(from) {
				t.Fatalf("Parse(%q, %q).Next(%v) = %v, not after it", expr, zone, from, next)
			}
			if got := next.Location().String(); got != wantLoc.String() {
				t.Errorf("Parse(%q, %q).Next(%v) is in zone %q, want %q", expr, zone, from, got, wantLoc)
			}
		}

		runs := s.NextN(from, fuzzRuns)
		if len(runs) > fuzzRuns {
			t.Fatalf("NextN(%v, %d) returned %d times", from, fuzzRuns, len(runs))
		}
		if len(runs) < fuzzRuns && !s.Next(lastOr(runs, from)).IsZero() {
			t.Fatalf("NextN(%v, %d) stopped after %d times although the schedule fires again", from, fuzzRuns, len(runs))
		}
		if len(runs) > 0 && !runs[0].Equal(next) {
			t.Fatalf("NextN(%v, %d)[0] = %v, but Next = %v", from, fuzzRuns, runs[0], next)
		}
		prev := from
		for i, r := range runs {
			if !r.After(prev) {
				t.Fatalf("Parse(%q, %q).NextN(%v, %d) = %v: time %d is not after %v", expr, zone, from, fuzzRuns, runs, i, prev)
			}
			prev = r
		}
	})
}

// parseStandard reports what the CronJob controller's parser makes of expr,
// a panic counting as a rejection.
func parseStandard(expr string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cron.ParseStandard panicked: %v", r)
		}
	}()
	_, err = cron.ParseStandard(expr)
	return err
}

// isEvery reports whether robfig/cron reads expr as "@every <duration>":
// the expression, after an optional TZ= or CRON_TZ= prefix and the spaces
// that follow it, starts with "@every".
func isEvery(expr string) bool {
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		if i := strings.Index(expr, " "); i >= 0 {
			expr = strings.TrimSpace(expr[i:])
		}
	}
	return strings.HasPrefix(expr, "@every")
}

// lastOr returns the last of ts, or def when there is none.
func lastOr(ts []time.Time, def time.Time) time.Time {
	if len(ts) == 0 {
		return def
	}
	return ts[len(ts)-1]
}
