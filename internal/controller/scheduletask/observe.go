// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/jobutil"
)

// observation is what a pass read before it acted: the task's CronJob, runs
// and Jobs from the cache, what the reconciler remembers of earlier passes,
// and, when a run may be started, the few things a stale cache must not
// decide, read from the API server. plan takes it as it is and changes
// nothing in it.
type observation struct {
	// cronJob is the task's CronJob in the cache; nil when there is none
	// or the task does not control it.
	cronJob *batchv1.CronJob
	// runs are the TaskRuns naming the task; jobs the Jobs carrying its
	// label, oldest first.
	runs []*platformv1.TaskRun
	jobs []*batchv1.Job
	// deleted are the Jobs among jobs whose runs retention deleted: a
	// stale cache still shows them, and they are not to be recorded again.
	deleted map[types.UID]bool
	// reported are the Jobs among jobs already reported as failing the
	// proof of origin (each is reported once).
	reported map[types.UID]bool
	// learned is the template the API server was seen to store for the
	// task's rendering, when it is not the predicted one (learnTemplate).
	learned *learnedTemplate
	// templateWait is how long the next repair of the CronJob's job
	// template is held back (see planTemplateHold); zero when it may go now.
	templateWait time.Duration

	// live are the manual runs that may start this pass as the API server
	// has them, by name; a run missing from it was deleted. The TaskRun
	// controller may have just ended one where the cache does not show it
	// yet: a run recorded as Failed is not started after all.
	live map[string]*platformv1.TaskRun
	// active are the task's unfinished Jobs as the API server has them:
	// concurrency is judged on them, since the cache may not show a Job
	// started a moment ago. Read only with live.
	active []*batchv1.Job
}

// observe reads what the pass needs. Nothing in it is written.
func (r *Reconciler) observe(ctx context.Context, task *platformv1.ScheduleTask) (*observation, error) {
	obs := &observation{deleted: map[types.UID]bool{}, reported: map[types.UID]bool{}}
	cj := &batchv1.CronJob{}
	switch err := r.Get(ctx, client.ObjectKeyFromObject(task), cj); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("get CronJob: %w", err)
	case metav1.IsControlledBy(cj, task):
		obs.cronJob = cj
	}
	var trs platformv1.TaskRunList
	if err := r.List(ctx, &trs, client.InNamespace(task.Namespace),
		client.MatchingFields{platformv1.TaskRunTaskNameIndex: task.Name}); err != nil {
		return nil, fmt.Errorf("list TaskRuns: %w", err)
	}
	for i := range trs.Items {
		obs.runs = append(obs.runs, &trs.Items[i])
	}
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(task.Namespace),
		client.MatchingFields{platformv1.JobTaskIndex: task.Name}); err != nil {
		return nil, fmt.Errorf("list Jobs: %w", err)
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		obs.jobs = append(obs.jobs, j)
		if r.deletedJobs.Has(j.UID, struct{}{}) {
			obs.deleted[j.UID] = true
		}
		if r.unverifiedJobs.Has(j.UID, struct{}{}) {
			obs.reported[j.UID] = true
		}
	}
	sortJobs(obs.jobs)
	if l, ok := r.learnedTemplates.Load(task.UID); ok {
		lt := l.(learnedTemplate)
		obs.learned = &lt
	}
	obs.templateWait = r.applier.RepairWait(jobTemplateKind, client.ObjectKeyFromObject(task))
	return obs, r.observeLive(ctx, task, obs)
}

// observeLive reads, past the cache, the manual runs that may start this
// pass and the task's active Jobs, when there is such a run.
func (r *Reconciler) observeLive(ctx context.Context, task *platformv1.ScheduleTask, obs *observation) error {
	for _, tr := range obs.runs {
		if !mayStart(task, tr) {
			continue
		}
		if obs.live == nil {
			obs.live = map[string]*platformv1.TaskRun{}
		}
		live := &platformv1.TaskRun{}
		switch err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(tr), live); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("get TaskRun %s: %w", tr.Name, err)
		default:
			obs.live[tr.Name] = live
		}
	}
	if obs.live == nil {
		return nil
	}
	var jobs batchv1.JobList
	if err := r.APIReader.List(ctx, &jobs, client.InNamespace(task.Namespace),
		client.MatchingLabels{platformv1.ScheduleTaskLabel: task.Name}); err != nil {
		return fmt.Errorf("list Jobs: %w", err)
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if finished, _ := jobutil.Finished(j); ofTaskCronJob(task, j) && j.DeletionTimestamp.IsZero() && !finished {
			obs.active = append(obs.active, j)
		}
	}
	sortJobs(obs.active)
	return nil
}

// mayStart reports whether a run, as the cache shows it, is one the
// operator is to start: a manual, backfill or catch-up run without a Job,
// neither ended nor asked to end, that no other object controls.
func mayStart(task *platformv1.ScheduleTask, tr *platformv1.TaskRun) bool {
	return tr.Spec.JobRef == nil && !tr.IsFinished() && !stopping(tr) && tr.DeletionTimestamp.IsZero() &&
		!foreignControlled(task, tr)
}

// ofTaskCronJob reports whether the task's CronJob, by name, controls a
// Job. The name and not the UID: a CronJob created a moment ago may not be
// in the cache yet, and a Job that claims it falsely only ever counts as
// one more active run, which makes concurrency stricter, never looser.
func ofTaskCronJob(task *platformv1.ScheduleTask, j *batchv1.Job) bool {
	ref := metav1.GetControllerOf(j)
	return ref != nil && ref.Kind == "CronJob" && ref.Name == task.Name
}

// sortJobs orders Jobs oldest first, so run numbers follow the order of
// the runs.
func sortJobs(jobs []*batchv1.Job) {
	slices.SortFunc(jobs, func(a, b *batchv1.Job) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}
