// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/objstatus"
	"github.com/example/platform-operator/internal/schedule"
)

// buildStatus rebuilds a task's status from what the pass observed. The run
// count is the one value that cannot be observed once retention deleted old
// runs, so it is carried as the highest of the previous count and the run
// numbers on the TaskRuns.
func buildStatus(task *platformv1.ScheduleTask, p *pass, now time.Time) platformv1.ScheduleTaskStatus {
	st := platformv1.ScheduleTaskStatus{
		ObservedGeneration:  task.Status.ObservedGeneration,
		Conditions:          slices.Clone(task.Status.Conditions),
		TriggerCount:        task.Status.TriggerCount,
		ConsecutiveFailures: p.failures,
		// Missed fire times, like the run count, cannot be observed again
		// once passed: they are carried, and added to by the pass.
		MissedRuns:            task.Status.MissedRuns,
		LastMissedTime:        task.Status.LastMissedTime,
		MissedRunsCheckedTime: task.Status.MissedRunsCheckedTime,
		HandledRequests:       p.handled,
	}
	// The fire times are accounted for once the CronJob stands: without
	// it the pass leaves the runs alone.
	if m := p.missed; m != nil && p.cronJob != nil {
		st.MissedRuns, st.LastMissedTime, st.MissedRunsCheckedTime = m.total, m.last, m.checked
	}
	if cj := p.cronJob; cj != nil {
		st.LastScheduleTime = cj.Status.LastScheduleTime
		st.LastSuccessfulTime = cj.Status.LastSuccessfulTime
	}

	runs := p.runs
	var newest, newestFinished *platformv1.TaskRun
	for _, tr := range runs {
		if n := tr.RunNumber(); n > st.TriggerCount {
			st.TriggerCount = n
		}
		if newer(tr, newest) {
			newest = tr
		}
		if tr.IsFinished() && newer(tr, newestFinished) {
			newestFinished = tr
		}
		if t := runStart(tr); t != nil && (st.LastScheduleTime == nil || st.LastScheduleTime.Before(t)) {
			st.LastScheduleTime = t
		}
		if tr.Status.Phase == platformv1.TaskRunSucceeded && tr.Status.CompletionTime != nil &&
			(st.LastSuccessfulTime == nil || st.LastSuccessfulTime.Before(tr.Status.CompletionTime)) {
			st.LastSuccessfulTime = tr.Status.CompletionTime
		}
		if !tr.IsFinished() && tr.Spec.JobRef != nil {
			st.ActiveRuns = append(st.ActiveRuns, tr.Name)
		}
	}
	slices.Sort(st.ActiveRuns)
	st.Active = len(st.ActiveRuns) > 0
	// The schema bounds the list (it is cached with every task); a longer
	// one would make every status write fail.
	st.ActiveRuns = st.ActiveRuns[:min(len(st.ActiveRuns), platformv1.MaxActiveRuns)]
	if newest != nil {
		st.LastTaskRunName = newest.Name
	}
	if newestFinished != nil {
		st.LastResult = platformv1.RunResult(newestFinished.Status.Phase)
	}

	if effective, err := schedule.Effective(task.Spec.Schedule, task.Namespace, task.Name); err == nil {
		st.EffectiveSchedule = effective
		if s, err := schedule.Parse(effective, ptr.Deref(task.Spec.TimeZone, "")); err == nil &&
			!ptr.Deref(task.Spec.Suspend, false) && !p.suspendedAfterFailures {
			if next := s.Next(now); !next.IsZero() {
				st.NextScheduleTime = &metav1.Time{Time: next}
			}
		}
	}

	setReadyCondition(&st.Conditions, task, p, now)
	key := client.ObjectKeyFromObject(task)
	children := []apply.ContestedChild{
		{Key: apply.RepairKey{Kind: cronJobKind, NamespacedName: key}, Contest: p.contest},
		{Key: apply.RepairKey{Kind: jobTemplateKind, NamespacedName: key}, Contest: p.templateContest},
	}
	if p.templateHeld && !slices.ContainsFunc(children, func(c apply.ContestedChild) bool { return c.Contested }) {
		// Suspended by a hold, before any contest: the condition says why.
		objstatus.SetCondition(&st.Conditions, metav1.Condition{Type: platformv1.ConditionChildContested,
			Status: metav1.ConditionTrue, Reason: platformv1.ReasonJobTemplateHeld,
			Message: templateHeldMessage(task.Name, p.templateContest.Manager)}, task.Generation, now)
	} else {
		p.becameContested = apply.SetChildContestedCondition(&st.Conditions, children, task.Generation, now)
	}
	setRunsAdoptedCondition(&st.Conditions, task, p.unadopted, now)
	p.wakeAt(setFreshCondition(&st.Conditions, task, st.LastSuccessfulTime, now))
	return st
}

// setReadyCondition sets Ready from the CronJob step's outcome and the
// failure streak.
func setReadyCondition(conds *[]metav1.Condition, task *platformv1.ScheduleTask, p *pass, now time.Time) {
	c := metav1.Condition{Type: platformv1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: platformv1.ReasonCronJobReady, Message: "CronJob is in sync with the task"}
	switch {
	case p.cronJobErr != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, platformv1.ReasonCronJobError, p.cronJobErr.Error()
	case p.suspendedAfterFailures:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, platformv1.ReasonSuspendedAfterFailures, suspendedMessage(p)
	case ptr.Deref(task.Spec.Suspend, false):
		c.Reason, c.Message = platformv1.ReasonSuspended, "Task is suspended: no new runs are scheduled"
	}
	objstatus.SetCondition(conds, c, task.Generation, now)
}

// writeStatus writes the rebuilt status if it differs from the stored one;
// the pass's events go out after it (see emit).
// ObservedGeneration moves only when the whole pass succeeded. Passes that
// would start from a version this manager replaced itself are skipped (see
// expectations.OwnWrites), so conflicts come only from other writers.
func (r *Reconciler) writeStatus(ctx context.Context, p *pass, ok bool) error {
	task, now := p.task, r.Clock.Now()
	st := nextStatus(p, now, ok)
	_, err := objstatus.Write(ctx, r.Client, task, &task.Status, st)
	return err
}

// nextStatus is the status rebuilt from the pass at now, and queues the
// transitions it records: missed fire times, staleness, a contested
// CronJob. ok: every step of the pass was done.
func nextStatus(p *pass, now time.Time, ok bool) platformv1.ScheduleTaskStatus {
	task := p.task
	st := buildStatus(task, p, now)
	if ok {
		st.ObservedGeneration = task.Generation
	}
	p.wakeAt(untilNextScheduleMoves(&st, task, p.cronJob != nil, now))
	if p.missedEvent != nil && p.cronJob != nil {
		p.events = append(p.events, *p.missedEvent)
	}
	eventOnFreshChange(task, p, st.Conditions)
	if p.becameContested {
		c := meta.FindStatusCondition(st.Conditions, platformv1.ConditionChildContested)
		p.transition(p.cronJob, corev1.EventTypeWarning, EventChildContested, "Repair", "%s", c.Message)
	}
	return st
}

// untilNextScheduleMoves is how long until a pass should move
// nextScheduleTime past the next fire time, 0 when there is none, so the
// field does not lag behind the clock when nothing else wakes the task.
//
// When the CronJob will start a Job at that time, the Job (and the CronJob's
// status) wakes the task anyway, and that pass writes the run and the new
// nextScheduleTime together. Waking the task at the fire time as well would
// add a pass and a status write for every task of the minute, at the very
// moment their Jobs arrive. So the timer is then only a safety net, set
// cronJobFireGrace past the fire time, for a Job that is late or never comes
// (the CronJob controller down); until then the field still names the fire
// time whose run has not started. When no Job will come (no CronJob, or a
// Forbid task whose run is still active), the task is woken just after the
// fire time.
func untilNextScheduleMoves(st *platformv1.ScheduleTaskStatus, task *platformv1.ScheduleTask, hasCronJob bool, now time.Time) time.Duration {
	if st.NextScheduleTime == nil {
		return 0
	}
	wait := max(st.NextScheduleTime.Sub(now), 0)
	forbiddenNow := concurrencyPolicy(&task.Spec) == platformv1.ForbidConcurrent && st.Active
	if hasCronJob && !forbiddenNow {
		return wait + cronJobFireGrace
	}
	return wait + nextScheduleSlack
}

// nextScheduleSlack is how long after a fire time the task is woken to move
// nextScheduleTime on when no Job will: enough for a timer that fires a
// little early to land past the fire time.
const nextScheduleSlack = time.Second

// cronJobFireGrace is how long after a fire time the task is woken when its
// Job should have woken it: longer than the CronJob controller's delay under
// load (seconds; tens of seconds with hundreds of CronJobs due in the same
// minute on a busy control plane).
const cronJobFireGrace = 30 * time.Second

// runStart is when a run started: its Job's scheduled time, else its start.
func runStart(tr *platformv1.TaskRun) *metav1.Time {
	if tr.Spec.ScheduledTime != nil {
		return tr.Spec.ScheduledTime
	}
	if tr.Status.StartTime != nil {
		return tr.Status.StartTime
	}
	return nil
}

// newer reports whether a is newer than b (nil b counts as oldest): by the
// time the run was due (its scheduled time, else its creation), then run
// number, then name, so the order is total and does not depend on the order
// in which the operator happened to record runs.
func newer(a, b *platformv1.TaskRun) bool {
	if b == nil {
		return true
	}
	if ta, tb := a.DueTime(), b.DueTime(); !ta.Equal(tb) {
		return ta.After(tb)
	}
	if na, nb := a.RunNumber(), b.RunNumber(); na != nb {
		return na > nb
	}
	return a.Name > b.Name
}

// templateHeldMessage says why the task's CronJob is suspended while its
// job template's repair waits. No count or time in it: each would be a
// status write.
func templateHeldMessage(cronJob, manager string) string {
	by := "another field manager"
	if manager != "" {
		by = fmt.Sprintf("field manager %q", manager)
	}
	return fmt.Sprintf("The job template of CronJob %s was changed by %s and put back; the CronJob stays suspended "+
		"while the next repair is held back (up to %s), so no change of the template runs. Manual runs start as ever",
		cronJob, by, apply.RepairBackoffMax)
}
