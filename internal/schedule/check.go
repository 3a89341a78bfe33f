// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package schedule

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Macros are the named schedules the CronJob documentation promises, and the
// only ones Check accepts.
var Macros = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

// Check reports whether expr is in the cron language the CronJob
// documentation promises: five fields (minute hour day-of-month month
// day-of-week), or one of Macros. It is stricter than Parse, which reads
// whatever the CronJob controller's parser reads: that parser also takes
// robfig/cron's "@every <duration>", which the documentation does not
// mention and which fires as often as every second (two API writes a second
// per task). Admission uses Check; reading a stored task uses Parse, so that
// a task admitted before Check existed keeps its next run time.
func Check(expr string) error {
	if strings.HasPrefix(expr, "@") && !slices.Contains(Macros, expr) {
		if strings.HasPrefix(expr, "@every") {
			return fmt.Errorf("invalid cron expression %q: @every is not part of the CronJob schedule language; "+
				"use five fields, e.g. \"*/5 * * * *\" for every five minutes", expr)
		}
		return fmt.Errorf("invalid cron expression %q: unknown macro; use one of %s", expr, strings.Join(Macros, ", "))
	}
	s, err := Parse(expr, "")
	if err != nil {
		return err
	}
	// Every expression that gets here fires on second 0 of a minute at most;
	// the check says so in code, so that a future parser option (seconds,
	// @every) cannot slip through unnoticed.
	spec, ok := s.spec.(*cron.SpecSchedule)
	if !ok || spec.Second&^(1<<63) != 1 {
		return fmt.Errorf("invalid cron expression %q: fires more often than once a minute", expr)
	}
	return nil
}

// validZonePart is the CronJob API's rule for each slash-separated part of
// a time zone name (k8s.io/kubernetes/pkg/apis/batch/validation).
var validZonePart = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// CheckZone reports whether the CronJob API accepts zone as a CronJob's
// spec.timeZone: not empty, not "Local" (the kube-controller-manager's own
// zone, in any case), made of the characters the API allows, and known to
// the time zone database. A zone the API refuses would leave the task
// without a CronJob, so admission refuses it first.
func CheckZone(zone string) error {
	switch {
	case zone == "":
		return errors.New("must not be empty: leave timeZone unset for the kube-controller-manager's zone, or name an IANA zone such as \"Europe/Berlin\"")
	case strings.EqualFold(zone, "Local"):
		return errors.New("must name an explicit IANA zone such as \"Europe/Berlin\": the CronJob API refuses \"Local\"")
	}
	for part := range strings.SplitSeq(zone, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validZonePart.MatchString(part) {
			return errors.New("not a time zone of the IANA database, such as \"Europe/Berlin\"")
		}
	}
	if _, err := time.LoadLocation(zone); err != nil {
		return errors.New("not a time zone of the IANA database, such as \"Europe/Berlin\"")
	}
	return nil
}
