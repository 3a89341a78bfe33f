// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package taskrun holds the TaskRun reconciler: it follows each run's Job and
// pods and records the run's phase, times, attempts, reason and exit code.
package taskrun

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cacheblock"
	"github.com/example/platform-operator/internal/chain"
	"github.com/example/platform-operator/internal/index"
	"github.com/example/platform-operator/internal/objstatus"
	"github.com/example/platform-operator/internal/predicates"
	"github.com/example/platform-operator/internal/reconciler"
	"github.com/example/platform-operator/internal/tracing"
)

// controlledByCronJob reports whether a CronJob controls job: the cache
// keeps only such Jobs whole (see CacheBlock of the scheduletask package).
func controlledByCronJob(job *batchv1.Job) bool {
	ref := metav1.GetControllerOf(job)
	return ref != nil && ref.Kind == "CronJob" && ref.APIVersion == batchv1.SchemeGroupVersion.String()
}

// ControllerName names the controller in logs, metrics and traces.
const ControllerName = "taskrun"

// Reconciler reconciles TaskRuns.
type Reconciler struct {
	// Base's APIReader confirms, past the cache, that a Job is really gone
	// before a run is declared lost.
	reconciler.Base
	// ManualRunGrace is how long a manual run waits for a task that does not
	// exist or cannot run before it ends Failed (orphan.go);
	// DefaultManualRunGrace when zero.
	ManualRunGrace time.Duration
}

// +kubebuilder:rbac:groups=platform.example.com,resources=taskruns,verbs=get;list;watch
// +kubebuilder:rbac:groups=platform.example.com,resources=taskruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=platform.example.com,resources=scheduletasks,verbs=get
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile rebuilds one TaskRun's status from its Job and pods.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tr := &platformv1.TaskRun{}
	if res, ok, err := r.Read(ctx, req.NamespacedName, tr, nil); !ok {
		return res, err
	}
	// A finished run is a record: nothing changes it any more, not even a
	// Job that the CronJob's history limit deletes later. This return is
	// also what keeps the cache's slimmed copies of finished runs from ever
	// being written back (see stripFinishedRun). Its Job is marked so that
	// the cache lets it go.
	if tr.IsFinished() {
		r.Writes.Forget(string(tr.UID))
		return ctrl.Result{}, r.markRecorded(ctx, tr)
	}
	if !tr.DeletionTimestamp.IsZero() {
		r.Writes.Forget(string(tr.UID))
		return ctrl.Result{}, nil
	}
	obs, err := r.observe(ctx, tr)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.checkOrphan(ctx, tr, obs); err != nil {
		return ctrl.Result{}, err
	}
	var res ctrl.Result
	res.RequeueAfter = obs.orphanRecheck
	if obs.uncached {
		// The Job is not in the cache (it lacks the managed-by label, made
		// before the operator set it): no event will tell of its progress.
		res.RequeueAfter = uncachedJobPoll
	}
	if err := r.writeStatus(ctx, tr, buildStatus(tr, obs, r.Clock.Now())); err != nil {
		return ctrl.Result{}, err
	}
	if tr.IsFinished() {
		// The echo of the status write that finished the run is not
		// delivered (NotOwnEcho), so the Job is marked in this pass.
		return ctrl.Result{}, r.markRecorded(ctx, tr)
	}
	return res, nil
}

// uncachedJobPoll is how often a run whose Job the cache does not show is
// looked at again.
const uncachedJobPoll = 30 * time.Second

// observe reads the run's Job and its pods. A Job that is missing from the
// cache is looked up on the API server before it is taken as deleted.
func (r *Reconciler) observe(ctx context.Context, tr *platformv1.TaskRun) (*observation, error) {
	obs := &observation{}
	ref := tr.Spec.JobRef
	if ref == nil {
		return obs, nil
	}
	job := &batchv1.Job{}
	key := types.NamespacedName{Namespace: tr.Namespace, Name: ref.Name}
	err := r.Get(ctx, key, job)
	if err == nil && !controlledByCronJob(job) {
		// The cache keeps a stub of a Job no CronJob controls (one orphaned
		// when its CronJob was deleted so, or a tenant's of the same name):
		// its status is on the API server only.
		err = r.APIReader.Get(ctx, key, job)
		obs.uncached = err == nil
	}
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, job)
		obs.uncached = err == nil
	}
	switch {
	case apierrors.IsNotFound(err):
		obs.jobGone = true
		return obs, nil
	case err != nil:
		return nil, fmt.Errorf("get Job %s: %w", ref.Name, err)
	case job.UID != ref.UID:
		obs.jobGone = true // a Job of the same name, but not this run's
		return obs, nil
	}
	obs.job = job

	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(tr.Namespace),
		client.MatchingFields{platformv1.PodJobUIDIndex: string(job.UID)}); err != nil {
		return nil, fmt.Errorf("list pods of Job %s: %w", job.Name, err)
	}
	for i := range pods.Items {
		obs.pods = append(obs.pods, &pods.Items[i])
	}
	return obs, nil
}

// writeStatus writes the status if it changed, then records the transition.
func (r *Reconciler) writeStatus(ctx context.Context, tr *platformv1.TaskRun, st platformv1.TaskRunStatus) error {
	from := tr.Status.Phase
	wrote, err := objstatus.Write(ctx, r.Client, tr, &tr.Status, st)
	if err != nil || !wrote || from == st.Phase {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Run changed phase", "taskRun", klog.KObj(tr), "from", from, "to", st.Phase, "reason", st.Reason)
	r.recordTransition(ctx, tr)
	if from == "" || from == platformv1.TaskRunPending {
		runStarted(tr)
	}
	if tr.IsFinished() {
		runFinished(tr)
	}
	return nil
}

// Reasons of the events about a run's phase.
const (
	EventRunRunning   = "RunRunning"
	EventRunSucceeded = "RunSucceeded"
	EventRunFailed    = "RunFailed"
	// EventRunForbidden: a manual run was not started.
	EventRunForbidden = "RunForbidden"
	// EventRunCancelled: a run was stopped before its Job finished.
	EventRunCancelled = "RunCancelled"
)

// recordTransition sends the event of a phase change, on the TaskRun and on
// its ScheduleTask, so `kubectl describe` of either tells the story.
func (r *Reconciler) recordTransition(ctx context.Context, tr *platformv1.TaskRun) {
	reason, eventType, note := "", corev1.EventTypeNormal, ""
	switch tr.Status.Phase {
	case platformv1.TaskRunRunning:
		reason, note = EventRunRunning, fmt.Sprintf("Run %s is running (pod %s)", tr.Name, tr.Status.PodName)
	case platformv1.TaskRunSucceeded:
		reason, note = EventRunSucceeded, fmt.Sprintf("Run %s succeeded after %s", tr.Name, tr.Status.Duration)
	case platformv1.TaskRunFailed:
		reason, eventType = EventRunFailed, corev1.EventTypeWarning
		switch tr.Status.Reason {
		case platformv1.ReasonConcurrencyForbidden, platformv1.ReasonJobNameTaken:
			reason = EventRunForbidden
		case platformv1.ReasonCancelled:
			reason = EventRunCancelled
		}
		note = fmt.Sprintf("Run %s failed: %s: %s", tr.Name, tr.Status.Reason, tr.Status.Message)
	default:
		return
	}
	r.Recorder.Eventf(tr, nil, eventType, reason, string(tr.Status.Phase), "%s", note)
	task := &platformv1.ScheduleTask{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: tr.Namespace, Name: tr.Spec.ScheduleTaskName}, task); err == nil {
		r.Recorder.Eventf(task, tr, eventType, reason, string(tr.Status.Phase), "%s", note)
	}
}

// SetupWithManager registers the reconciler, woken by its TaskRuns and by the
// Jobs and pods that carry them.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, o chain.Options) error {
	b := r.Controller(mgr, &platformv1.TaskRun{})
	if err := cacheblock.WarmInformers(mgr.GetCache(), &platformv1.TaskRun{}, &batchv1.Job{}, &corev1.Pod{}); err != nil {
		return err
	}
	byJob := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return runOfJob(ctx, mgr.GetClient(), obj.GetNamespace(), obj.GetName(), string(obj.GetUID()),
			obj.GetLabels()[platformv1.ScheduleTaskLabel])
	})
	byPod := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		if index.ControllingJobUID(obj) == "" {
			return nil
		}
		ref := metav1.GetControllerOf(obj)
		return runOfJob(ctx, mgr.GetClient(), obj.GetNamespace(), ref.Name, string(ref.UID),
			obj.GetLabels()[platformv1.ScheduleTaskLabel])
	})
	b.
		// A Job leaving the cache was just marked recorded by this very
		// controller: its run is finished and has nothing more to do.
		Watches(&batchv1.Job{}, byJob, builder.WithPredicates(predicates.NotLeavingTheCache())).
		Watches(&corev1.Pod{}, byPod)
	return chain.Complete(b, mgr.GetCache(), o, ControllerName, r, tracing.FromAnnotation[platformv1.TaskRun](mgr.GetCache(), nil))
}

// runOfJob finds the TaskRun that carries the Job jobName (UID jobUID) of
// the task taskName, for a watch event of the Job or of one of its pods.
//
// There is no index of runs by Job UID: it would hold an entry per run,
// twice (controller-runtime indexes each value cluster-wide and per
// namespace), and was the largest index of the cache. A scheduled run is
// named as its Job, so it is one lookup; a manual run's Job is named
// <run>-m<hash>, and is found among the runs of its task, read without
// copies as nothing here changes them.
func runOfJob(ctx context.Context, c client.Reader, namespace, jobName, jobUID, taskName string) []reconcile.Request {
	carries := func(tr *platformv1.TaskRun) bool {
		return tr.Spec.JobRef != nil && string(tr.Spec.JobRef.UID) == jobUID
	}
	named := &platformv1.TaskRun{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: jobName}, named); err == nil && carries(named) {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(named)}}
	}
	if taskName == "" {
		return nil
	}
	var runs platformv1.TaskRunList
	if err := c.List(ctx, &runs, client.InNamespace(namespace), client.MatchingFields{platformv1.TaskRunTaskNameIndex: taskName},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	for i := range runs.Items {
		if carries(&runs.Items[i]) {
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(&runs.Items[i])}}
		}
	}
	return nil
}
