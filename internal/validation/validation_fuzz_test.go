// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
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

// crdPath is the generated CustomResourceDefinition whose schema the
// validation repeats.
const crdPath = "../../config/crd/bases/platform.example.com_scheduletasks.yaml"

// FuzzValidateScheduleTask protects what the admission webhook and
// `kubectl stask lint` rely on: validating any task, however malformed, does
// not panic or modify the task; it gives the same errors every time; every
// error names a field under spec. or metadata. and says what is wrong. Its
// verdict on each field is checked against references that share no code
// with it: the schedule against the CronJob controller's parser
// (cron.ParseStandard, a panic counting as a rejection) with the documented
// restrictions (not empty, no TZ= or CRON_TZ=, no @every); the time zone,
// when set, against the CronJob API's rules (not empty, not Local, its
// characters) and the time zone database (time.LoadLocation); the numbers and the concurrency
// policy against the minimum, maximum and enum of the generated CRD's
// schema, which validation promises to repeat; and the name against the
// length of the Job names the CronJob controller makes from it.
func FuzzValidateScheduleTask(f *testing.F) {
	schema := specSchema(f)
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
			// "spec" itself is named by the one rule that spans several
			// fields: the total length of command, args and env.
			if e.Field != "spec" && !strings.HasPrefix(e.Field, "spec.") && !strings.HasPrefix(e.Field, "metadata.") {
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

		// The CronJob controller names each Job <task>-<10 digits>, and a
		// Job's name must fit a label value, 63 characters.
		expect(t, errs, "metadata.name", len(name)+len("-0123456789") > 63, "name of %d characters", len(name))

		cronErr := parseStandard(sched)
		tooLong := int64(utf8.RuneCountInString(sched)) > ptr.Deref(schema["schedule"].MaxLength, math.MaxInt64)
		expect(t, errs, "spec.schedule", sched == "" || strings.Contains(sched, "TZ=") || strings.HasPrefix(sched, "@every") ||
			cronErr != nil || tooLong, "schedule %q (cron.ParseStandard: %v, longer than the schema allows: %t)", sched, cronErr, tooLong)

		zone := ptr.Deref(st.Spec.TimeZone, "")
		_, zoneErr := time.LoadLocation(zone)
		expect(t, errs, "spec.timeZone", st.Spec.TimeZone != nil && (zone == "" || zoneErr != nil || !cronJobAcceptsZone(zone)),
			"time zone %q (time.LoadLocation: %v, CronJob API accepts: %t)", zone, zoneErr, cronJobAcceptsZone(zone))

		enum := schema["concurrencyPolicy"].Enum
		expect(t, errs, "spec.concurrencyPolicy", policy != "" && !inEnum(enum, policy), "policy %q (schema enum %s)", policy, enumString(enum))

		for _, n := range []struct {
			field string
			value *int64
		}{
			{"backoffLimit", int64Of(st.Spec.BackoffLimit)},
			{"activeDeadlineSeconds", st.Spec.ActiveDeadlineSeconds},
			{"startingDeadlineSeconds", st.Spec.StartingDeadlineSeconds},
			{"successfulRunsHistoryLimit", int64Of(st.Spec.SuccessfulRunsHistoryLimit)},
			{"failedRunsHistoryLimit", int64Of(st.Spec.FailedRunsHistoryLimit)},
		} {
			p := schema[n.field]
			expect(t, errs, "spec."+n.field, n.value != nil && outOfRange(float64(*n.value), p.Minimum, p.Maximum),
				"%s %v (schema minimum %v, maximum %v)", n.field, ptr.Deref(n.value, 0), ptr.Deref(p.Minimum, 0), ptr.Deref(p.Maximum, 0))
		}
	})
}

// expect fails the test unless errs has an error on the field at path
// exactly when want is true; what describes the value, for the message.
func expect(t *testing.T, errs field.ErrorList, path string, want bool, what string, args ...any) {
	t.Helper()
	if got := hasErrorOn(errs, path); got != want {
		t.Errorf("%s: error on %s = %t, want %t; errors: %q", fmt.Sprintf(what, args...), path, got, want, Format(errs))
	}
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

// cronJobZonePart is the CronJob API's pattern for each part of a zone name.
var cronJobZonePart = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// cronJobAcceptsZone is the CronJob API's validateTimeZone
// (k8s.io/kubernetes/pkg/apis/batch/validation), less the time zone database
// lookup: not empty, not Local in any case, and every slash-separated part
// made of the allowed characters, not "." or ".." and not starting with "-".
func cronJobAcceptsZone(zone string) bool {
	if zone == "" || strings.EqualFold(zone, "Local") {
		return false
	}
	for part := range strings.SplitSeq(zone, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !cronJobZonePart.MatchString(part) {
			return false
		}
	}
	return true
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

// specSchema returns the properties of spec in the v1 schema of the
// generated ScheduleTask CRD, the reference for the rules validation repeats.
func specSchema(tb testing.TB) map[string]apiextensionsv1.JSONSchemaProps {
	tb.Helper()
	data, err := os.ReadFile(crdPath)
	if err != nil {
		tb.Fatalf("read the generated CRD (run 'make manifests'): %v", err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		tb.Fatalf("parse %s: %v", crdPath, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == platformv1.GroupVersion.Version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			return v.Schema.OpenAPIV3Schema.Properties["spec"].Properties
		}
	}
	tb.Fatalf("%s has no schema for version %s", crdPath, platformv1.GroupVersion.Version)
	return nil
}

// outOfRange reports whether v is below minimum or above maximum, either of
// which may be absent.
func outOfRange(v float64, minimum, maximum *float64) bool {
	return (minimum != nil && v < *minimum) || (maximum != nil && v > *maximum)
}

// inEnum reports whether s is one of the schema's enum values.
func inEnum(enum []apiextensionsv1.JSON, s string) bool {
	for _, e := range enum {
		var v string
		if json.Unmarshal(e.Raw, &v) == nil && v == s {
			return true
		}
	}
	return false
}

// enumString renders the schema's enum values for a message.
func enumString(enum []apiextensionsv1.JSON) string {
	out := make([]string, 0, len(enum))
	for _, e := range enum {
		out = append(out, string(e.Raw))
	}
	return "[" + strings.Join(out, " ") + "]"
}

// int64Of widens an optional int32.
func int64Of(v *int32) *int64 {
	if v == nil {
		return nil
	}
	return ptr.To(int64(*v))
}
