// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/tracing"
)

// pass is one reconcile of a live task: what it observed, what plan made
// of it (the CronJob to apply, the steps to take, the transitions to
// announce), and what act did. The status is rebuilt from it alone, never
// from the status an earlier pass wrote.
type pass struct {
	task   *platformv1.ScheduleTask
	obs    *observation
	now    time.Time
	signer *provenance.Signer

	// desired is the CronJob to apply, signed; rendered its pod template
	// as the operator renders it and signed the hash it signed.
	desired  *batchv1ac.CronJobApplyConfiguration
	rendered *corev1.PodTemplateSpec
	signed   string
	// jobTemplate is desired's job template as a typed value: the runs the
	// operator starts are made from it, never from the CronJob as stored,
	// which others may have changed since.
	jobTemplate *batchv1.JobTemplateSpec

	// failures is the task's failure streak (see failureStreak), and
	// newestFailure the newest failed run it counts.
	failures      int32
	newestFailure *platformv1.TaskRun
	// suspendedAfterFailures: the streak reached suspendAfterFailures, so
	// the CronJob is suspended.
	suspendedAfterFailures bool
	// templateChanged: the cached CronJob's job template is not the one
	// the operator signed (see planTemplateHold); putBackTemplate: it is
	// put back this pass; templateHeld: the CronJob is kept suspended while
	// its repair waits, and unheldSuspend is what spec.suspend would be
	// without the hold.
	templateChanged bool
	putBackTemplate bool
	templateHeld    bool
	unheldSuspend   bool
	// handled are the requests acted on; a run-now request counts once
	// its run is created (see done).
	handled platformv1.ScheduleTaskHandledRequests
	// unadopted are the manual runs naming the task that another object
	// controls, so the task cannot adopt (or start) them.
	unadopted []string
	// missed is what the pass made of missed fire times; missedEvent
	// announces the new ones. Both count only when the CronJob was
	// applied: without it the runs are left alone.
	missed      *missedObservation
	missedEvent *pendingEvent
	// unverified are the Jobs to report as failing the proof of origin.
	unverified []unverifiedJob
	// steps are the writes of the runs, in the order act takes them.
	steps []*step
	// notes are what the plan decided that the log tells.
	notes []note

	// What act did. cronJob is the task's CronJob as applied (nil when it
	// could not be), cronJobErr why it could not be or is wrong, contest
	// whether someone keeps changing it.
	cronJob    *batchv1.CronJob
	cronJobErr error
	contest    apply.Contest
	// templateContest is whether someone keeps changing the job template.
	templateContest apply.Contest
	// runs are the task's runs after the steps act took (see done).
	runs []*platformv1.TaskRun
	// becameContested: the status rebuilt from this pass turned
	// ChildContested True.
	becameContested bool
	// events are the pass's events, sent after its status write (see emit).
	events []pendingEvent
	// requeueAfter asks for the next pass at a time, when no watch will.
	requeueAfter time.Duration
}

// stepKind is what a step writes.
type stepKind int

const (
	// stepRecord creates the TaskRun of a Job the CronJob started.
	stepRecord stepKind = iota
	// stepLink points a manual run at the Job that carries it.
	stepLink
	// stepCatchUp creates the CatchUp run of a missed fire time.
	stepCatchUp
	// stepRunNow creates the run the run-now annotation asks for.
	stepRunNow
	// stepAdopt gives a user's manual run the task's label, owner and a
	// run number.
	stepAdopt
	// stepWait leaves a backfill or catch-up run waiting for the active
	// run; it writes nothing.
	stepWait
	// stepRefuse asks a manual run to end unstarted.
	stepRefuse
	// stepStart deletes the Jobs it replaces and creates a run's Job.
	stepStart
	// stepExpire deletes a run beyond the history limits, Job first.
	stepExpire
)

// step is one write of the runs.
type step struct {
	kind stepKind
	// run is the run the step is about, as it is once the step is done;
	// act replaces it with what the API server answered, or nil when the
	// step turned out to add no run.
	run *platformv1.TaskRun
	// job is the Job recorded, linked or started.
	job *batchv1.Job
	// replace are the active Jobs a start deletes first (Replace).
	replace []*batchv1.Job
	// fired is a recorded run's fire time, nil for a manual one.
	fired *metav1.Time
	// handled is the run-now value the step handles.
	handled string
	// waitsFor names the active Job a waiting or refused run waits for.
	waitsFor string
}

// unverifiedJob is a Job that claims the task and failed the proof.
type unverifiedJob struct {
	job     *batchv1.Job
	problem string
	// delete: the Job is unfinished and was made from the task's CronJob
	// while its job template held someone else's change (madeFromImplant).
	delete bool
}

// note is a decision of the plan, for the log.
type note struct {
	msg string
	kv  []any
}

// newPass starts the pass of task over obs at now; signer signs and
// checks the task's pod templates.
func newPass(task *platformv1.ScheduleTask, obs *observation, now time.Time, signer *provenance.Signer) *pass {
	return &pass{task: task, obs: obs, now: now, signer: signer,
		handled: handledRequests(task), runs: slices.Clone(obs.runs)}
}

// wakeAt asks for the next pass in d at the latest.
func (p *pass) wakeAt(d time.Duration) {
	if d > 0 && (p.requeueAfter == 0 || d < p.requeueAfter) {
		p.requeueAfter = d
	}
}

// plan decides the pass from the task, the observation and the time
// alone: the resume request, the failure streak, the CronJob, the runs to
// record, start, refuse and delete, and the transitions to announce.
func (p *pass) plan(scheme *runtime.Scheme) error {
	p.resume()
	p.observeFailures()
	if err := p.planCronJob(scheme); err != nil {
		return err
	}
	p.warnUnadopted()
	runs := &projection{runs: slices.Clone(p.obs.runs), next: nextRunNumber(p.task, p.obs.runs)}
	p.planRecords(runs)
	p.planMissedRuns(runs)
	p.planRunNow(runs)
	p.planStarts(runs)
	p.planRetention(runs)
	return nil
}

// projection is the task's runs as they will be once the planned steps
// are done, and the number the next new run gets.
type projection struct {
	runs []*platformv1.TaskRun
	next int64
}

// number hands out the next run number.
func (pr *projection) number() string {
	n := pr.next
	pr.next = min(pr.next, platformv1.MaxRunNumber) + 1
	return strconv.FormatInt(n, 10)
}

// put adds tr, or replaces the run of its name.
func (pr *projection) put(tr *platformv1.TaskRun) {
	pr.runs = putRun(pr.runs, tr)
}

// putRun adds tr to runs, or replaces the run of its name.
func putRun(runs []*platformv1.TaskRun, tr *platformv1.TaskRun) []*platformv1.TaskRun {
	if i := runIndex(runs, tr.Name); i >= 0 {
		runs[i] = tr
		return runs
	}
	return append(runs, tr)
}

// runIndex is the index of the run named name in runs, -1 when none is.
func runIndex(runs []*platformv1.TaskRun, name string) int {
	return slices.IndexFunc(runs, func(tr *platformv1.TaskRun) bool { return tr.Name == name })
}

// nextRunNumber is the number the next new run of the task gets: after
// the status's count and every run's number.
func nextRunNumber(task *platformv1.ScheduleTask, runs []*platformv1.TaskRun) int64 {
	next := min(max(task.Status.TriggerCount, 0), platformv1.MaxRunNumber) + 1
	for _, tr := range runs {
		if n := tr.RunNumber(); n >= next {
			next = n + 1
		}
	}
	return next
}

// ownedRun is a new run of the task, labelled, numbered and controlled
// by it.
func (p *pass) ownedRun(name, number string, spec platformv1.TaskRunSpec) *platformv1.TaskRun {
	return &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       p.task.Namespace,
			Name:            name,
			Labels:          map[string]string{platformv1.ScheduleTaskLabel: p.task.Name},
			Annotations:     map[string]string{platformv1.RunNumberAnnotation: number},
			OwnerReferences: []metav1.OwnerReference{*taskRef(p.task)},
		},
		Spec: spec,
	}
}

// taskRef is the controller reference a run of the task carries.
func taskRef(task *platformv1.ScheduleTask) *metav1.OwnerReference {
	return metav1.NewControllerRef(task, platformv1.GroupVersion.WithKind("ScheduleTask"))
}

// planRecords plans a TaskRun for every Job of the task's CronJob that
// has none. A scheduled Job's TaskRun is named after the Job, so a repeated
// create after a crash or a stale cache hits AlreadyExists instead of making
// a twin.
//
// A Job is a run of the task only if it proves it: controlled by the task's
// CronJob (which anyone who may create Jobs can claim) and carrying a pod
// template the operator signed for this task (which nobody without the key
// can make). A Job that claims the task and fails the proof is reported once
// and never recorded, manual or scheduled; one made from an implant in the
// CronJob's template is deleted too (madeFromImplant).
func (p *pass) planRecords(runs *projection) {
	cj := p.obs.cronJob
	if cj == nil {
		return // no Job is the task's CronJob's before the cache shows it
	}
	for _, job := range p.obs.jobs {
		if !metav1.IsControlledBy(job, cj) || !job.DeletionTimestamp.IsZero() || p.obs.deleted[job.UID] {
			continue
		}
		if slices.ContainsFunc(runs.runs, func(tr *platformv1.TaskRun) bool {
			return tr.Spec.JobRef != nil && tr.Spec.JobRef.UID == job.UID
		}) {
			continue // recorded (also by a version that did not sign)
		}
		if problem := verifyJob(p.signer, p.task, job); problem != "" {
			implant := p.madeFromImplant(job)
			if implant || !p.obs.reported[job.UID] {
				p.unverified = append(p.unverified, unverifiedJob{job: job, problem: problem, delete: implant})
			}
			continue
		}
		if uid := job.Annotations[platformv1.TaskRunUIDAnnotation]; uid != "" {
			// A manual run: its TaskRun exists already; make sure it points here.
			i := slices.IndexFunc(runs.runs, func(tr *platformv1.TaskRun) bool {
				return string(tr.UID) == uid && tr.Spec.JobRef == nil
			})
			if i >= 0 {
				tr := withJobRef(runs.runs[i], job)
				runs.put(tr)
				p.steps = append(p.steps, &step{kind: stepLink, run: tr, job: job})
			}
			continue
		}
		// A Job the CronJob controller made on schedule is a Scheduled run
		// of its fire time; any other Job made from the CronJob's template
		// (`kubectl create job --from=cronjob/...`) is a Manual run,
		// whatever its name says.
		trigger, fired := platformv1.TriggerManual, firedFor(p.task, cj, job)
		if fired != nil {
			trigger = platformv1.TriggerScheduled
		}
		tr := p.ownedRun(job.Name, runs.number(), platformv1.TaskRunSpec{
			ScheduleTaskName: p.task.Name,
			Trigger:          trigger,
			ScheduledTime:    fired,
			JobRef:           &platformv1.JobRef{Name: job.Name, UID: job.UID},
		})
		// The run links to the change its Job's template came from (act
		// links one without, made while tracing was off, to the pass).
		if tp := job.Annotations[tracing.TraceParentAnnotation]; tp != "" {
			tr.Annotations[tracing.TraceParentAnnotation] = tp
		}
		runs.put(tr)
		p.steps = append(p.steps, &step{kind: stepRecord, run: tr, job: job, fired: fired})
	}
}

// withJobRef is a copy of tr pointing at job.
func withJobRef(tr *platformv1.TaskRun, job *batchv1.Job) *platformv1.TaskRun {
	tr = tr.DeepCopy()
	tr.Spec.JobRef = &platformv1.JobRef{Name: job.Name, UID: job.UID}
	return tr
}

// planMissedRuns counts the fire times the CronJob missed, names them in a
// Warning event and, for a RunAll task, plans a CatchUp run for each of the
// newest maxMissedRuns of them; a later pass starts those runs as it starts
// backfill runs, oldest first and in turn when concurrency forbids overlap.
func (p *pass) planMissedRuns(runs *projection) {
	missed, more := observeMissedRuns(p, runs.runs)
	if len(missed) == 0 {
		return
	}
	policy := p.task.Spec.MissedRuns
	if policy == "" {
		policy = platformv1.MissedRunsRunLatest
	}
	var catchUp []time.Time
	if policy == platformv1.MissedRunsRunAll {
		limit := int(p.task.Spec.MaxMissedRuns)
		if limit <= 0 {
			limit = platformv1.DefaultMaxMissedRuns
		}
		catchUp = missed[max(len(missed)-limit, 0):]
	}
	p.notes = append(p.notes, note{"The CronJob missed fire times",
		[]any{"missed", len(missed), "policy", policy, "catchUp", len(catchUp)}})
	p.missedEvent = &pendingEvent{eventType: corev1.EventTypeWarning, reason: EventMissedRuns, action: "Schedule",
		// After a gap, the status accounts up to the run that ended it.
		message: missedMessage(missed, more, p.missed.checked.Time, len(catchUp), policy), transition: true}
	for _, t := range catchUp {
		name := catchUpName(p.task, t)
		if slices.ContainsFunc(p.obs.jobs, func(j *batchv1.Job) bool { return j.Name == name }) {
			continue // the CronJob started it after all
		}
		tr := p.ownedRun(name, runs.number(), platformv1.TaskRunSpec{
			ScheduleTaskName: p.task.Name,
			Trigger:          platformv1.TriggerCatchUp,
			ScheduledTime:    &metav1.Time{Time: t},
		})
		runs.put(tr)
		p.steps = append(p.steps, &step{kind: stepCatchUp, run: tr})
	}
}

// planRunNow turns a new value of the run-now annotation into a manual
// TaskRun of the task, named after the value so that a retry finds the one
// it made, and records the value as handled in the status the pass writes
// (status.handledRequests), where no one but the operator can undo it. A
// later pass starts the run (its Job's name needs the run's UID).
func (p *pass) planRunNow(runs *projection) {
	value := p.task.Annotations[platformv1.RunNowAnnotation]
	if isHandled(value, p.handled.RunNow) {
		return
	}
	tr := p.ownedRun(truncateName(p.task.Name, 52)+"-now-"+shortHash(value), runs.number(),
		platformv1.TaskRunSpec{ScheduleTaskName: p.task.Name, Trigger: platformv1.TriggerManual})
	// Admission wrote who set run-now (the operator's own request is exempt
	// from the TaskRun's requester check), so the run names them.
	if by := p.task.Annotations[platformv1.RunNowRequestedByAnnotation]; by != "" {
		tr.Annotations[platformv1.RequestedByAnnotation] = by
	}
	runs.put(tr)
	p.steps = append(p.steps, &step{kind: stepRunNow, run: tr, handled: handledValue(value)})
}

// planStarts plans the start of every manual, backfill and catch-up run
// without a Job, honouring the concurrency policy, oldest first: runs that
// wait for one another (a Forbid task's backfill) then start in the order
// of the fire times they stand for. Each starts from the job template the
// operator rendered and signed in this pass, never from the CronJob as
// stored: a co-tenant's change to it would otherwise run, signed, as the
// task.
func (p *pass) planStarts(runs *projection) {
	var pending []*platformv1.TaskRun
	for _, tr := range runs.runs {
		// A run this pass made has no UID yet, and no Job name: the pass
		// its creation wakes starts it.
		if tr.UID != "" && mayStart(p.task, tr) {
			pending = append(pending, tr)
		}
	}
	slices.SortStableFunc(pending, func(a, b *platformv1.TaskRun) int {
		if c := a.DueTime().Compare(b.DueTime()); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	active := slices.Clone(p.obs.active)
	waiting := false
	policy := concurrencyPolicy(&p.task.Spec)
	for _, tr := range pending {
		if waiting && waitsItsTurn(tr) {
			continue // a run of an older fire time waits already
		}
		if !metav1.IsControlledBy(tr, p.task) || tr.Labels[platformv1.ScheduleTaskLabel] != p.task.Name || tr.RunNumber() <= 0 {
			tr = adopted(p.task, tr, runs)
			runs.put(tr)
			p.steps = append(p.steps, &step{kind: stepAdopt, run: tr})
		}
		live := p.obs.live[tr.Name]
		if live == nil || live.IsFinished() || stopping(live) || live.Spec.JobRef != nil {
			continue
		}
		jobName := runJobName(p.task, tr)
		// Another run is active unless the only active Job is this run's own
		// (started by an earlier pass that failed before recording it).
		others := slices.DeleteFunc(slices.Clone(active), func(j *batchv1.Job) bool { return j.Name == jobName })
		if len(others) > 0 && policy != platformv1.AllowConcurrent {
			if waitsItsTurn(tr) {
				// A backfill or catch-up run waits its turn rather than being
				// refused, or replacing the run in progress: the end of that
				// run's Job wakes the task, and the oldest waiting run starts then.
				waiting = true
				p.steps = append(p.steps, &step{kind: stepWait, run: tr, waitsFor: others[0].Name})
				continue
			}
			if policy == platformv1.ForbidConcurrent {
				msg := fmt.Sprintf("Not started: run %s is active and concurrencyPolicy is Forbid", others[0].Name)
				if stopped := refused(tr, platformv1.ReasonConcurrencyForbidden, msg); stopped != nil {
					runs.put(stopped)
					p.steps = append(p.steps, &step{kind: stepRefuse, run: stopped, waitsFor: others[0].Name})
				}
				continue
			}
		}
		s := &step{kind: stepStart, run: tr, job: p.runJob(tr, live, jobName)}
		if policy == platformv1.ReplaceConcurrent {
			s.replace = others
			active = slices.DeleteFunc(active, func(j *batchv1.Job) bool { return slices.Contains(others, j) })
		}
		active = append(active, s.job)
		p.steps = append(p.steps, s)
	}
}

// refused is a copy of tr asked to stop for reason, or nil when it was
// asked already. The request is a pair of annotations: the TaskRun
// controller is the one writer of a run's status, its events and its
// metrics, and ends the run.
func refused(tr *platformv1.TaskRun, reason, message string) *platformv1.TaskRun {
	if tr.Annotations[platformv1.StopReasonAnnotation] == reason {
		return nil
	}
	tr = tr.DeepCopy()
	if tr.Annotations == nil {
		tr.Annotations = map[string]string{}
	}
	tr.Annotations[platformv1.StopReasonAnnotation] = reason
	tr.Annotations[platformv1.StopMessageAnnotation] = message
	return tr
}

// adopted is a copy of a user's manual run with the task's label, owner
// reference and a run number, so it is found, counted and
// garbage-collected with the task.
func adopted(task *platformv1.ScheduleTask, tr *platformv1.TaskRun, runs *projection) *platformv1.TaskRun {
	tr = tr.DeepCopy()
	if tr.Labels == nil {
		tr.Labels = map[string]string{}
	}
	tr.Labels[platformv1.ScheduleTaskLabel] = task.Name
	if tr.RunNumber() <= 0 {
		if tr.Annotations == nil {
			tr.Annotations = map[string]string{}
		}
		tr.Annotations[platformv1.RunNumberAnnotation] = runs.number()
	}
	refs := slices.DeleteFunc(tr.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == task.UID })
	tr.OwnerReferences = append(refs, *taskRef(task))
	return tr
}

// runJob is the Job of a run the operator starts, made from the pass's
// job template (the CronJob's owner reference is act's to set, from the
// CronJob it applied) with the run's arguments and environment, signed.
func (p *pass) runJob(tr, live *platformv1.TaskRun, name string) *batchv1.Job {
	job := jobFromTemplate(p.task.Namespace, p.jobTemplate, name)
	signRun(p.signer, p.task, job, live)
	job.Annotations[platformv1.TaskRunUIDAnnotation] = string(tr.UID)
	if tr.Spec.Trigger == platformv1.TriggerCatchUp && tr.Spec.ScheduledTime != nil {
		// As on the CronJob's own Jobs: the fire time the Job stands for.
		job.Annotations[batchv1.CronJobScheduledTimestampAnnotation] = tr.Spec.ScheduledTime.UTC().Format(time.RFC3339)
	}
	return job
}

// planRetention plans the deletion of the oldest finished runs beyond the
// task's history limits. Running runs are never deleted.
func (p *pass) planRetention(runs *projection) {
	expired := expiredRuns(runs.runs,
		int(ptr.Deref(p.task.Spec.SuccessfulRunsHistoryLimit, platformv1.DefaultRunsHistoryLimit)),
		int(ptr.Deref(p.task.Spec.FailedRunsHistoryLimit, platformv1.DefaultRunsHistoryLimit)))
	for _, tr := range expired {
		p.steps = append(p.steps, &step{kind: stepExpire, run: tr})
	}
}

// announce queues the events of a step that made what it planned: a run
// recorded, or a run's Job started (and the Jobs it replaced deleted).
func (p *pass) announce(s *step) {
	switch s.kind {
	case stepRecord:
		how := "on schedule"
		if s.fired == nil {
			how = "by hand from CronJob " + p.task.Name
		}
		p.event(s.run, corev1.EventTypeNormal, EventRunStarted, "Record", "Run %s started %s (Job %s)", s.run.Name, how, s.job.Name)
	case stepStart:
		for _, j := range s.replace {
			p.event(j, corev1.EventTypeNormal, EventRunReplaced, "Replace",
				"Job %s deleted to start manual run %s (concurrencyPolicy Replace)", j.Name, s.run.Name)
		}
		// "Manual run ...", "Backfill run ...", "CatchUp run ...": the
		// schema defaults the trigger, so it is always set.
		p.event(s.run, corev1.EventTypeNormal, EventRunStarted, "Start",
			"%s run %s started (Job %s)", s.run.Spec.Trigger, s.run.Name, s.job.Name)
	}
}

// done counts a step act took (or the world of a test did) in the runs
// the status is rebuilt from.
func (p *pass) done(s *step) {
	switch {
	case s.kind == stepExpire:
		p.runs = slices.DeleteFunc(p.runs, func(tr *platformv1.TaskRun) bool { return tr.Name == s.run.Name })
	case s.run != nil && s.kind != stepWait:
		p.runs = putRun(p.runs, s.run)
	}
	if s.kind == stepRunNow {
		p.handled.RunNow = s.handled
	}
}
