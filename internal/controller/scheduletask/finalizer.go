// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// reconcileDelete asks for the task's active runs to end as Cancelled (the
// TaskRun controller writes their status) and releases the task. It waits
// for nothing: the garbage collector then deletes the CronJob, the Jobs
// (stopping their pods) and the TaskRuns, whatever state they are in, so a
// Job that cannot be reached never keeps the task in Terminating.
//
// A delete with propagation Orphan keeps the runs: see orphanRuns.
func (r *Reconciler) reconcileDelete(ctx context.Context, task *platformv1.ScheduleTask) error {
	if !controllerutil.ContainsFinalizer(task, Finalizer) {
		return nil
	}
	var trs platformv1.TaskRunList
	if err := r.List(ctx, &trs, client.InNamespace(task.Namespace),
		client.MatchingFields{platformv1.TaskRunTaskNameIndex: task.Name}); err != nil {
		return fmt.Errorf("list TaskRuns: %w", err)
	}
	for i := range trs.Items {
		tr := &trs.Items[i]
		if tr.IsFinished() || tr.Spec.JobRef == nil {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Cancelling run of deleted task", "taskRun", klog.KObj(tr))
		err := r.stopRun(ctx, tr, platformv1.ReasonCancelled,
			fmt.Sprintf("Cancelled: ScheduleTask %s is being deleted", task.Name))
		if client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	if controllerutil.ContainsFinalizer(task, metav1.FinalizerOrphanDependents) {
		if err := r.orphanRuns(ctx, task); err != nil {
			return err
		}
	}
	// A merge patch sends the whole finalizer list: the version it was
	// computed from must be the stored one, or it could put back a
	// finalizer the garbage collector has just removed.
	patch := client.MergeFromWithOptions(task.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(task, Finalizer)
	if err := r.Patch(ctx, task, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}

// orphanRuns removes the task's owner reference from each of its runs when
// the task is deleted with propagation Orphan. The garbage collector does the
// same, but only for the dependents its graph already holds: a run adopted a
// moment before the delete can reach the graph after the task's orphaning,
// and would then be deleted as the dependent of a vanished owner. The runs
// are listed live (a delete is rare) so that such a run is not missed.
func (r *Reconciler) orphanRuns(ctx context.Context, task *platformv1.ScheduleTask) error {
	var trs platformv1.TaskRunList
	if err := r.APIReader.List(ctx, &trs, client.InNamespace(task.Namespace),
		client.MatchingLabels{platformv1.ScheduleTaskLabel: task.Name}); err != nil {
		return fmt.Errorf("list TaskRuns to orphan: %w", err)
	}
	for i := range trs.Items {
		tr := &trs.Items[i]
		kept := slices.DeleteFunc(slices.Clone(tr.OwnerReferences),
			func(ref metav1.OwnerReference) bool { return ref.UID == task.UID })
		if len(kept) == len(tr.OwnerReferences) {
			continue
		}
		patch := client.MergeFromWithOptions(tr.DeepCopy(), client.MergeFromWithOptimisticLock{})
		tr.OwnerReferences = kept
		if err := r.Patch(ctx, tr, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("orphan TaskRun %s: %w", tr.Name, err)
		}
	}
	return nil
}
