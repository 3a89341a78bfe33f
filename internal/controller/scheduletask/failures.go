// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/objstatus"
)

// Reasons of the events about the failure streak.
const (
	EventSuspendedAfterFailures = platformv1.ReasonSuspendedAfterFailures
	EventResumed                = "Resumed"
)

// notTheRunsFailure are the reasons of failed runs that say nothing about
// the task's own code: the run was stopped or never started. They neither
// lengthen nor break a failure streak.
var notTheRunsFailure = map[string]bool{
	platformv1.ReasonCancelled:            true,
	platformv1.ReasonTaskNotFound:         true,
	platformv1.ReasonTaskCannotRun:        true,
	platformv1.ReasonConcurrencyForbidden: true,
	platformv1.ReasonJobNameTaken:         true,
}

// failureStreak is how many runs failed in a row, counted over the runs
// that finished after the task's last success and after its last resume.
// The last success is the newest of the one the status already holds (a
// succeeded run retention has since deleted still counts) and those of the
// runs at hand; a task that keeps no succeeded runs thus never mistakes
// failures on both sides of a success for a streak. newest is the newest
// failed run counted.
func failureStreak(task *platformv1.ScheduleTask, resumedAt *metav1.Time, runs []*platformv1.TaskRun) (n int32, newest *platformv1.TaskRun) {
	var since time.Time
	if t := task.Status.LastSuccessfulTime; t != nil {
		since = t.Time
	}
	if resumedAt != nil && resumedAt.After(since) {
		since = resumedAt.Time
	}
	for _, tr := range runs {
		if tr.Status.Phase == platformv1.TaskRunSucceeded && tr.Status.CompletionTime != nil && tr.Status.CompletionTime.After(since) {
			since = tr.Status.CompletionTime.Time
		}
	}
	for _, tr := range runs {
		if tr.Status.Phase != platformv1.TaskRunFailed || notTheRunsFailure[tr.Status.Reason] ||
			tr.Status.CompletionTime == nil || !tr.Status.CompletionTime.After(since) {
			continue
		}
		n++
		if newest == nil || tr.Status.CompletionTime.After(newest.Status.CompletionTime.Time) {
			newest = tr
		}
	}
	return n, newest
}

// observeFailures counts the task's failure streak over the observed
// runs, before the CronJob is planned, since the streak decides whether
// the CronJob is suspended.
func (p *pass) observeFailures() {
	p.failures, p.newestFailure = failureStreak(p.task, p.handled.ResumedAt, p.obs.runs)
	limit := p.task.Spec.SuspendAfterFailures
	p.suspendedAfterFailures = limit > 0 && p.failures >= limit
	if p.suspendedAfterFailures && !p.task.SuspendedAfterFailures() {
		p.notes = append(p.notes, note{"Suspending the schedule after repeated failures", []any{"failures", p.failures}})
		p.transition(p.newestFailure, corev1.EventTypeWarning, EventSuspendedAfterFailures, "Suspend",
			"%s", suspendedMessage(p))
	}
}

// suspendedMessage says why the task is suspended and how to resume it.
func suspendedMessage(p *pass) string {
	msg := fmt.Sprintf("%d runs failed in a row (suspendAfterFailures is %d)", p.failures, p.task.Spec.SuspendAfterFailures)
	if p.newestFailure != nil {
		msg += ", the newest " + p.newestFailure.Name
	}
	return msg + fmt.Sprintf("; the schedule is suspended until `kubectl stask resume %s` or a run succeeds", p.task.Name)
}

// resume acts on a new value of the resume annotation: it records the
// value as handled and the time, from which failures count again, in the
// status the pass writes (status.handledRequests).
func (p *pass) resume() {
	value := p.task.Annotations[platformv1.ResumeAnnotation]
	if isHandled(value, p.handled.Resume) {
		return
	}
	now := metav1.NewTime(p.now.UTC().Truncate(time.Second))
	p.handled.Resume, p.handled.ResumedAt = handledValue(value), &now
	p.notes = append(p.notes, note{"Resumed: the failure streak starts again from zero", nil})
	p.transition(nil, corev1.EventTypeNormal, EventResumed, "Resume",
		"Resumed: failures before %s no longer count", now.Format(time.RFC3339))
}

// setFreshCondition sets Fresh on a task with staleAfterSeconds, and
// removes it from one without, and says when the condition would turn.
// Until a first success the task's creation is the reference.
func setFreshCondition(conds *[]metav1.Condition, task *platformv1.ScheduleTask, lastSuccess *metav1.Time, now time.Time) (staleIn time.Duration) {
	if task.Spec.StaleAfterSeconds <= 0 {
		meta.RemoveStatusCondition(conds, platformv1.ConditionFresh)
		return 0
	}
	window := time.Duration(task.Spec.StaleAfterSeconds) * time.Second
	c := metav1.Condition{Type: platformv1.ConditionFresh}
	ref, what := task.CreationTimestamp.Time, "No run has succeeded since the task was created at "
	if lastSuccess != nil {
		ref, what = lastSuccess.Time, "The last run succeeded at "
	}
	what += ref.UTC().Format(time.RFC3339)
	staleAt := ref.Add(window)
	if now.Before(staleAt) {
		c.Status, c.Reason = metav1.ConditionTrue, platformv1.ReasonSucceededRecently
		c.Message = what + fmt.Sprintf(", within staleAfterSeconds (%d)", task.Spec.StaleAfterSeconds)
		staleIn = staleAt.Sub(now)
	} else {
		c.Status, c.Reason = metav1.ConditionFalse, platformv1.ReasonStale
		c.Message = what + fmt.Sprintf(": longer ago than staleAfterSeconds (%d)", task.Spec.StaleAfterSeconds)
	}
	objstatus.SetCondition(conds, c, task.Generation, now)
	return staleIn
}

// Reasons of the events about freshness.
const (
	EventStale = platformv1.ReasonStale
	EventFresh = "Fresh"
)

// eventOnFreshChange queues an event when the Fresh condition turns: a
// Warning when the task goes stale, a Normal one when a success ends that.
func eventOnFreshChange(task *platformv1.ScheduleTask, p *pass, conds []metav1.Condition) {
	now := meta.FindStatusCondition(conds, platformv1.ConditionFresh)
	if now == nil {
		return
	}
	before := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionFresh)
	switch {
	case now.Status == metav1.ConditionFalse && (before == nil || before.Status != metav1.ConditionFalse):
		p.transition(nil, corev1.EventTypeWarning, EventStale, "Check", "%s", now.Message)
	case now.Status == metav1.ConditionTrue && before != nil && before.Status == metav1.ConditionFalse:
		p.transition(nil, corev1.EventTypeNormal, EventFresh, "Check", "%s", now.Message)
	}
}
