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

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// reconcileDelete asks for the task's active runs to end as Cancelled (the
// TaskRun controller writes their status) and releases the task. It waits for nothing: the garbage collector then deletes the CronJob,
// the Jobs (stopping their pods) and the TaskRuns, whatever state they are in,
// so a Job that cannot be reached never keeps the task in Terminating.
func (r *Reconciler) reconcileDelete(ctx context.Context, task *platformv1.ScheduleTask) error {
	if !controllerutil.ContainsFinalizer(task, Finalizer) {
		return nil
	}
	var trs platformv1.TaskRunList
	if err := r.List(ctx, &trs, client.InNamespace(task.Namespace),
		client.MatchingFields{taskRunTaskNameField: task.Name}); err != nil {
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
	patch := client.MergeFrom(task.DeepCopy())
	controllerutil.RemoveFinalizer(task, Finalizer)
	if err := r.Patch(ctx, task, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}
