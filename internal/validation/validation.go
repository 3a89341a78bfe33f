// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package validation holds the rules a ScheduleTask must meet beyond its
// OpenAPI schema: the ones that need code (the CronJob controller's cron
// parser, the time zone database, image references). The admission webhook
// and `kubectl stask lint` both call it, so they always agree.
package validation

import (
	"fmt"
	"strings"
	"time"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/schedule"
)

// MaxTaskNameLength is the longest ScheduleTask name: the CronJob takes the
// task's name and appends 11 characters for each Job's name, which must stay
// within 63.
const MaxTaskNameLength = 52

// ScheduleTask returns every problem with a task, each naming its field. It
// also repeats the schema's checks, so that a manifest can be checked offline
// with nothing but this package.
func ScheduleTask(st *platformv1.ScheduleTask) field.ErrorList {
	var errs field.ErrorList
	if n := len(st.Name); n > MaxTaskNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), st.Name, fmt.Sprintf(
			"must be no more than %d characters, as its CronJob appends 11 to name each Job", MaxTaskNameLength)))
	}
	spec := field.NewPath("spec")
	s := &st.Spec

	switch {
	case s.Schedule == "":
		errs = append(errs, field.Required(spec.Child("schedule"), "a cron expression such as \"0 */2 * * *\" or \"@daily\""))
	case strings.Contains(s.Schedule, "TZ="):
		errs = append(errs, field.Invalid(spec.Child("schedule"), s.Schedule, "must not set a time zone with TZ= or CRON_TZ=; use spec.timeZone"))
	default:
		resolved, err := schedule.Effective(s.Schedule, st.Namespace, st.Name)
		if err == nil {
			err = schedule.Check(resolved)
		}
		if err != nil {
			errs = append(errs, field.Invalid(spec.Child("schedule"), s.Schedule, cronHint(err)))
		}
	}
	// An unset zone is the kube-controller-manager's; a set one must be one
	// the CronJob API accepts, or the task would never get its CronJob.
	if s.TimeZone != nil {
		if err := schedule.CheckZone(*s.TimeZone); err != nil {
			errs = append(errs, field.Invalid(spec.Child("timeZone"), *s.TimeZone, err.Error()))
		}
	}

	if s.Image == "" {
		errs = append(errs, field.Required(spec.Child("image"), "the container image to run"))
	} else if _, err := reference.ParseNormalizedNamed(s.Image); err != nil {
		errs = append(errs, field.Invalid(spec.Child("image"), s.Image, "not a valid image reference: "+err.Error()))
	}

	switch s.ConcurrencyPolicy {
	case "", platformv1.AllowConcurrent, platformv1.ForbidConcurrent, platformv1.ReplaceConcurrent:
	default:
		errs = append(errs, oneOf(spec.Child("concurrencyPolicy"), string(s.ConcurrencyPolicy),
			platformv1.AllowConcurrent, platformv1.ForbidConcurrent, platformv1.ReplaceConcurrent))
	}
	errs = append(errs, inRange(spec.Child("backoffLimit"), s.BackoffLimit, 0, 100)...)
	errs = append(errs, inRange(spec.Child("activeDeadlineSeconds"), s.ActiveDeadlineSeconds, 1, -1)...)
	errs = append(errs, inRange(spec.Child("startingDeadlineSeconds"), s.StartingDeadlineSeconds, 10, -1)...)
	errs = append(errs, inRange(spec.Child("successfulRunsHistoryLimit"), s.SuccessfulRunsHistoryLimit, 0, 1000)...)
	errs = append(errs, inRange(spec.Child("failedRunsHistoryLimit"), s.FailedRunsHistoryLimit, 0, 1000)...)
	errs = append(errs, failureRules(spec, s)...)
	errs = append(errs, missedRunsRules(spec, s)...)
	errs = append(errs, bounds(spec, s)...)
	errs = append(errs, podTemplate(spec.Child("template"), s.Template, platformv1.TaskContainerName, taskPodLabels,
		corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure)...)
	errs = append(errs, v1alpha1Form(st)...)
	return errs
}

// failureRules checks suspendAfterFailures and staleAfterSeconds (zero is
// unset). The failures counted are the failed TaskRuns kept, so more than
// failedRunsHistoryLimit could never be reached.
func failureRules(spec *field.Path, s *platformv1.ScheduleTaskSpec) field.ErrorList {
	var errs field.ErrorList
	if n := s.SuspendAfterFailures; n != 0 {
		keep := platformv1.DefaultRunsHistoryLimit
		if s.FailedRunsHistoryLimit != nil {
			keep = *s.FailedRunsHistoryLimit
		}
		errs = append(errs, inRange(spec.Child("suspendAfterFailures"), &n, 1, 1000)...)
		if len(errs) == 0 && n > keep {
			errs = append(errs, field.Invalid(spec.Child("suspendAfterFailures"), n, fmt.Sprintf(
				"must be at most failedRunsHistoryLimit (%d): the failed runs counted are the TaskRuns kept", keep)))
		}
	}
	if n := s.StaleAfterSeconds; n != 0 {
		errs = append(errs, inRange(spec.Child("staleAfterSeconds"), &n, 60, -1)...)
	}
	return errs
}

// missedRunsRules checks missedRuns and maxMissedRuns (zero is unset): the
// bound applies to RunAll only, since the other policies start one missed
// run at most.
func missedRunsRules(spec *field.Path, s *platformv1.ScheduleTaskSpec) field.ErrorList {
	var errs field.ErrorList
	switch s.MissedRuns {
	case "", platformv1.MissedRunsSkip, platformv1.MissedRunsRunLatest, platformv1.MissedRunsRunAll:
	default:
		errs = append(errs, field.NotSupported(spec.Child("missedRuns"), s.MissedRuns,
			[]platformv1.MissedRunsPolicy{platformv1.MissedRunsSkip, platformv1.MissedRunsRunLatest, platformv1.MissedRunsRunAll}))
	}
	if n := s.MaxMissedRuns; n != 0 {
		errs = append(errs, inRange(spec.Child("maxMissedRuns"), &n, 1, platformv1.MaxMaxMissedRuns)...)
		if s.MissedRuns != platformv1.MissedRunsRunAll {
			errs = append(errs, field.Invalid(spec.Child("maxMissedRuns"), n,
				"applies to missedRuns RunAll only: the other policies start one missed run at most"))
		}
	}
	return errs
}

// inRange checks an optional number against [lo, hi]; hi < 0 means no upper bound.
func inRange[T int32 | int64](path *field.Path, v *T, lo, hi int64) field.ErrorList {
	if v == nil {
		return nil
	}
	n := int64(*v)
	switch {
	case n < lo:
		return field.ErrorList{field.Invalid(path, n, fmt.Sprintf("must be at least %d", lo))}
	case hi >= 0 && n > hi:
		return field.ErrorList{field.Invalid(path, n, fmt.Sprintf("must be at most %d", hi))}
	}
	return nil
}

// cronHint turns the parser's error into advice.
func cronHint(err error) string {
	return "not a cron expression of the CronJob schedule language (five fields: minute hour day-of-month month day-of-week, " +
		"where H, H(a-b), H/n or H(a-b)/n spreads tasks by name; or @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly): " + strings.TrimPrefix(err.Error(), "invalid cron expression ")
}

// Format renders each problem as `<field>: <what is wrong> (<the value>)`,
// the form the webhook and the CLI print.
func Format(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		line := e.Field + ": " + e.Detail
		if e.Type == field.ErrorTypeRequired {
			line = e.Field + ": is required: " + e.Detail
		} else if e.BadValue != nil && e.BadValue != "" {
			line += fmt.Sprintf(" (%v)", quoteIfString(e.BadValue))
		}
		out = append(out, line)
	}
	return out
}

func quoteIfString(v any) any {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return v
}

// BackfillTime checks a backfill run's scheduledTime against its task: a
// fire time of the task's schedule (its H resolved, in its zone) and not
// after now. A run for a time the schedule never asked for would be a
// manual run under another name.
func BackfillTime(run *platformv1.TaskRunSpec, task *platformv1.ScheduleTask, now time.Time) field.ErrorList {
	path := field.NewPath("spec", "scheduledTime")
	if run.ScheduledTime == nil {
		return field.ErrorList{field.Required(path, "a Backfill run needs the fire time it stands for")}
	}
	t := run.ScheduledTime.Time
	value := t.UTC().Format(time.RFC3339)
	if t.After(now) {
		return field.ErrorList{field.Invalid(path, value, "must not be in the future: a backfill run stands for a past fire time")}
	}
	effective, err := schedule.Effective(task.Spec.Schedule, task.Namespace, task.Name)
	var s *schedule.Schedule
	if err == nil {
		s, err = schedule.Parse(effective, ptr.Deref(task.Spec.TimeZone, ""))
	}
	if err != nil {
		return field.ErrorList{field.Invalid(path, value, "the task's schedule cannot be read: "+err.Error())}
	}
	if !s.Next(t.Add(-time.Second)).Equal(t) {
		return field.ErrorList{field.Invalid(path, value, fmt.Sprintf(
			"is not a fire time of the task's schedule %q; `kubectl stask backfill` lists them", effective))}
	}
	return nil
}
