// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/jobutil"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/schedule"
	"github.com/example/platform-operator/internal/testutil"
)

// world is a small model of what the cluster does with a task's children:
// the CronJob controller starts Jobs at fire times as its concurrency policy
// says (and not at all while it is down), Jobs end after a while, and the
// TaskRun controller writes each run's phase from its Job or its stop
// request. A pass's plan is applied to it as act would apply it, and the
// status written back, so a test drives a task through hours in memory and
// checks the invariants of the runs after every pass. (What the API server
// decides, and the real controllers, are tested on envtest and kwok.)
type world struct {
	t      *testing.T
	task   *platformv1.ScheduleTask
	now    time.Time
	signer *provenance.Signer
	seq    int

	cronJob *batchv1.CronJob
	// cronJobDown: the CronJob controller is not running.
	cronJobDown bool
	// lastFire is the newest fire time the CronJob controller has dealt
	// with (started, skipped or let pass).
	lastFire time.Time
	jobs     map[string]*batchv1.Job
	runs     map[string]*platformv1.TaskRun
	// outcome says how long a Job runs and whether it succeeds.
	outcome func(job *batchv1.Job) (time.Duration, bool)
	// stale are deleted Jobs a lagging cache still shows for one pass.
	stale []*batchv1.Job

	// The reconciler's memory.
	deleted, reported map[types.UID]bool

	// cutShort, when set, ends the pass that starts a run's Job right
	// after the Job's creation, as a crash or a failed write would: the run
	// does not point at its Job yet.
	cutShort bool

	// events are "Reason message" of the events the passes sent.
	events []string
	// passes counts the passes; started counts the Jobs made per run UID.
	passes  int
	started map[string]int
}

func newWorld(t *testing.T, task *platformv1.ScheduleTask) *world {
	t.Helper()
	signer, err := provenance.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC)
	task.UID = "task-uid"
	task.Generation = 1
	task.CreationTimestamp = metav1.NewTime(now)
	return &world{t: t, task: task, now: now, signer: signer, lastFire: now,
		jobs: map[string]*batchv1.Job{}, runs: map[string]*platformv1.TaskRun{},
		outcome: func(*batchv1.Job) (time.Duration, bool) { return 20 * time.Second, true },
		deleted: map[types.UID]bool{}, reported: map[types.UID]bool{}, started: map[string]int{}}
}

func (w *world) uid(kind string) types.UID {
	w.seq++
	return types.UID(fmt.Sprintf("%s-%d", kind, w.seq))
}

// run advances the world by d in ticks of 10 seconds, with a pass (and
// whatever passes it leads to) after each tick.
func (w *world) run(d time.Duration) {
	w.t.Helper()
	for end := w.now.Add(d); w.now.Before(end); {
		w.now = w.now.Add(10 * time.Second)
		w.fire()
		w.progress()
		w.settle()
	}
}

// settle runs passes until one plans no write, as the watches would wake
// the task after each write; a task that never settles fails the test.
func (w *world) settle() {
	w.t.Helper()
	for range 5 {
		if !w.pass() {
			return
		}
		w.progress()
	}
	w.t.Fatalf("%s: the passes never settle", w.now.Format(time.TimeOnly))
}

// fire is the CronJob controller: the newest fire time it has not dealt
// with starts a Job, unless a deadline, Forbid or suspension says not;
// older ones it lets pass (they are missed).
func (w *world) fire() {
	cj := w.cronJob
	if cj == nil || w.cronJobDown || ptr.Deref(cj.Spec.Suspend, false) {
		return
	}
	sched, err := schedule.Parse(cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil {
		w.t.Fatalf("schedule %q: %v", cj.Spec.Schedule, err)
	}
	var due time.Time
	for t := sched.Next(w.lastFire); !t.IsZero() && !t.After(w.now); t = sched.Next(t) {
		due = t
	}
	if due.IsZero() {
		return
	}
	w.lastFire = due
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && w.now.Sub(due) > time.Duration(*d)*time.Second {
		return
	}
	active := w.activeJobs()
	switch {
	case len(active) > 0 && cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent:
		return
	case cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent:
		for _, j := range active {
			w.deleteJob(j.Name)
		}
	}
	job := testutil.JobFromCronJob(cj, due)
	w.createJob(job)
	cj.Status.LastScheduleTime = &metav1.Time{Time: due}
}

// activeJobs are the unfinished Jobs of the task's CronJob.
func (w *world) activeJobs() []*batchv1.Job {
	var active []*batchv1.Job
	for _, j := range w.jobs {
		if finished, _ := jobutil.Finished(j); !finished && w.cronJob != nil && metav1.IsControlledBy(j, w.cronJob) {
			active = append(active, j)
		}
	}
	sortJobs(active)
	return active
}

func (w *world) createJob(job *batchv1.Job) {
	job.UID = w.uid("job")
	job.CreationTimestamp = metav1.NewTime(w.now)
	// The API server stores the template with its defaults.
	job.Spec.Template = *provenance.Defaulted(&job.Spec.Template)
	testutil.StartJob(job, w.now)
	w.jobs[job.Name] = job
}

func (w *world) deleteJob(name string) {
	if j, ok := w.jobs[name]; ok {
		w.stale = append(w.stale, j)
		delete(w.jobs, name)
	}
}

// progress ends the Jobs whose time is up and writes each run's status,
// as the Job and TaskRun controllers would.
func (w *world) progress() {
	for _, j := range w.jobs {
		if finished, _ := jobutil.Finished(j); finished {
			continue
		}
		d, ok := w.outcome(j)
		if end := j.CreationTimestamp.Add(d); !w.now.Before(end) {
			if ok {
				testutil.CompleteJob(j, j.CreationTimestamp.Time, end)
			} else {
				testutil.FailJob(j, platformv1.ReasonBackoffLimitExceeded, 1, j.CreationTimestamp.Time, end)
			}
		}
	}
	for _, tr := range w.runs {
		if tr.IsFinished() {
			continue
		}
		st := &tr.Status
		st.RunNumber = tr.RunNumber()
		if reason := tr.Annotations[platformv1.StopReasonAnnotation]; reason != "" {
			st.Phase, st.Reason, st.CompletionTime = platformv1.TaskRunFailed, reason, &metav1.Time{Time: w.now}
			continue
		}
		ref := tr.Spec.JobRef
		if ref == nil {
			continue
		}
		j := w.jobs[ref.Name]
		if j == nil || j.UID != ref.UID {
			st.Phase, st.Reason, st.CompletionTime = platformv1.TaskRunFailed, platformv1.ReasonCancelled, &metav1.Time{Time: w.now}
			continue
		}
		st.StartTime = &j.CreationTimestamp
		st.Phase = platformv1.TaskRunRunning
		if c := jobutil.FinishedCondition(j); c != nil {
			st.CompletionTime = &metav1.Time{Time: c.LastTransitionTime.Time}
			st.Phase, st.Reason = platformv1.TaskRunSucceeded, platformv1.ReasonCompleted
			if c.Type == batchv1.JobFailed {
				st.Phase, st.Reason = platformv1.TaskRunFailed, c.Reason
			}
		}
	}
}

// observation is what the cache and the API server would show.
func (w *world) observation() *observation {
	obs := &observation{deleted: map[types.UID]bool{}, reported: maps.Clone(w.reported)}
	if w.cronJob != nil {
		obs.cronJob = w.cronJob.DeepCopy()
	}
	for _, name := range slices.Sorted(maps.Keys(w.runs)) {
		obs.runs = append(obs.runs, w.runs[name].DeepCopy())
	}
	for _, j := range w.jobs {
		obs.jobs = append(obs.jobs, j.DeepCopy())
	}
	for _, j := range w.stale {
		obs.jobs = append(obs.jobs, j.DeepCopy())
		if w.deleted[j.UID] {
			obs.deleted[j.UID] = true
		}
	}
	w.stale = nil
	sortJobs(obs.jobs)
	for _, tr := range obs.runs {
		if mayStart(w.task, tr) {
			if obs.live == nil {
				obs.live = map[string]*platformv1.TaskRun{}
			}
			obs.live[tr.Name] = tr.DeepCopy()
		}
	}
	if obs.live != nil {
		for _, j := range w.activeJobs() {
			obs.active = append(obs.active, j.DeepCopy())
		}
	}
	return obs
}

// pass runs one reconcile of the task against the world and reports
// whether it wrote anything but the status.
func (w *world) pass() bool {
	w.t.Helper()
	w.passes++
	p := newPass(w.task.DeepCopy(), w.observation(), w.now, w.signer)
	if err := p.plan(testScheme(w.t)); err != nil {
		w.t.Fatalf("plan: %v", err)
	}
	wrote := w.applyCronJob(p)
	for _, u := range p.unverified {
		w.reported[u.job.UID] = true
		if u.delete {
			w.deleted[u.job.UID] = true
			w.deleteJob(u.job.Name)
			wrote = true
		}
		p.event(u.job, corev1.EventTypeWarning, EventUnverifiedJob, "Record", "Job %s: %s", u.job.Name, u.problem)
	}
	ok := true
	for _, s := range p.steps {
		if s.kind != stepWait {
			wrote = true
		}
		if ok = w.take(p, s); !ok {
			break
		}
		p.done(s)
	}
	w.task.Status = nextStatus(p, w.now, ok)
	for _, e := range p.events {
		if ok || !e.transition {
			w.events = append(w.events, e.reason+" "+e.message)
		}
	}
	if ok {
		w.check(p)
	}
	return wrote
}

// applyCronJob applies the desired CronJob as the API server would store
// it, and reports whether that changed it.
func (w *world) applyCronJob(p *pass) bool {
	cj := &batchv1.CronJob{}
	if err := convert(p.desired, cj); err != nil {
		w.t.Fatal(err)
	}
	cj.Spec.JobTemplate.Spec.Template = *provenance.Defaulted(&cj.Spec.JobTemplate.Spec.Template)
	changed := w.cronJob == nil
	if w.cronJob != nil {
		cj.UID, cj.CreationTimestamp, cj.Status = w.cronJob.UID, w.cronJob.CreationTimestamp, w.cronJob.Status
		changed = provenance.TemplateHash(&cj.Spec.JobTemplate.Spec.Template) !=
			provenance.TemplateHash(&w.cronJob.Spec.JobTemplate.Spec.Template) ||
			ptr.Deref(cj.Spec.Suspend, false) != ptr.Deref(w.cronJob.Spec.Suspend, false) ||
			cj.Spec.Schedule != w.cronJob.Spec.Schedule
	} else {
		cj.UID, cj.CreationTimestamp = w.uid("cronjob"), metav1.NewTime(w.now)
	}
	w.cronJob = cj
	p.cronJob = cj.DeepCopy()
	return changed
}

// take applies a step as act would, and reports whether it got through.
func (w *world) take(p *pass, s *step) bool {
	switch s.kind {
	case stepRecord, stepCatchUp, stepRunNow:
		if _, ok := w.runs[s.run.Name]; ok {
			s.run = nil // AlreadyExists
			return true
		}
		tr := s.run.DeepCopy()
		tr.UID, tr.CreationTimestamp = w.uid("run"), metav1.NewTime(w.now)
		w.runs[tr.Name] = tr
		s.run = tr.DeepCopy()
		p.announce(s)
	case stepAdopt, stepLink, stepRefuse:
		w.patch(s, s.run)
	case stepStart:
		for _, j := range s.replace {
			w.deleteJob(j.Name)
		}
		job := s.job.DeepCopy()
		if existing, ok := w.jobs[job.Name]; ok && existing.Annotations[platformv1.TaskRunUIDAnnotation] != string(s.run.UID) {
			w.patch(s, refused(s.run, platformv1.ReasonJobNameTaken, "taken"))
			return true
		} else if !ok {
			job.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(w.cronJob, batchv1.SchemeGroupVersion.WithKind("CronJob"))}
			w.createJob(job)
			w.started[string(s.run.UID)]++
			p.announce(s)
			if w.cutShort {
				w.cutShort = false
				return false
			}
		}
		w.patch(s, withJobRef(s.run, w.jobs[job.Name]))
	case stepExpire:
		if ref := s.run.Spec.JobRef; ref != nil {
			w.deleted[ref.UID] = true
			w.deleteJob(ref.Name)
		}
		delete(w.runs, s.run.Name)
	}
	return true
}

// patch writes a step's run's metadata and spec, keeping its status (a
// subresource).
func (w *world) patch(s *step, to *platformv1.TaskRun) {
	cur, ok := w.runs[to.Name]
	if !ok {
		w.t.Fatalf("patch of missing run %s", to.Name)
	}
	tr := to.DeepCopy()
	tr.Status = cur.Status
	w.runs[tr.Name] = tr
	s.run = tr.DeepCopy()
}

// check asserts what must hold after every pass.
func (w *world) check(p *pass) {
	w.t.Helper()
	fail := func(format string, args ...any) {
		w.t.Helper()
		w.t.Fatalf("%s, pass %d: %s", w.now.Format(time.TimeOnly), w.passes, fmt.Sprintf(format, args...))
	}
	byJob := map[types.UID]string{}
	numbers := map[int64]string{}
	for _, tr := range w.runs {
		if ref := tr.Spec.JobRef; ref != nil {
			if other, ok := byJob[ref.UID]; ok {
				fail("runs %s and %s record the same Job %s", other, tr.Name, ref.Name)
			}
			byJob[ref.UID] = tr.Name
		}
		if n := tr.RunNumber(); n > 0 {
			if other, ok := numbers[n]; ok {
				fail("runs %s and %s have the same number %d", other, tr.Name, n)
			}
			numbers[n] = tr.Name
			if n > w.task.Status.TriggerCount {
				fail("run %s has number %d above triggerCount %d", tr.Name, n, w.task.Status.TriggerCount)
			}
		}
	}
	// Every Job of the CronJob is recorded by the pass that sees it, and
	// every Job carries a signature the task's key made.
	for _, j := range w.jobs {
		if _, ok := byJob[j.UID]; !ok && w.cronJob != nil && metav1.IsControlledBy(j, w.cronJob) &&
			verifyJob(w.signer, w.task, j) == "" {
			fail("Job %s has no run", j.Name)
		}
	}
	// A Job the pass started is provably the task's, once the API
	// server has defaulted its template.
	for _, s := range p.steps {
		if s.kind != stepStart {
			continue
		}
		if j := w.jobs[s.job.Name]; j != nil && verifyJob(w.signer, w.task, j) != "" {
			fail("Job %s the pass started fails the proof: %s", j.Name, verifyJob(w.signer, w.task, j))
		}
	}
	for uid, n := range w.started {
		if n > 1 {
			fail("run %s was started %d times", uid, n)
		}
	}
	if concurrencyPolicy(&w.task.Spec) != platformv1.AllowConcurrent && len(w.activeJobs()) > 1 {
		fail("%d Jobs active under %s", len(w.activeJobs()), w.task.Spec.ConcurrencyPolicy)
	}
	w.checkStatus(fail)
}

// checkStatus asserts that retention keeps the limits and that the status
// says what the runs are.
func (w *world) checkStatus(fail func(format string, args ...any)) {
	w.t.Helper()
	var succeeded, failed int32
	var active []string
	for _, tr := range w.runs {
		switch {
		case tr.Status.Phase == platformv1.TaskRunSucceeded:
			succeeded++
		case tr.Status.Phase == platformv1.TaskRunFailed:
			failed++
		case tr.Spec.JobRef != nil:
			active = append(active, tr.Name)
		}
	}
	// Retention keeps the limits, counted over the runs finished before
	// the pass (a run the TaskRun controller ends after it waits for the
	// next).
	if limit := ptr.Deref(w.task.Spec.SuccessfulRunsHistoryLimit, platformv1.DefaultRunsHistoryLimit); succeeded > limit+1 {
		fail("%d succeeded runs kept, limit %d", succeeded, limit)
	}
	if limit := ptr.Deref(w.task.Spec.FailedRunsHistoryLimit, platformv1.DefaultRunsHistoryLimit); failed > limit+1 {
		fail("%d failed runs kept, limit %d", failed, limit)
	}
	slices.Sort(active)
	if st := w.task.Status; !slices.Equal(st.ActiveRuns, active) || st.Active != (len(active) > 0) {
		fail("status.activeRuns %v, want %v", st.ActiveRuns, active)
	}
	if st := w.task.Status; st.NextScheduleTime != nil && !st.NextScheduleTime.After(w.now) {
		fail("nextScheduleTime %v is not after now", st.NextScheduleTime)
	}
	if ptr.Deref(w.task.Spec.Suspend, false) && w.task.Status.NextScheduleTime != nil {
		fail("a suspended task names a next run")
	}
}

// runsBy are the names of the runs of a trigger, oldest first.
func (w *world) runsBy(trigger platformv1.Trigger) []*platformv1.TaskRun {
	var out []*platformv1.TaskRun
	for _, tr := range w.runs {
		if tr.Spec.Trigger == trigger {
			out = append(out, tr)
		}
	}
	slices.SortFunc(out, func(a, b *platformv1.TaskRun) int { return a.DueTime().Compare(b.DueTime()) })
	return out
}

// eventsOf are the events of a reason.
func (w *world) eventsOf(reason string) []string {
	var out []string
	for _, e := range w.events {
		if len(e) > len(reason) && e[:len(reason)+1] == reason+" " {
			out = append(out, e)
		}
	}
	return out
}

// manual adds a user's manual run of the task, with its trigger.
func (w *world) manual(name string, trigger platformv1.Trigger, scheduled *time.Time) *platformv1.TaskRun {
	tr := testutil.NewManualTaskRun(w.task.Namespace, name, w.task.Name)
	tr.Spec.Trigger = trigger
	if scheduled != nil {
		tr.Spec.ScheduledTime = &metav1.Time{Time: *scheduled}
	}
	tr.UID, tr.CreationTimestamp = w.uid("run"), metav1.NewTime(w.now)
	w.runs[name] = tr
	return tr
}
