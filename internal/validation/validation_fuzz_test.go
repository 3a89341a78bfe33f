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

package validation

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/schedule"
	"github.com/example/platform-operator/internal/testutil"
)

// Bits of FuzzValidateScheduleTask's set argument: which optional fields the
// task has.
const (
	setTimeZone uint8 = 1 << iota
	setBackoffLimit
	setActiveDeadline
	setStartingDeadline
	setSuccessfulHistory
	setFailedHistory
)

// FuzzValidateScheduleTask protects what the admission webhook and
// `kubectl stask lint` rely on: validating any task, however malformed, does
// not panic or modify the task; it gives the same errors every time; every
// error names a field under spec. or metadata. and says what is wrong; and
// the task's schedule and time zone are rejected exactly when the schedule
// package, which the controller computes run times with, cannot use them.
func FuzzValidateScheduleTask(f *testing.F) {
	all := setTimeZone | setBackoffLimit | setActiveDeadline | setStartingDeadline | setSuccessfulHistory | setFailedHistory
	type seed struct {
		name, schedule, timeZone, image, policy string
		backoff                                 int32
		active, starting                        int64
		successful, failed                      int32
		set                                     uint8
	}
	for _, s := range []seed{
		{"ok", "* * * * *", "", "busybox:1.36", "", 0, 0, 0, 0, 0, 0},
		{"ok", "@daily", "Europe/Berlin", "busybox:1.36", "Allow", 6, 60, 10, 10, 10, all},
		{"ok", "*/5 9-17 * * MON-FRI", "America/New_York", "registry.example.com:5000/team/app:v1", "Forbid", 0, 1, 10, 0, 0, all},
		{"ok", "30 2 * * *", "Pacific/Chatham", "ghcr.io/org/app@sha256:" + strings.Repeat("a", 64), "Replace", 100, 1 << 40, 1 << 40, 1000, 1000, all},
		{"ok", "@every 1h", "Europe/London", "busybox", "", 0, 0, 0, 0, 0, setTimeZone},
		{strings.Repeat("a", 52), "@hourly", "", "busybox", "", 0, 0, 0, 0, 0, 0},
		{strings.Repeat("a", 53), "@hourly", "", "busybox", "", 0, 0, 0, 0, 0, 0},
		{"", "", "", "", "", 0, 0, 0, 0, 0, 0},
		{"ok", "", "", "busybox", "", -1, 0, 9, -1, 1001, all},
		{"ok", "every day", "Mars/Olympus", "Busy Box", "Sometimes", 101, -1, -1 << 63, 1<<31 - 1, -1 << 31, all},
		{"ok", "0 0 * * * *", "", "busybox", "", 0, 0, 0, 0, 0, 0},
		{"ok", "CRON_TZ=UTC 0 * * * *", "", "busybox", "", 0, 0, 0, 0, 0, 0},
		{"ok", "TZ=UTC", "", "busybox", "", 0, 0, 0, 0, 0, 0},
		{"ok", "0 0 30 2 *", "Local", "busybox", "", 0, 0, 0, 0, 0, setTimeZone},
		{"ok", "@daily", "", "busybox", "", 0, 0, 0, 0, 0, setTimeZone}, // set to ""
		{"ok", "@daily", "../../etc/passwd", "UPPER/case", "allow", 0, 0, 0, 0, 0, setTimeZone},
	} {
		f.Add(s.name, s.schedule, s.timeZone, s.image, s.policy, s.backoff, s.active, s.starting, s.successful, s.failed, s.set)
	}

	f.Fuzz(func(t *testing.T, name, sched, timeZone, image, policy string,
		backoff int32, active, starting int64, successful, failed int32, set uint8) {
		st := testutil.NewScheduleTask("ns", name, testutil.WithSchedule(sched))
		st.Spec.Image = image
		st.Spec.ConcurrencyPolicy = platformv1.ConcurrencyPolicy(policy)
		if set&setTimeZone != 0 {
			st.Spec.TimeZone = ptr.To(timeZone)
		}
		if set&setBackoffLimit != 0 {
			st.Spec.BackoffLimit = ptr.To(backoff)
		}
		if set&setActiveDeadline != 0 {
			st.Spec.ActiveDeadlineSeconds = ptr.To(active)
		}
		if set&setStartingDeadline != 0 {
			st.Spec.StartingDeadlineSeconds = ptr.To(starting)
		}
		if set&setSuccessfulHistory != 0 {
			st.Spec.SuccessfulRunsHistoryLimit = ptr.To(successful)
		}
		if set&setFailedHistory != 0 {
			st.Spec.FailedRunsHistoryLimit = ptr.To(failed)
		}
		before := st.DeepCopy()

		errs := ScheduleTask(st)

		if !equality.Semantic.DeepEqual(before, st) {
			t.Fatalf("ScheduleTask modified the task: before %+v, after %+v", before, st)
		}
		if again := ScheduleTask(st.DeepCopy()); !reflect.DeepEqual(errs, again) {
			t.Fatalf("ScheduleTask is not deterministic: %q, then %q", Format(errs), Format(again))
		}
		for _, e := range errs {
			if !strings.HasPrefix(e.Field, "spec.") && !strings.HasPrefix(e.Field, "metadata.") {
				t.Errorf("error %q names no field under spec. or metadata.", e.Error())
			}
			if e.Type == "" || e.Detail == "" {
				t.Errorf("error on %s has type %q and detail %q; want both", e.Field, e.Type, e.Detail)
			}
		}
		lines := Format(errs)
		if len(lines) != len(errs) {
			t.Fatalf("Format made %d lines of %d errors: %q", len(lines), len(errs), lines)
		}
		for i, line := range lines {
			if !strings.HasPrefix(line, errs[i].Field+": ") {
				t.Errorf("line %q does not start with its field %s", line, errs[i].Field)
			}
		}

		_, parseErr := schedule.Parse(sched, "")
		scheduleUnusable := sched == "" || strings.Contains(sched, "TZ=") || parseErr != nil
		if got := hasErrorOn(errs, "spec.schedule"); got != scheduleUnusable {
			t.Errorf("schedule %q: error on spec.schedule = %t, want %t (schedule.Parse: %v); errors: %q",
				sched, got, scheduleUnusable, parseErr, Format(errs))
		}
		zone := ptr.Deref(st.Spec.TimeZone, "")
		_, zoneErr := schedule.Parse("* * * * *", zone)
		if got := hasErrorOn(errs, "spec.timeZone"); got != (zoneErr != nil) {
			t.Errorf("time zone %q: error on spec.timeZone = %t, but schedule.Parse says %v; errors: %q",
				zone, got, zoneErr, Format(errs))
		}
	})
}

// hasErrorOn reports whether errs has an error on the field at path.
func hasErrorOn(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if e.Field == path {
			return true
		}
	}
	return false
}
