// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/schedule"
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
//
// runs are the task's runs as the pass's records leave them.
func observeMissedRuns(p *pass, runs []*platformv1.TaskRun) (missed []time.Time, more bool) {
	task, now := p.task, p.now
	st := &task.Status
	m := &missedObservation{total: st.MissedRuns, last: st.LastMissedTime, checked: st.MissedRunsCheckedTime}
	p.missed = m
	effective, err := schedule.Effective(task.Spec.Schedule, task.Namespace, task.Name)
	if err != nil {
		return nil, false
	}
	suspended := ptr.Deref(task.Spec.Suspend, false) || p.suspendedAfterFailures
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
	latest := newestScheduled(p.obs.cronJob, runs)
	if latest == nil || !latest.After(m.checked.Time) {
		return nil, false
	}
	sched, err := schedule.Parse(effective, ptr.Deref(task.Spec.TimeZone, ""))
	if err != nil {
		return nil, false
	}
	ran := firesWithRuns(task, runs, p.obs.jobs)
	forbid := concurrencyPolicy(&task.Spec) == platformv1.ForbidConcurrent
	scanned := 0
	for t := sched.Next(m.checked.Time); !t.IsZero() && t.Before(latest.Time); t = sched.Next(t) {
		if scanned++; scanned > maxMissedScan {
			more = true
			break
		}
		if ran[t.Unix()] || forbid && activeAt(runs, t) {
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
func newestScheduled(cj *batchv1.CronJob, runs []*platformv1.TaskRun) *metav1.Time {
	var latest *metav1.Time
	if cj != nil {
		latest = cj.Status.LastScheduleTime
	}
	for _, tr := range runs {
		if t := tr.Spec.ScheduledTime; tr.Spec.Trigger == platformv1.TriggerScheduled && t != nil && (latest == nil || t.After(latest.Time)) {
			latest = t
		}
	}
	return latest
}

// firesWithRuns are the fire times (seconds since the epoch) that have a
// run: a TaskRun standing for it, or a Job of the CronJob's name for it.
func firesWithRuns(task *platformv1.ScheduleTask, runs []*platformv1.TaskRun, jobs []*batchv1.Job) map[int64]bool {
	ran := map[int64]bool{}
	for _, tr := range runs {
		if tr.Spec.ScheduledTime != nil {
			ran[tr.Spec.ScheduledTime.Unix()] = true
		}
	}
	for _, j := range jobs {
		if t := scheduledTime(j); t != nil {
			ran[t.Unix()] = true
		} else if t, ok := fireTimeOfName(task.Name, j.Name); ok {
			ran[t.Unix()] = true
		}
	}
	return ran
}

// fireTimeOfName is the fire time that a Job name of the CronJob
// controller's form, <cronjob>-<minutes since the epoch>, stands for.
func fireTimeOfName(cronJob, job string) (time.Time, bool) {
	digits, ok := strings.CutPrefix(job, cronJob+"-")
	if !ok || digits == "" || len(digits) > 12 || strings.Trim(digits, "0123456789") != "" {
		return time.Time{}, false
	}
	minutes, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(minutes*60, 0).UTC(), true
}

// scheduledTime reads the time the CronJob controller (or the operator, for
// a catch-up run) scheduled a Job for.
func scheduledTime(job *batchv1.Job) *metav1.Time {
	v, ok := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]
	if !ok {
		return nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil
	}
	return &metav1.Time{Time: t}
}

// cronJobStatusLag is how long after a run ends the CronJob controller may
// still count it as active (its status follows the Job's), so a Forbid
// task's fire time just after a run ended may still have been skipped on
// purpose.
const cronJobStatusLag = 30 * time.Second

// activeAt reports whether a run of the task was in progress at t.
func activeAt(runs []*platformv1.TaskRun, t time.Time) bool {
	for _, tr := range runs {
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
