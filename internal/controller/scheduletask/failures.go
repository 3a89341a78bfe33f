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

package scheduletask

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/reconcileutil"
)

// Annotations the controller keeps on a task for its failure streak.
const (
	// resumeHandledAnnotation remembers the resume value already acted on,
	// so each new value resumes the task once.
	resumeHandledAnnotation = "platform.example.com/resume-handled"
	// resumedAtAnnotation is when the task was last resumed (RFC 3339):
	// failures that ended before it no longer count.
	resumedAtAnnotation = "platform.example.com/resumed-at"
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
func failureStreak(task *platformv1.ScheduleTask, runs []*platformv1.TaskRun) (n int32, newest *platformv1.TaskRun) {
	var since time.Time
	if t := task.Status.LastSuccessfulTime; t != nil {
		since = t.Time
	}
	if t, ok := resumedAt(task); ok && t.After(since) {
		since = t
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

// resumedAt is when the task was last resumed, if it ever was.
func resumedAt(task *platformv1.ScheduleTask) (time.Time, bool) {
	v := task.Annotations[resumedAtAnnotation]
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// observeFailures reads the task's runs and its failure streak before the
// CronJob is applied, since the streak decides whether the CronJob is
// suspended. A new value of the resume annotation is acted on first.
func (r *Reconciler) observeFailures(ctx context.Context, task *platformv1.ScheduleTask, obs *observation) error {
	if err := r.handleResume(ctx, task); err != nil {
		return err
	}
	rs, err := r.listRuns(ctx, task)
	if err != nil {
		return err
	}
	obs.runs = rs
	obs.failures, obs.newestFailure = failureStreak(task, rs.runs)
	limit := task.Spec.SuspendAfterFailures
	obs.suspendedAfterFailures = limit > 0 && obs.failures >= limit
	if obs.suspendedAfterFailures && !task.SuspendedAfterFailures() {
		ctrl.LoggerFrom(ctx).Info("Suspending the schedule after repeated failures", "failures", obs.failures)
		r.Recorder.Eventf(task, obs.newestFailure, corev1.EventTypeWarning, EventSuspendedAfterFailures, "Suspend",
			"%s", suspendedMessage(task, obs))
	}
	return nil
}

// suspendedMessage says why the task is suspended and how to resume it.
func suspendedMessage(task *platformv1.ScheduleTask, obs *observation) string {
	msg := fmt.Sprintf("%d runs failed in a row (suspendAfterFailures is %d)", obs.failures, task.Spec.SuspendAfterFailures)
	if obs.newestFailure != nil {
		msg += ", the newest " + obs.newestFailure.Name
	}
	return msg + fmt.Sprintf("; the schedule is suspended until `kubectl stask resume %s` or a run succeeds", task.Name)
}

// handleResume acts on a new value of the resume annotation: it records the
// value as handled and the time, from which failures count again, with one
// patch conditioned on the version read (see reconcileutil.OwnWrites).
func (r *Reconciler) handleResume(ctx context.Context, task *platformv1.ScheduleTask) error {
	value := task.Annotations[platformv1.ResumeAnnotation]
	if value == "" || value == task.Annotations[resumeHandledAnnotation] {
		return nil
	}
	patch := client.MergeFromWithOptions(task.DeepCopy(), client.MergeFromWithOptimisticLock{})
	task.Annotations[resumeHandledAnnotation] = value
	task.Annotations[resumedAtAnnotation] = r.Clock.Now().UTC().Format(time.RFC3339)
	done := r.writes.Writing(task)
	err := r.Patch(ctx, task, patch)
	done(err)
	if err != nil {
		return fmt.Errorf("mark %s handled: %w", platformv1.ResumeAnnotation, err)
	}
	ctrl.LoggerFrom(ctx).Info("Resumed: the failure streak starts again from zero")
	r.Recorder.Eventf(task, nil, corev1.EventTypeNormal, EventResumed, "Resume",
		"Resumed: failures before %s no longer count", task.Annotations[resumedAtAnnotation])
	return nil
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
	reconcileutil.SetCondition(conds, c, task.Generation, now)
	return staleIn
}

// Reasons of the events about freshness.
const (
	EventStale = platformv1.ReasonStale
	EventFresh = "Fresh"
)

// eventOnFreshChange sends an event when the Fresh condition turns: a
// Warning when the task goes stale, a Normal one when a success ends that.
func (r *Reconciler) eventOnFreshChange(task *platformv1.ScheduleTask, conds []metav1.Condition) {
	now := meta.FindStatusCondition(conds, platformv1.ConditionFresh)
	if now == nil {
		return
	}
	before := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionFresh)
	switch {
	case now.Status == metav1.ConditionFalse && (before == nil || before.Status != metav1.ConditionFalse):
		r.Recorder.Eventf(task, nil, corev1.EventTypeWarning, EventStale, "Check", "%s", now.Message)
	case now.Status == metav1.ConditionTrue && before != nil && before.Status == metav1.ConditionFalse:
		r.Recorder.Eventf(task, nil, corev1.EventTypeNormal, EventFresh, "Check", "%s", now.Message)
	}
}
