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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/taskrun"
	"github.com/example/platform-operator/internal/jobutil"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/reconcileutil"
	"github.com/example/platform-operator/internal/tracing"
)

// Annotations the controller keeps for itself.
const (
	// runNowHandledAnnotation on a ScheduleTask remembers the run-now value
	// already acted on, so each new value starts exactly one run.
	runNowHandledAnnotation = "platform.example.com/run-now-handled"
	// instantiateAnnotation marks a Job made from a CronJob's template by hand,
	// as `kubectl create job --from=cronjob/...` does.
	instantiateAnnotation = "cronjob.kubernetes.io/instantiate"
)

// Reasons of the events about runs.
const (
	EventRunStarted  = "RunStarted"
	EventRunReplaced = "RunReplaced"
)

// runSet is a task's TaskRuns and Jobs as one pass sees them.
type runSet struct {
	runs []*platformv1.TaskRun
	jobs []*batchv1.Job
	// nextNumber is the run number the next recorded run gets.
	nextNumber int64
	// unadopted are the manual runs naming the task that another object
	// controls, so the task cannot adopt (or start) them.
	unadopted []string
	// backfillWaits: a backfill or catch-up run of this pass waits for an
	// active run, so the later ones (newer fire times) wait too, unread.
	backfillWaits bool
}

// reconcileRuns makes sure every Job of the task has exactly one TaskRun and
// starts the manual runs that were asked for, on the runs observeFailures
// read into obs.
func (r *Reconciler) reconcileRuns(ctx context.Context, task *platformv1.ScheduleTask, obs *observation) error {
	rs := obs.runs
	r.warnUnadopted(task, rs)
	if obs.cronJob == nil {
		// Without the CronJob there is no Job template to start from; the
		// CronJob step has already reported why.
		return nil
	}
	for _, job := range rs.jobs {
		if err := r.recordJob(ctx, task, obs.cronJob, rs, job); err != nil {
			return err
		}
	}
	if err := r.reconcileMissedRuns(ctx, task, obs); err != nil {
		return err
	}
	if err := r.requestRunNow(ctx, task, rs); err != nil {
		return err
	}
	// Oldest first: backfill and catch-up runs that wait for one another
	// (a Forbid task's) then start in the order of the fire times they
	// stand for.
	pending := slices.Clone(rs.runs)
	slices.SortStableFunc(pending, func(a, b *platformv1.TaskRun) int {
		if c := a.DueTime().Compare(b.DueTime()); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, tr := range pending {
		if tr.Spec.JobRef != nil || tr.IsFinished() || stopping(tr) || !tr.DeletionTimestamp.IsZero() {
			continue
		}
		if foreignControlled(task, tr) {
			continue // listed in rs.unadopted
		}
		if rs.backfillWaits && waitsItsTurn(tr) {
			continue
		}
		if err := r.startManualRun(ctx, task, obs.cronJob, rs, tr); err != nil {
			return err
		}
	}
	return nil
}

// foreignControlled reports whether another object controls a run that
// names the task. Such a run cannot be adopted; it must not stop the rest
// of the pass (retention, other runs, status), so it is set aside and
// reported on the RunsAdopted condition.
func foreignControlled(task *platformv1.ScheduleTask, tr *platformv1.TaskRun) bool {
	ref := metav1.GetControllerOf(tr)
	return ref != nil && ref.UID != task.UID
}

// unadoptedMessage says which runs the task cannot adopt; it names at most
// maxNamedRuns of them, so the condition stays small however many there are.
func unadoptedMessage(names []string) string {
	slices.Sort(names)
	const maxNamedRuns = 10
	msg := "TaskRuns naming this task are controlled by another object and cannot be adopted: " +
		strings.Join(names[:min(len(names), maxNamedRuns)], ", ")
	if len(names) > maxNamedRuns {
		msg += fmt.Sprintf(" and %d more", len(names)-maxNamedRuns)
	}
	return msg
}

// setRunsAdoptedCondition sets RunsAdopted from the runs the pass could not
// adopt. Without a run set (the runs could not be listed) it is left as it
// was.
func setRunsAdoptedCondition(conds *[]metav1.Condition, task *platformv1.ScheduleTask, rs *runSet, now time.Time) {
	if rs == nil {
		return
	}
	c := metav1.Condition{Type: platformv1.ConditionRunsAdopted, Status: metav1.ConditionTrue,
		Reason: platformv1.ReasonAllRunsAdopted, Message: "Every TaskRun naming this task is the task's"}
	if len(rs.unadopted) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, platformv1.ReasonForeignController, unadoptedMessage(rs.unadopted)
	}
	reconcileutil.SetCondition(conds, c, task.Generation, now)
}

// warnUnadopted sends a Warning event when the set of runs the task cannot
// adopt appears or changes, not on every pass.
func (r *Reconciler) warnUnadopted(task *platformv1.ScheduleTask, rs *runSet) {
	if len(rs.unadopted) == 0 {
		return
	}
	msg := unadoptedMessage(rs.unadopted)
	if c := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionRunsAdopted); c != nil &&
		c.Status == metav1.ConditionFalse && c.Message == msg {
		return
	}
	r.Recorder.Eventf(task, nil, corev1.EventTypeWarning, platformv1.ReasonForeignController, "Adopt", "%s", msg)
}

// listRuns reads the task's TaskRuns (by the name they give) and Jobs (by
// label) from the cache.
func (r *Reconciler) listRuns(ctx context.Context, task *platformv1.ScheduleTask) (*runSet, error) {
	var trs platformv1.TaskRunList
	if err := r.List(ctx, &trs, client.InNamespace(task.Namespace),
		client.MatchingFields{taskrun.TaskNameField: task.Name}); err != nil {
		return nil, fmt.Errorf("list TaskRuns: %w", err)
	}
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(task.Namespace),
		client.MatchingFields{jobTaskField: task.Name}); err != nil {
		return nil, fmt.Errorf("list Jobs: %w", err)
	}
	rs := &runSet{nextNumber: min(max(task.Status.TriggerCount, 0), platformv1.MaxRunNumber) + 1}
	for i := range trs.Items {
		tr := &trs.Items[i]
		rs.runs = append(rs.runs, tr)
		if tr.Spec.JobRef == nil && tr.DeletionTimestamp.IsZero() && foreignControlled(task, tr) {
			rs.unadopted = append(rs.unadopted, tr.Name)
		}
		if n := tr.RunNumber(); n >= rs.nextNumber {
			rs.nextNumber = n + 1
		}
	}
	for i := range jobs.Items {
		rs.jobs = append(rs.jobs, &jobs.Items[i])
	}
	// Record Jobs oldest first, so run numbers follow the order of the runs.
	slices.SortFunc(rs.jobs, func(a, b *batchv1.Job) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return rs, nil
}

// recordJob creates the TaskRun of a Job of the task's CronJob, unless it has
// one. A scheduled Job's TaskRun is named after the Job, so a repeated create
// after a crash or a stale cache hits AlreadyExists instead of making a twin.
//
// A Job is a run of the task only if it proves it: controlled by the task's
// CronJob (which anyone who may create Jobs can claim) and carrying a pod
// template the operator signed for this task (which nobody without the key
// can make). A Job that claims the task and fails the proof is reported once
// and never recorded, manual or scheduled.
func (r *Reconciler) recordJob(ctx context.Context, task *platformv1.ScheduleTask, cj *batchv1.CronJob, rs *runSet, job *batchv1.Job) error {
	if !metav1.IsControlledBy(job, cj) || !job.DeletionTimestamp.IsZero() || r.deletedJobs.Has(job.UID, struct{}{}) {
		return nil
	}
	for _, tr := range rs.runs {
		if tr.Spec.JobRef != nil && tr.Spec.JobRef.UID == job.UID {
			return nil // recorded (also by a version that did not sign)
		}
	}
	if problem := r.verifyJob(task, job); problem != "" {
		r.reportUnverifiedJob(ctx, task, job, problem)
		return nil
	}
	if uid := job.Annotations[platformv1.TaskRunUIDAnnotation]; uid != "" {
		// A manual run: its TaskRun exists already; make sure it points here.
		for _, tr := range rs.runs {
			if string(tr.UID) == uid && tr.Spec.JobRef == nil {
				return r.setJobRef(ctx, tr, job)
			}
		}
		return nil
	}

	tr := &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   task.Namespace,
			Name:        job.Name,
			Labels:      map[string]string{platformv1.ScheduleTaskLabel: task.Name},
			Annotations: map[string]string{platformv1.RunNumberAnnotation: strconv.FormatInt(rs.nextNumber, 10)},
		},
		Spec: platformv1.TaskRunSpec{
			ScheduleTaskName: task.Name,
			Trigger:          platformv1.TriggerScheduled,
			ScheduledTime:    scheduledTime(job),
			JobRef:           &platformv1.JobRef{Name: job.Name, UID: job.UID},
		},
	}
	// The run links to the change its Job's template came from; a Job
	// without one (tracing off when the task last changed), to this pass.
	if tp := job.Annotations[tracing.TraceParentAnnotation]; tp != "" {
		tr.Annotations[tracing.TraceParentAnnotation] = tp
	} else {
		tracing.Annotate(ctx, tr.Annotations)
	}
	if err := controllerutil.SetControllerReference(task, tr, r.Scheme()); err != nil {
		return err
	}
	err := r.createRecord(ctx, tr)
	if apierrors.IsAlreadyExists(err) {
		var existing platformv1.TaskRun
		if gerr := r.APIReader.Get(ctx, client.ObjectKeyFromObject(tr), &existing); gerr != nil {
			return fmt.Errorf("get TaskRun %s: %w", tr.Name, gerr)
		}
		if existing.Spec.JobRef != nil && existing.Spec.JobRef.UID == job.UID {
			// Recorded already; the cache had not caught up. The status
			// counts it now: its create event may have come and gone.
			rs.runs = append(rs.runs, &existing)
			if n := existing.RunNumber(); n >= rs.nextNumber {
				rs.nextNumber = n + 1
			}
			return nil
		}
		// The name is taken by a run of another Job (a user's manual run, or a
		// Job of the same name that was deleted): derive a second name from
		// the UID, still deterministic for this Job.
		tr.Name = truncateName(job.Name, 57) + "-" + string(job.UID)[:5]
		tr.ResourceVersion = ""
		err = r.createRecord(ctx, tr)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("create TaskRun for Job %s: %w", job.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Recorded run", "taskRun", klog.KObj(tr), "job", klog.KObj(job))
	r.Recorder.Eventf(task, tr, corev1.EventTypeNormal, EventRunStarted, "Record",
		"Run %s started on schedule (Job %s)", tr.Name, job.Name)
	rs.runs = append(rs.runs, tr)
	rs.nextNumber++
	return nil
}

// createRecord creates a run recorded from a Job. It is remembered before it
// is sent, since its create event may arrive before the answer, so that the
// event does not wake the task (see taskRunChangesTask).
func (r *Reconciler) createRecord(ctx context.Context, tr *platformv1.TaskRun) error {
	key := client.ObjectKeyFromObject(tr)
	r.recordedRuns.Remember(key, struct{}{})
	err := r.Create(ctx, tr)
	if err != nil {
		r.recordedRuns.Take(key, struct{}{})
	}
	return err
}

// EventUnverifiedJob: a Job claims to be a run of the task (its CronJob is
// its controller) but does not carry the task's signed pod template; it is
// not recorded.
const EventUnverifiedJob = "UnverifiedJob"

// unverifiedJobTTL is how long a Job reported as unverified is remembered:
// a report per Job, not per pass; after a restart, or a day, once more.
const unverifiedJobTTL = 24 * time.Hour

// verifyJob says why job is not provably a run of task, or "" when it is:
// its pod template, as the cache transform hashed it from the full Job
// (provenance.TemplateHashAnnotation), must carry the operator's signature
// for this task. A Job read past the cache has its template and is hashed
// here.
func (r *Reconciler) verifyJob(task *platformv1.ScheduleTask, job *batchv1.Job) string {
	sig := job.Annotations[provenance.SignatureAnnotation]
	if sig == "" {
		return "it carries no signature of the task's pod template"
	}
	hash := job.Annotations[provenance.TemplateHashAnnotation]
	if len(job.Spec.Template.Spec.Containers) > 0 {
		hash = provenance.TemplateHash(&job.Spec.Template)
	}
	if !r.Signer.Verify(task.UID, hash, sig) {
		return "its pod template is not one the operator rendered for this task"
	}
	return ""
}

// reportUnverifiedJob sends a Warning event on the task about a Job that
// failed the proof of origin, once per Job.
func (r *Reconciler) reportUnverifiedJob(ctx context.Context, task *platformv1.ScheduleTask, job *batchv1.Job, problem string) {
	if r.unverifiedJobs.Has(job.UID, struct{}{}) {
		return
	}
	r.unverifiedJobs.Remember(job.UID, struct{}{})
	ctrl.LoggerFrom(ctx).Info("Not recording a Job that claims the task without proof", "job", klog.KObj(job), "problem", problem)
	r.Recorder.Eventf(task, job, corev1.EventTypeWarning, EventUnverifiedJob, "Record",
		"Job %s is controlled by CronJob %s but is not recorded as a run: %s", job.Name, task.Name, problem)
}

// requestRunNow turns a new value of the run-now annotation into a manual
// TaskRun, named after the value so that a retry finds the one it made.
func (r *Reconciler) requestRunNow(ctx context.Context, task *platformv1.ScheduleTask, rs *runSet) error {
	value := task.Annotations[platformv1.RunNowAnnotation]
	if value == "" || value == task.Annotations[runNowHandledAnnotation] {
		return nil
	}
	tr := &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: task.Namespace,
			Name:      truncateName(task.Name, 52) + "-now-" + shortHash(value),
		},
		Spec: platformv1.TaskRunSpec{ScheduleTaskName: task.Name, Trigger: platformv1.TriggerManual},
	}
	// Admission wrote who set run-now (the operator's own request is exempt
	// from the TaskRun's requester check), so the run names them.
	if by := task.Annotations[platformv1.RunNowRequestedByAnnotation]; by != "" {
		tr.Annotations = map[string]string{platformv1.RequestedByAnnotation: by}
	}
	err := r.Create(ctx, tr)
	switch {
	case err == nil:
		rs.runs = append(rs.runs, tr)
	case apierrors.IsAlreadyExists(err):
	default:
		return fmt.Errorf("create TaskRun for %s: %w", platformv1.RunNowAnnotation, err)
	}
	// The patch is conditioned on the version read, as every write of the
	// task is (see reconcileutil.OwnWrites).
	patch := client.MergeFromWithOptions(task.DeepCopy(), client.MergeFromWithOptimisticLock{})
	task.Annotations[runNowHandledAnnotation] = value
	done := r.writes.Writing(task)
	err = r.Patch(ctx, task, patch)
	done(err)
	if err != nil {
		return fmt.Errorf("mark %s handled: %w", platformv1.RunNowAnnotation, err)
	}
	return nil
}

// startManualRun starts the Job of a manual TaskRun from the CronJob's
// template, as `kubectl create job --from=cronjob/...` would, honouring the
// concurrency policy. The Job is owned by the CronJob so that the CronJob
// controller counts it as active and cleans it up with its history.
func (r *Reconciler) startManualRun(ctx context.Context, task *platformv1.ScheduleTask, cj *batchv1.CronJob, rs *runSet, tr *platformv1.TaskRun) error {
	log := ctrl.LoggerFrom(ctx).WithValues("taskRun", klog.KObj(tr))
	if err := r.adoptRun(ctx, task, rs, tr); err != nil {
		return err
	}

	// The TaskRun controller may have just ended the run (its task could
	// not run for the grace period) where the cache does not show it yet: a
	// live read keeps a run recorded as Failed from being started after all.
	live := &platformv1.TaskRun{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(tr), live); err != nil {
		return client.IgnoreNotFound(err)
	}
	if live.IsFinished() || stopping(live) || live.Spec.JobRef != nil {
		return nil
	}

	// Concurrency is judged on a live read: the cache may not show a Job
	// started a moment ago, and this reconcile is the only one for the task.
	active, err := r.activeJobs(ctx, task, cj)
	if err != nil {
		return err
	}
	jobName := runJobName(task, tr)
	// Another run is active unless the only active Job is this run's own
	// (started by an earlier pass that failed before recording it).
	othersActive := len(active) > 1 || len(active) == 1 && active[0].Name != jobName
	if othersActive && waitsItsTurn(tr) && concurrencyPolicy(&task.Spec) != platformv1.AllowConcurrent {
		// A backfill or catch-up run waits its turn rather than being refused, or
		// replacing the run in progress: the end of that run's Job wakes the
		// task, and the oldest waiting run starts then.
		log.V(1).Info("Run waits for the active run", "activeJob", active[0].Name)
		rs.backfillWaits = true
		return nil
	}
	if othersActive {
		switch concurrencyPolicy(&task.Spec) {
		case platformv1.ForbidConcurrent:
			log.Info("Refusing manual run: another run is active", "activeJob", active[0].Name)
			return r.stopRun(ctx, tr, platformv1.ReasonConcurrencyForbidden,
				fmt.Sprintf("Not started: run %s is active and concurrencyPolicy is Forbid", active[0].Name))
		case platformv1.ReplaceConcurrent:
			for _, j := range active {
				log.Info("Deleting active Job to replace it", "job", klog.KObj(j))
				if err := r.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
					return fmt.Errorf("delete Job %s: %w", j.Name, err)
				}
				r.Recorder.Eventf(task, j, corev1.EventTypeNormal, EventRunReplaced, "Replace",
					"Job %s deleted to start manual run %s (concurrencyPolicy Replace)", j.Name, tr.Name)
			}
		}
	}

	// The cache holds no pod template (stripCronJob): the Job is made from
	// the CronJob as stored, read past the cache.
	full := &batchv1.CronJob{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cj), full); err != nil {
		return fmt.Errorf("get CronJob %s: %w", cj.Name, err)
	}
	if full.UID != cj.UID {
		return fmt.Errorf("CronJob %s was replaced while starting run %s; retrying", cj.Name, tr.Name)
	}
	job := jobFromTemplate(full, jobName)
	r.applyRun(task, job, live)
	job.Annotations[platformv1.TaskRunUIDAnnotation] = string(tr.UID)
	if tr.Spec.Trigger == platformv1.TriggerCatchUp && tr.Spec.ScheduledTime != nil {
		// As on the CronJob's own Jobs: the fire time the Job stands for.
		job.Annotations[batchv1.CronJobScheduledTimestampAnnotation] = tr.Spec.ScheduledTime.UTC().Format(time.RFC3339)
	}
	tracing.Annotate(ctx, job.Annotations)
	err = r.Create(ctx, job)
	if apierrors.IsAlreadyExists(err) {
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return fmt.Errorf("get Job %s: %w", job.Name, err)
		}
		if job.Annotations[platformv1.TaskRunUIDAnnotation] != string(tr.UID) {
			return r.stopRun(ctx, tr, platformv1.ReasonJobNameTaken,
				fmt.Sprintf("Not started: a Job named %s exists and belongs to another run", job.Name))
		}
	} else if err != nil {
		return fmt.Errorf("create Job %s: %w", job.Name, err)
	} else {
		log.Info("Started manual run", "job", klog.KObj(job))
		// "Manual run ...", "Backfill run ...", "CatchUp run ...": the
		// schema defaults the trigger, so it is always set.
		r.Recorder.Eventf(task, tr, corev1.EventTypeNormal, EventRunStarted, "Start",
			"%s run %s started (Job %s)", tr.Spec.Trigger, tr.Name, job.Name)
	}
	rs.jobs = append(rs.jobs, job)
	return r.setJobRef(ctx, tr, job)
}

// applyRun makes the task's container in the Job of a run the operator
// starts (manual and backfill runs) the run's: the run's own args and env
// (admission let only a user who may create the Job directly set them), and
// PLATFORM_SCHEDULED_TIME, the time the run stands for. It signs the pod
// template that results, as the API server will store it: the Job is then
// provably the run of the task it claims to be (see recordJob).
func (r *Reconciler) applyRun(task *platformv1.ScheduleTask, job *batchv1.Job, tr *platformv1.TaskRun) {
	// The operator's value of the time wins over one the run sets.
	env := slices.DeleteFunc(slices.Clone(tr.Spec.Env), func(e corev1.EnvVar) bool { return e.Name == platformv1.ScheduledTimeEnv })
	env = append(env, corev1.EnvVar{
		Name: platformv1.ScheduledTimeEnv, Value: tr.DueTime().UTC().Format(time.RFC3339)})
	run := &platformv1.TaskRunSpec{Args: tr.Spec.Args, Env: env}
	for i := range job.Spec.Template.Spec.Containers {
		c := &job.Spec.Template.Spec.Containers[i]
		if c.Name == platformv1.TaskContainerName {
			c.Args = run.RunArgs(c.Args)
			c.Env = run.RunEnv(c.Env)
		}
	}
	job.Annotations[provenance.SignatureAnnotation] = r.Signer.Sign(task.UID,
		provenance.TemplateHash(provenance.Defaulted(&job.Spec.Template)))
}

// adoptRun gives a user's manual TaskRun the task's label, owner reference and
// a run number, so it is found, counted and garbage-collected with the task.
func (r *Reconciler) adoptRun(ctx context.Context, task *platformv1.ScheduleTask, rs *runSet, tr *platformv1.TaskRun) error {
	if metav1.IsControlledBy(tr, task) && tr.Labels[platformv1.ScheduleTaskLabel] == task.Name && tr.RunNumber() > 0 {
		return nil
	}
	patch := client.MergeFrom(tr.DeepCopy())
	if tr.Labels == nil {
		tr.Labels = map[string]string{}
	}
	tr.Labels[platformv1.ScheduleTaskLabel] = task.Name
	if tr.RunNumber() == 0 {
		if tr.Annotations == nil {
			tr.Annotations = map[string]string{}
		}
		tr.Annotations[platformv1.RunNumberAnnotation] = strconv.FormatInt(rs.nextNumber, 10)
		rs.nextNumber = min(rs.nextNumber, platformv1.MaxRunNumber) + 1
		// The reconcile that adopts a manual run is the one that starts it.
		tracing.Annotate(ctx, tr.Annotations)
	}
	if err := controllerutil.SetControllerReference(task, tr, r.Scheme()); err != nil {
		return err
	}
	if err := r.Patch(ctx, tr, patch); err != nil {
		return fmt.Errorf("adopt TaskRun %s: %w", tr.Name, err)
	}
	return nil
}

// setJobRef records on a manual TaskRun which Job carries it.
func (r *Reconciler) setJobRef(ctx context.Context, tr *platformv1.TaskRun, job *batchv1.Job) error {
	patch := client.MergeFrom(tr.DeepCopy())
	tr.Spec.JobRef = &platformv1.JobRef{Name: job.Name, UID: job.UID}
	if err := r.Patch(ctx, tr, patch); err != nil {
		return fmt.Errorf("set jobRef of TaskRun %s: %w", tr.Name, err)
	}
	return nil
}

// stopRun asks for a run to end, with a reason and a message, without
// writing its status: the TaskRun controller is the one writer of a run's
// status, its events and its metrics. The request is a pair of annotations,
// written with a patch, so a run slimmed by the cache is safe to pass.
func (r *Reconciler) stopRun(ctx context.Context, tr *platformv1.TaskRun, reason, message string) error {
	if tr.Annotations[platformv1.StopReasonAnnotation] == reason {
		return nil
	}
	patch := client.MergeFrom(tr.DeepCopy())
	if tr.Annotations == nil {
		tr.Annotations = map[string]string{}
	}
	tr.Annotations[platformv1.StopReasonAnnotation] = reason
	tr.Annotations[platformv1.StopMessageAnnotation] = message
	if err := r.Patch(ctx, tr, patch); err != nil {
		return fmt.Errorf("stop TaskRun %s: %w", tr.Name, err)
	}
	return nil
}

// stopping reports whether a run was asked to stop and not yet ended.
func stopping(tr *platformv1.TaskRun) bool {
	return tr.Annotations[platformv1.StopReasonAnnotation] != ""
}

// activeJobs lists, live, the task's Jobs of its CronJob that have not finished.
func (r *Reconciler) activeJobs(ctx context.Context, task *platformv1.ScheduleTask, cj *batchv1.CronJob) ([]*batchv1.Job, error) {
	var jobs batchv1.JobList
	if err := r.APIReader.List(ctx, &jobs, client.InNamespace(task.Namespace),
		client.MatchingLabels{platformv1.ScheduleTaskLabel: task.Name}); err != nil {
		return nil, fmt.Errorf("list Jobs: %w", err)
	}
	var active []*batchv1.Job
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if finished, _ := jobutil.Finished(j); metav1.IsControlledBy(j, cj) && j.DeletionTimestamp.IsZero() && !finished {
			active = append(active, j)
		}
	}
	return active, nil
}

// jobFromTemplate returns a new Job from the CronJob's template, owned by it.
func jobFromTemplate(cj *batchv1.CronJob, name string) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   cj.Namespace,
			Name:        name,
			Labels:      map[string]string{},
			Annotations: map[string]string{instantiateAnnotation: "manual"},
		},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	maps.Copy(job.Labels, cj.Spec.JobTemplate.Labels)
	maps.Copy(job.Annotations, cj.Spec.JobTemplate.Annotations)
	job.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))}
	return job
}

// manualJobName is the Job name of a manual run. The CronJob controller
// names its Jobs <cronjob>-<minutes since the epoch>, all digits after the
// last dash; a manual run's Job ends in -m<8 hex digits> instead, so no
// TaskRun name (<task>-29934076, say) can take the name of a scheduled Job
// to come. The hash is of the TaskRun's name and UID: deterministic for the
// run, so a retry finds the Job it made, and different for a run of the same
// name made again. 63 characters at most, as Jobs label their pods with
// their name.
func manualJobName(tr *platformv1.TaskRun) string {
	return truncateName(tr.Name, 53) + "-m" + shortHash(tr.Name+"/"+string(tr.UID))
}

// scheduledTime reads the time the CronJob controller scheduled a Job for.
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

// truncateName cuts s to at most n bytes, without a trailing dash or dot.
func truncateName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && (s[len(s)-1] == '-' || s[len(s)-1] == '.') {
		s = s[:len(s)-1]
	}
	return s
}

// shortHash is 8 hex digits of the SHA-256 of s.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
