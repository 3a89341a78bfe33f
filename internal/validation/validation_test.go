// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

func TestScheduleTask_NamesEveryBadField(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*platformv1.ScheduleTask)
		want   string // one line of Format's output
	}{
		{"missing image", func(st *platformv1.ScheduleTask) { st.Spec.Image = "" }, "spec.image: is required"},
		{"bad image", func(st *platformv1.ScheduleTask) { st.Spec.Image = "Busy Box" }, `spec.image: not a valid image reference`},
		{"missing schedule", func(st *platformv1.ScheduleTask) { st.Spec.Schedule = "" }, "spec.schedule: is required"},
		{"words", func(st *platformv1.ScheduleTask) { st.Spec.Schedule = "every day" }, `spec.schedule: not a cron expression`},
		{"six fields", func(st *platformv1.ScheduleTask) { st.Spec.Schedule = "0 0 * * * *" }, `("0 0 * * * *")`},
		{"TZ prefix", func(st *platformv1.ScheduleTask) { st.Spec.Schedule = "CRON_TZ=UTC 0 * * * *" }, "use spec.timeZone"},
		{"zone", func(st *platformv1.ScheduleTask) { st.Spec.TimeZone = ptr.To("Mars/Olympus") }, `spec.timeZone: not a time zone of the IANA database, such as "Europe/Berlin" ("Mars/Olympus")`},
		{"policy", func(st *platformv1.ScheduleTask) { st.Spec.ConcurrencyPolicy = "Sometimes" }, `spec.concurrencyPolicy: must be one of "Allow", "Forbid", "Replace" ("Sometimes")`},
		{"negative backoff", func(st *platformv1.ScheduleTask) { st.Spec.BackoffLimit = ptr.To[int32](-1) }, "spec.backoffLimit: must be at least 0 (-1)"},
		{"huge backoff", func(st *platformv1.ScheduleTask) { st.Spec.BackoffLimit = ptr.To[int32](101) }, "spec.backoffLimit: must be at most 100 (101)"},
		{"zero deadline", func(st *platformv1.ScheduleTask) { st.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) }, "spec.activeDeadlineSeconds: must be at least 1 (0)"},
		{"short starting deadline", func(st *platformv1.ScheduleTask) { st.Spec.StartingDeadlineSeconds = ptr.To[int64](5) }, "spec.startingDeadlineSeconds: must be at least 10 (5)"},
		{"history", func(st *platformv1.ScheduleTask) { st.Spec.FailedRunsHistoryLimit = ptr.To[int32](5000) }, "spec.failedRunsHistoryLimit: must be at most 1000 (5000)"},
		{"long name", func(st *platformv1.ScheduleTask) { st.Name = strings.Repeat("a", 60) }, "metadata.name: must be no more than 52 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := testutil.NewScheduleTask("ns", "ok")
			tt.mutate(st)
			lines := Format(ScheduleTask(st))
			if len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("got %q, want one line containing %q", lines, tt.want)
			}
		})
	}
}

func TestScheduleTask_ListsEveryProblemAtOnce(t *testing.T) {
	st := testutil.NewScheduleTask("ns", "ok", testutil.WithSchedule("every day"), testutil.WithBackoffLimit(-1))
	st.Spec.Image = ""
	st.Spec.TimeZone = ptr.To("Nowhere/Land")
	errs := ScheduleTask(st)
	fields := make([]string, 0, len(errs))
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	want := []string{"spec.schedule", "spec.timeZone", "spec.image", "spec.backoffLimit"}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("fields with a problem (-want +got):\n%s\nall: %q", diff, Format(errs))
	}
}

func TestScheduleTask_AcceptsGoodTasks(t *testing.T) {
	for _, mutate := range []func(*platformv1.ScheduleTask){
		func(*platformv1.ScheduleTask) {},
		func(st *platformv1.ScheduleTask) {
			st.Spec.Schedule = "@weekly"
			st.Spec.TimeZone = ptr.To("Asia/Kolkata")
		},
		func(st *platformv1.ScheduleTask) { st.Spec.Schedule = "*/5 9-17 * * MON-FRI" },
		func(st *platformv1.ScheduleTask) {
			st.Spec.Image = "registry.example.com:5000/team/app@sha256:" + strings.Repeat("a", 64)
		},
		func(st *platformv1.ScheduleTask) { st.Name = strings.Repeat("a", 52) },
		func(st *platformv1.ScheduleTask) {
			st.Spec.BackoffLimit = ptr.To[int32](0)
			st.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
			st.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
		},
	} {
		st := testutil.NewScheduleTask("ns", "ok")
		mutate(st)
		if errs := ScheduleTask(st); len(errs) > 0 {
			t.Errorf("%+v rejected: %q", st.Spec, Format(errs))
		}
	}
}
