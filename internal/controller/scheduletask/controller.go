// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package scheduletask holds the ScheduleTask reconciler: it keeps each
// task's CronJob right, records a TaskRun for every Job, starts manual runs,
// applies the run history limits and rebuilds the task's status.
package scheduletask

import (
	"context"
	"fmt"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/cacheblock"
	"github.com/example/platform-operator/internal/chain"
	"github.com/example/platform-operator/internal/expectations"
	"github.com/example/platform-operator/internal/predicates"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/reconciler"
	"github.com/example/platform-operator/internal/tracing"
)

// Finalizer lets the operator cancel a task's active runs before garbage
// collection removes them.
const Finalizer = platformv1.ScheduleTaskFinalizer

// ControllerName names the controller in logs, metrics and traces.
const ControllerName = "scheduletask"

// Reconciler reconciles ScheduleTasks.
type Reconciler struct {
	// Base's APIReader reads from the API server, bypassing the cache,
	// where a stale read could start a run twice.
	reconciler.Base
	// OtherCronJobs, when set, names the CronJobs the operator did not make
	// (cacheblock.NewOthersCache), so creating a task's CronJob needs no
	// read past the cache (apply.Applier.Others).
	OtherCronJobs client.Reader
	// Signer signs the pod template of each task's CronJob and checks the
	// signature of every Job before it is recorded as a run of the task.
	Signer *provenance.Signer

	// applier applies the task's CronJob, writing only on change.
	applier apply.Applier
	// deletedJobs remembers the Jobs whose runs retention deleted, and those
	// made from an implant (madeFromImplant), so that a stale cache still
	// showing one does not get it recorded or deleted again.
	deletedJobs expectations.Expectations[types.UID, struct{}]
	// unverifiedJobs remembers the Jobs already reported as failing the
	// proof of origin, so each is reported once.
	unverifiedJobs expectations.Expectations[types.UID, struct{}]
	// recordedRuns remembers the TaskRuns this manager has just recorded
	// from Jobs, until their create event arrives: the pass that recorded a
	// run counted it, so its creation need not wake the task again.
	recordedRuns expectations.Expectations[types.NamespacedName, struct{}]
	// learnedTemplates holds, by task UID, a learnedTemplate for each task
	// whose stored template provenance.Defaulted did not predict.
	learnedTemplates sync.Map
}

// +kubebuilder:rbac:groups=platform.example.com,resources=scheduletasks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=platform.example.com,resources=scheduletasks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=platform.example.com,resources=scheduletasks/finalizers,verbs=update
// +kubebuilder:rbac:groups=platform.example.com,resources=taskruns,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=platform.example.com,resources=taskruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete
// A manual run's Job is owned by the task's CronJob with blockOwnerDeletion,
// which an API server enforcing owner-reference permissions (OpenShift)
// allows only with update on the owner's finalizers.
// +kubebuilder:rbac:groups=batch,resources=cronjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one ScheduleTask's CronJob, TaskRuns and status in line
// with its spec and with what its Jobs did.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	task := &platformv1.ScheduleTask{}
	// The CronJob has the task's name.
	if res, ok, err := r.Read(ctx, req.NamespacedName, task, r.applier.Forget); !ok {
		return res, err
	}
	if !task.DeletionTimestamp.IsZero() {
		r.Writes.Forget(string(task.UID))
		r.applier.Forget(req.NamespacedName)
		return ctrl.Result{}, r.reconcileDelete(ctx, task)
	}
	if controllerutil.AddFinalizer(task, Finalizer) {
		if err := r.Update(ctx, task); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}
	return r.reconcileNormal(ctx, task)
}

// reconcileNormal observes a live task, plans the pass from the
// observation alone, acts on the plan, writes the status rebuilt from the
// pass, once, and then sends the pass's events (see emit).
func (r *Reconciler) reconcileNormal(ctx context.Context, task *platformv1.ScheduleTask) (ctrl.Result, error) {
	// Without the runs the streak is unknown, and so are Ready and the
	// CronJob's suspension: the stored status stands until the next pass.
	obs, err := r.observe(ctx, task)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := newPass(task, obs, r.Clock.Now(), r.Signer)
	if err := p.plan(r.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)
	for _, n := range p.notes {
		log.Info(n.msg, n.kv...)
	}
	err = r.act(ctx, p)
	serr := r.writeStatus(ctx, p, err == nil)
	r.emit(task, p, serr == nil)
	if serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: p.requeueAfter}, nil
}

// SetupWithManager registers the reconciler. It watches the task's CronJob
// (owned), its Jobs and its TaskRuns (both by the task label or name), so a
// fired schedule, a finished Job or a new manual TaskRun wake the task.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, o chain.Options) error {
	b := r.Controller(mgr, &platformv1.ScheduleTask{})
	r.applier = apply.Applier{Client: r.Client, APIReader: r.APIReader, Others: r.OtherCronJobs,
		FieldManager: FieldManager,
		// The cache holds no pod template (stripCronJob); planTemplateHold
		// checks it by its hash.
		Unchecked: [][]string{{"spec", "jobTemplate", "spec", "template"}},
		// A CronJob someone keeps changing is changed back with a backoff;
		// so is its job template, under a key of its own, with the CronJob
		// suspended meanwhile (planTemplateHold).
		Repairs: &apply.RepairBackoff{Clock: r.Clock}}
	r.deletedJobs.TTL, r.deletedJobs.Clock = deletedJobTTL, r.Clock
	r.unverifiedJobs.TTL, r.unverifiedJobs.Clock = unverifiedJobTTL, r.Clock
	r.recordedRuns.TTL, r.recordedRuns.Clock = recordedRunTTL, r.Clock
	if r.Signer == nil {
		return fmt.Errorf("the %s controller needs a Signer", ControllerName)
	}
	if err := cacheblock.WarmInformers(mgr.GetCache(),
		&platformv1.ScheduleTask{}, &batchv1.CronJob{}, &batchv1.Job{}, &platformv1.TaskRun{}); err != nil {
		return err
	}
	// Each watch passes only what can change the task's pass: under a burst
	// every needless pass queues ahead of the Jobs waiting to be recorded.
	b.Owns(&batchv1.CronJob{}, builder.WithPredicates(r.applier.NotOwnCreate(), predicate.Or(
		predicates.SpecOrMetadataChanged(), cronJobTimesChanged()))).
		// A new Job is a run to record: its pass goes ahead of the queue.
		Watches(&batchv1.Job{}, predicates.UrgentOnCreate(predicates.ToLabeled(platformv1.ScheduleTaskLabel)),
			builder.WithPredicates(predicates.SpecOrMetadataChanged(), predicates.NotLeavingTheCache())).
		Watches(&platformv1.TaskRun{}, predicates.UrgentOnCreate(taskForTaskRun),
			builder.WithPredicates(r.taskRunChangesTask()))
	return chain.Complete(b, mgr.GetCache(), o, ControllerName, r,
		tracing.FromAnnotation(mgr.GetCache(), func(t *platformv1.ScheduleTask) int64 { return t.Status.ObservedGeneration }))
}

// taskForTaskRun maps a TaskRun to the task it names; a user's manual
// TaskRun has neither label nor owner yet.
func taskForTaskRun(_ context.Context, obj client.Object) []reconcile.Request {
	tr, ok := obj.(*platformv1.TaskRun)
	if !ok || tr.Spec.ScheduleTaskName == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: tr.Namespace, Name: tr.Spec.ScheduleTaskName}}}
}

// cronJobTimesChanged passes the CronJob status updates that move the two
// times the task's status takes from it; the rest of its status (the active
// list) changes with every Job, whose own events wake the task.
func cronJobTimesChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*batchv1.CronJob)
		n, ok2 := e.ObjectNew.(*batchv1.CronJob)
		return !ok1 || !ok2 ||
			!o.Status.LastScheduleTime.Equal(n.Status.LastScheduleTime) ||
			!o.Status.LastSuccessfulTime.Equal(n.Status.LastSuccessfulTime)
	}}
}

// taskRunChangesTask passes the TaskRun events that change what a task's
// pass does or what its status says: a new manual run, a run's spec or
// metadata changing, a run reaching its end (phase, completion time) or
// starting when it has no scheduled time (it then dates lastScheduleTime),
// and deletions. The creation of a run this manager has just recorded from a
// Job is skipped, since the pass that recorded it counted it already, and so
// are the status writes of a running run (Pending to Running with a
// scheduled time, retries, conditions), which would each wake the task for
// nothing.
func (r *Reconciler) taskRunChangesTask() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool {
			return !r.recordedRuns.Take(client.ObjectKeyFromObject(e.Object), struct{}{})
		},
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*platformv1.TaskRun)
			n, ok2 := e.ObjectNew.(*platformv1.TaskRun)
			if !ok1 || !ok2 {
				return true
			}
			return predicates.SpecOrMetadataDiffers(o, n) ||
				o.IsFinished() != n.IsFinished() ||
				n.IsFinished() && (o.Status.Phase != n.Status.Phase || !o.Status.CompletionTime.Equal(n.Status.CompletionTime)) ||
				!runStart(o).Equal(runStart(n))
		},
	}
}
