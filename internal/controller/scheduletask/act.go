// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/tracing"
)

// act applies the pass's CronJob and, once it stands, reports the Jobs
// that failed the proof of origin (deleting those made from an implant) and takes the pass's steps in order,
// stopping at the first that fails: the next pass plans again from what is
// then observed. Each step done is counted in the runs the status is
// rebuilt from (pass.done).
func (r *Reconciler) act(ctx context.Context, p *pass) error {
	if err := r.applyCronJob(ctx, p); err != nil || p.cronJob == nil {
		// Without the CronJob there is no Job to record or start; the
		// CronJob's step has reported why.
		return err
	}
	for _, u := range p.unverified {
		if err := r.reportUnverifiedJob(ctx, p, u); err != nil {
			return err
		}
	}
	for _, s := range p.steps {
		if err := r.take(ctx, p, s); err != nil {
			return err
		}
		p.done(s)
	}
	return nil
}

// take does one step.
func (r *Reconciler) take(ctx context.Context, p *pass, s *step) error {
	log := ctrl.LoggerFrom(ctx)
	switch s.kind {
	case stepRecord:
		return r.record(ctx, p, s)
	case stepCatchUp, stepRunNow:
		// The run links to the pass that decided it.
		tracing.Annotate(ctx, s.run.Annotations)
		if err := r.Create(ctx, s.run); apierrors.IsAlreadyExists(err) {
			s.run = nil // made by an earlier pass; the cache will show it
			return nil
		} else if err != nil {
			return fmt.Errorf("create TaskRun %s: %w", s.run.Name, err)
		}
		log.Info("Created run", "taskRun", klog.KObj(s.run), "trigger", s.run.Spec.Trigger)
	case stepAdopt:
		if i := runIndex(p.runs, s.run.Name); i < 0 || p.runs[i].RunNumber() <= 0 {
			// The reconcile that numbers a manual run is the one that starts it.
			tracing.Annotate(ctx, s.run.Annotations)
		}
		return r.patchRun(ctx, p, s, "adopt", func(tr *platformv1.TaskRun) {
			tr.Labels, tr.Annotations, tr.OwnerReferences = s.run.Labels, s.run.Annotations, s.run.OwnerReferences
		})
	case stepLink:
		return r.patchRun(ctx, p, s, "set jobRef of", func(tr *platformv1.TaskRun) { tr.Spec.JobRef = s.run.Spec.JobRef })
	case stepWait:
		log.V(1).Info("Run waits for the active run", "taskRun", klog.KObj(s.run), "activeJob", s.waitsFor)
	case stepRefuse:
		log.Info("Refusing manual run: another run is active", "taskRun", klog.KObj(s.run), "activeJob", s.waitsFor)
		return r.patchRun(ctx, p, s, "stop", stopAs(s.run))
	case stepStart:
		return r.start(ctx, p, s)
	case stepExpire:
		return r.expire(ctx, s.run)
	}
	return nil
}

// patchRun writes the change of a step to its run with a merge patch over
// the run as the pass last had it, and keeps the API server's answer.
func (r *Reconciler) patchRun(ctx context.Context, p *pass, s *step, what string, change func(*platformv1.TaskRun)) error {
	base := s.run
	if i := runIndex(p.runs, s.run.Name); i >= 0 {
		base = p.runs[i]
	}
	tr := base.DeepCopy()
	change(tr)
	if err := r.Patch(ctx, tr, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("%s TaskRun %s: %w", what, tr.Name, err)
	}
	s.run = tr
	return nil
}

// stopAs copies the stop request planned on run (refused) onto a run.
func stopAs(run *platformv1.TaskRun) func(*platformv1.TaskRun) {
	return func(tr *platformv1.TaskRun) {
		if tr.Annotations == nil {
			tr.Annotations = map[string]string{}
		}
		tr.Annotations[platformv1.StopReasonAnnotation] = run.Annotations[platformv1.StopReasonAnnotation]
		tr.Annotations[platformv1.StopMessageAnnotation] = run.Annotations[platformv1.StopMessageAnnotation]
	}
}

// record creates the TaskRun of a Job of the task's CronJob.
func (r *Reconciler) record(ctx context.Context, p *pass, s *step) error {
	tr, job := s.run, s.job
	if tr.Annotations[tracing.TraceParentAnnotation] == "" {
		// A Job made while tracing was off links its run to this pass.
		tracing.Annotate(ctx, tr.Annotations)
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
			s.run = &existing
			return nil
		}
		// The name is taken by a run of another Job (a user's manual run, or a
		// Job of the same name that was deleted): derive a second name from
		// the UID, still deterministic for this Job.
		tr.Name = truncateName(job.Name, 57) + "-" + string(job.UID)[:5]
		tr.ResourceVersion = ""
		err = r.createRecord(ctx, tr)
		if apierrors.IsAlreadyExists(err) {
			s.run = nil
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("create TaskRun for Job %s: %w", job.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Recorded run", "taskRun", klog.KObj(tr), "job", klog.KObj(job))
	p.announce(s)
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

// start deletes the active Jobs the run replaces, creates the run's Job,
// owned by the CronJob as one `kubectl create job --from=cronjob/...`
// makes (so the CronJob controller counts it as active and cleans it up
// with its history), and points the run at it.
func (r *Reconciler) start(ctx context.Context, p *pass, s *step) error {
	log := ctrl.LoggerFrom(ctx).WithValues("taskRun", klog.KObj(s.run))
	for _, j := range s.replace {
		log.Info("Deleting active Job to replace it", "job", klog.KObj(j))
		if err := r.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete Job %s: %w", j.Name, err)
		}
	}
	job := s.job.DeepCopy()
	job.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(p.cronJob, batchv1.SchemeGroupVersion.WithKind("CronJob"))}
	tracing.Annotate(ctx, job.Annotations)
	err := r.Create(ctx, job)
	switch {
	case apierrors.IsAlreadyExists(err):
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return fmt.Errorf("get Job %s: %w", job.Name, err)
		}
		if job.Annotations[platformv1.TaskRunUIDAnnotation] != string(s.run.UID) {
			planned := refused(s.run, platformv1.ReasonJobNameTaken,
				fmt.Sprintf("Not started: a Job named %s exists and belongs to another run", job.Name))
			if planned == nil {
				return nil
			}
			return r.patchRun(ctx, p, s, "stop", stopAs(planned))
		}
	case err != nil:
		return fmt.Errorf("create Job %s: %w", job.Name, err)
	default:
		log.Info("Started manual run", "job", klog.KObj(job))
		p.announce(s)
	}
	return r.patchRun(ctx, p, s, "set jobRef of", func(tr *platformv1.TaskRun) {
		tr.Spec.JobRef = &platformv1.JobRef{Name: job.Name, UID: job.UID}
	})
}

// reportUnverifiedJob sends a Warning event on the task about a Job that
// failed the proof of origin, once per Job, and deletes the Job when it was
// made from an implant (madeFromImplant), with its pods.
func (r *Reconciler) reportUnverifiedJob(ctx context.Context, p *pass, u unverifiedJob) error {
	log := ctrl.LoggerFrom(ctx).WithValues("job", klog.KObj(u.job), "problem", u.problem)
	if !u.delete {
		r.unverifiedJobs.Remember(u.job.UID, struct{}{})
		log.Info("Not recording a Job that claims the task without proof")
		p.event(u.job, corev1.EventTypeWarning, EventUnverifiedJob, "Record",
			"Job %s is controlled by CronJob %s but is not recorded as a run: %s", u.job.Name, p.task.Name, u.problem)
		return nil
	}
	log.Info("Deleting a Job made from a job template someone else changed")
	err := r.Delete(ctx, u.job, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &u.job.UID})
	if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete Job %s: %w", u.job.Name, err)
	}
	r.deletedJobs.Remember(u.job.UID, struct{}{})
	r.unverifiedJobs.Remember(u.job.UID, struct{}{})
	if err == nil {
		p.event(u.job, corev1.EventTypeWarning, EventUnverifiedJob, "Delete",
			"Deleted Job %s of CronJob %s, not recorded as a run: %s; it was made while the job template held "+
				"someone else's change", u.job.Name, p.task.Name, u.problem)
	}
	return nil
}
