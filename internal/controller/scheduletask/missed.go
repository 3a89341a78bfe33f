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
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/schedule"
	"github.com/example/platform-operator/internal/tracing"
)

// EventMissedRuns names the fire times the CronJob missed.
const EventMissedRuns = "MissedRuns"

// maxMissedScan bounds the fire times one pass walks through between two
// runs: a year of a once-a-minute schedule is ten times less. Past it the
// count stops there (and says so), as the CronJob controller gives up
// after a hundred.
const maxMissedScan = 50_000

// missedObservation is what a pass makes of the fire times since the last
// one accounted for; the status takes it as it is.
type missedObservation struct {
	// total and last are status.missedRuns and status.lastMissedTime after
	// this pass; checked is status.missedRunsCheckedTime.
	total   int64
	last    *metav1.Time
	checked *metav1.Time
}

// observeMissedRuns accounts for the fire times between the last one the
// status accounts for and the newest the CronJob started a run at. A fire
// time in between with no run (none recorded, no Job of the CronJob's name
// for it) was missed, unless a run was active then and concurrencyPolicy
// is Forbid (the CronJob skips it on purpose). Fire times passed while the
// task was suspended, or before its spec last changed, are not missed:
// when it resumes, or its spec changes, the count starts again from then.
//
// Counting at the next run the CronJob starts, rather than as fire times
// pass, leaves the latest fire time to the CronJob controller, which starts
// it late when it comes back (RunLatest and RunAll) or not at all (Skip's
// deadline): the operator never races it for the same Job.
func observeMissedRuns(task *platformv1.ScheduleTask, obs *observation, now time.Time) (missed []time.Time, more bool) {
	st := &task.Status
	m := &missedObservation{total: st.MissedRuns, last: st.LastMissedTime, checked: st.MissedRunsCheckedTime}
	obs.missed = m
	effective, err := schedule.Effective(task.Spec.Schedule, task.Namespace, task.Name)
	if err != nil {
		return nil, false
	}
	suspended := ptr.Deref(task.Spec.Suspend, false) || obs.suspendedAfterFailures
	// The minute, not the instant: passes that repeat (a CronJob that keeps
	// failing to apply) then write the same value, not a new one each.
	restart := &metav1.Time{Time: now.Truncate(time.Minute)}
	switch {
	case m.checked == nil:
		m.checked = restart
		return nil, false
	case suspended:
		return nil, false
	case task.Suspended(), effective != st.EffectiveSchedule, task.Generation != st.ObservedGeneration:
		if restart.After(m.checked.Time) {
			m.checked = restart
		}
		return nil, false
	}
	latest := newestScheduled(obs)
	if latest == nil || !latest.After(m.checked.Time) {
		return nil, false
	}
	sched, err := schedule.Parse(effective, ptr.Deref(task.Spec.TimeZone, ""))
	if err != nil {
		return nil, false
	}
	ran := firesWithRuns(task, obs.runs)
	forbid := concurrencyPolicy(&task.Spec) == platformv1.ForbidConcurrent
	scanned := 0
	for t := sched.Next(m.checked.Time); !t.IsZero() && t.Before(latest.Time); t = sched.Next(t) {
		if scanned++; scanned > maxMissedScan {
			more = true
			break
		}
		if ran[t.Unix()] || forbid && activeAt(obs.runs, t) {
			continue
		}
		missed = append(missed, t)
	}
	m.checked = latest
	if len(missed) > 0 {
		m.total += int64(len(missed))
		m.last = &metav1.Time{Time: missed[len(missed)-1]}
	}
	return missed, more
}

// newestScheduled is the newest fire time the CronJob started a run at: its
// lastScheduleTime, or the scheduled time of a run recorded from one of its
// Jobs in this very pass, before the CronJob's status says so (its status
// follows the Job). Taking both, the pass that records a run also accounts
// for the fire times before it, in the same status write.
func newestScheduled(obs *observation) *metav1.Time {
	var latest *metav1.Time
	if obs.cronJob != nil {
		latest = obs.cronJob.Status.LastScheduleTime
	}
	if obs.runs == nil {
		return latest
	}
	for _, tr := range obs.runs.runs {
		if t := tr.Spec.ScheduledTime; tr.Spec.Trigger == platformv1.TriggerScheduled && t != nil && (latest == nil || t.After(latest.Time)) {
			latest = t
		}
	}
	return latest
}

// firesWithRuns are the fire times (seconds since the epoch) that have a
// run: a TaskRun standing for it, or a Job of the CronJob's name for it.
func firesWithRuns(task *platformv1.ScheduleTask, rs *runSet) map[int64]bool {
	ran := map[int64]bool{}
	if rs == nil {
		return ran
	}
	for _, tr := range rs.runs {
		if tr.Spec.ScheduledTime != nil {
			ran[tr.Spec.ScheduledTime.Unix()] = true
		}
	}
	prefix := task.Name + "-"
	for _, j := range rs.jobs {
		if t := scheduledTime(j); t != nil {
			ran[t.Unix()] = true
		} else if m, err := strconv.ParseInt(strings.TrimPrefix(j.Name, prefix), 10, 64); err == nil && strings.HasPrefix(j.Name, prefix) {
			ran[m*60] = true
		}
	}
	return ran
}

// cronJobStatusLag is how long after a run ends the CronJob controller may
// still count it as active (its status follows the Job's), so a Forbid
// task's fire time just after a run ended may still have been skipped on
// purpose.
const cronJobStatusLag = 30 * time.Second

// activeAt reports whether a run of the task was in progress at t.
func activeAt(rs *runSet, t time.Time) bool {
	if rs == nil {
		return false
	}
	for _, tr := range rs.runs {
		start := runStart(tr)
		if start == nil || start.After(t) {
			continue
		}
		if !tr.IsFinished() || tr.Status.CompletionTime == nil || !tr.Status.CompletionTime.Add(cronJobStatusLag).Before(t) {
			return true
		}
	}
	return false
}

// reconcileMissedRuns counts the fire times the CronJob missed, names them
// in a Warning event and, for a RunAll task, records a CatchUp run for each
// of the newest maxMissedRuns of them; reconcileRuns starts those runs as it
// starts backfill runs, oldest first and in turn when concurrency forbids
// overlap.
func (r *Reconciler) reconcileMissedRuns(ctx context.Context, task *platformv1.ScheduleTask, obs *observation) error {
	missed, more := observeMissedRuns(task, obs, r.Clock.Now())
	if len(missed) == 0 {
		return nil
	}
	policy := task.Spec.MissedRuns
	if policy == "" {
		policy = platformv1.MissedRunsRunLatest
	}
	var catchUp []time.Time
	if policy == platformv1.MissedRunsRunAll {
		limit := int(task.Spec.MaxMissedRuns)
		if limit <= 0 {
			limit = platformv1.DefaultMaxMissedRuns
		}
		catchUp = missed[max(len(missed)-limit, 0):]
	}
	ctrl.LoggerFrom(ctx).Info("The CronJob missed fire times", "missed", len(missed), "policy", policy, "catchUp", len(catchUp))
	r.Recorder.Eventf(task, nil, corev1.EventTypeWarning, EventMissedRuns, "Schedule", "%s",
		// After a gap, the status accounts up to the run that ended it.
		missedMessage(missed, more, obs.missed.checked.Time, len(catchUp), policy))
	for _, t := range catchUp {
		if err := r.recordCatchUp(ctx, task, obs.runs, t); err != nil {
			return err
		}
	}
	return nil
}

// missedMessage says which fire times were missed, the run the CronJob
// started after them (at latest), and what the policy does with them; it
// names at most maxNamedTimes of them.
func missedMessage(missed []time.Time, more bool, latest time.Time, catchUp int, policy platformv1.MissedRunsPolicy) string {
	const maxNamedTimes = 5
	names := make([]string, 0, maxNamedTimes)
	for _, t := range missed[:min(len(missed), maxNamedTimes)] {
		names = append(names, t.UTC().Format(time.RFC3339))
	}
	list := strings.Join(names, ", ")
	if len(missed) > maxNamedTimes {
		list += fmt.Sprintf(" and %d more", len(missed)-maxNamedTimes)
	}
	count := strconv.Itoa(len(missed))
	if more {
		count = "over " + count
	}
	msg := fmt.Sprintf("No run started at %s fire times (%s): the CronJob controller was not running then; "+
		"the next run it started is the one of %s. ", count, list, latest.UTC().Format(time.RFC3339))
	switch policy {
	case platformv1.MissedRunsRunAll:
		return msg + fmt.Sprintf("Starting %d of them as CatchUp runs, oldest first (missedRuns RunAll)", catchUp)
	default:
		return msg + fmt.Sprintf("They are skipped (missedRuns %s)", policy)
	}
}

// catchUpName is the name of the Job, and the TaskRun, of a catch-up run
// for fire time t: the CronJob controller's name for the Job it would have
// started then (<cronjob>-<minutes since the epoch>), so that a Job it did
// start after all is found instead of a second one made.
func catchUpName(task *platformv1.ScheduleTask, t time.Time) string {
	return fmt.Sprintf("%s-%d", task.Name, t.Unix()/60)
}

// recordCatchUp creates the CatchUp TaskRun of a missed fire time, owned by
// the task like a recorded run.
func (r *Reconciler) recordCatchUp(ctx context.Context, task *platformv1.ScheduleTask, rs *runSet, t time.Time) error {
	name := catchUpName(task, t)
	for _, j := range rs.jobs {
		if j.Name == name {
			return nil // the CronJob started it after all
		}
	}
	tr := &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   task.Namespace,
			Name:        name,
			Labels:      map[string]string{platformv1.ScheduleTaskLabel: task.Name},
			Annotations: map[string]string{platformv1.RunNumberAnnotation: strconv.FormatInt(rs.nextNumber, 10)},
		},
		Spec: platformv1.TaskRunSpec{
			ScheduleTaskName: task.Name,
			Trigger:          platformv1.TriggerCatchUp,
			ScheduledTime:    &metav1.Time{Time: t},
		},
	}
	tracing.Annotate(ctx, tr.Annotations)
	if err := controllerutil.SetControllerReference(task, tr, r.Scheme()); err != nil {
		return err
	}
	if err := r.Create(ctx, tr); apierrors.IsAlreadyExists(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("create catch-up TaskRun %s: %w", name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Recorded catch-up run", "taskRun", klog.KObj(tr), "scheduledTime", t)
	rs.runs = append(rs.runs, tr)
	rs.nextNumber = min(rs.nextNumber, platformv1.MaxRunNumber) + 1
	return nil
}

// runJobName is the name of the Job the operator starts for a run: a
// catch-up run's is the CronJob's name for its fire time, any other's
// manualJobName.
func runJobName(task *platformv1.ScheduleTask, tr *platformv1.TaskRun) string {
	if tr.Spec.Trigger == platformv1.TriggerCatchUp && tr.Spec.ScheduledTime != nil {
		return catchUpName(task, tr.Spec.ScheduledTime.Time)
	}
	return manualJobName(tr)
}

// waitsItsTurn reports whether a run the operator starts waits for an
// active run rather than being refused or replacing it: backfill and
// catch-up runs stand for past fire times, which are all to run.
func waitsItsTurn(tr *platformv1.TaskRun) bool {
	return tr.Spec.Trigger == platformv1.TriggerBackfill || tr.Spec.Trigger == platformv1.TriggerCatchUp
}
