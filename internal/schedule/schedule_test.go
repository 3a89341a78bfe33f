/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

	http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package schedule

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNext_FollowsTheCronJobParserInTheTaskZone(t *testing.T) {
	base := time.Date(2026, 3, 28, 22, 30, 0, 0, time.UTC) // the night before Europe's DST change
	tests := []struct {
		name, expr, zone string
		want             time.Time
	}{
		{"every minute", "* * * * *", "", time.Date(2026, 3, 28, 22, 31, 0, 0, time.UTC)},
		{"every two hours", "0 */2 * * *", "", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC)},
		{"hourly macro", "@hourly", "", time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC)},
		{"daily macro", "@daily", "", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC)},
		{"daily in Berlin", "@daily", "Europe/Berlin", time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC)},
		{"09:00 Berlin after DST", "0 9 * * *", "Europe/Berlin", time.Date(2026, 3, 29, 7, 0, 0, 0, time.UTC)},
		{"named weekday", "0 12 * * MON", "", time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr, tt.zone)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := s.Next(base); !got.Equal(tt.want) {
				t.Errorf("Next = %v, want %v", got.UTC(), tt.want)
			}
		})
	}
}

func TestParse_RejectsWhatTheCronJobControllerRejects(t *testing.T) {
	for _, tt := range []struct{ expr, zone string }{
		{"* * * *", ""},               // four fields
		{"0 0 * * * *", ""},           // six fields: no seconds in CronJobs
		{"61 * * * *", ""},            // minute out of range
		{"@fortnightly", ""},          // no such descriptor
		{"* * * * *", "Mars/Olympus"}, // no such zone
	} {
		if _, err := Parse(tt.expr, tt.zone); err == nil {
			t.Errorf("Parse(%q, %q) succeeded, want an error", tt.expr, tt.zone)
		}
	}
}

func TestNextN_ReturnsIncreasingTimesAndStopsWhenNeverDue(t *testing.T) {
	s, err := Parse("*/15 * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := []time.Time{
		time.Date(2026, 1, 1, 0, 15, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 45, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 1, 15, 0, 0, time.UTC),
	}
	if diff := cmp.Diff(want, s.NextN(start, 5)); diff != "" {
		t.Errorf("NextN(%v, 5) (-want +got):\n%s", start, diff)
	}
	never, err := Parse("0 0 30 2 *", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := never.NextN(time.Now(), 3); len(got) != 0 {
		t.Errorf("30 February fired at %v", got)
	}
}
