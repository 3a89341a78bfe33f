// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// expire deletes a run beyond the history limits. The Job goes first, and
// is remembered as gone: were the TaskRun deleted while its Job still
// showed in the cache, the next pass would record the Job again as a new
// run.
func (r *Reconciler) expire(ctx context.Context, tr *platformv1.TaskRun) error {
	ctrl.LoggerFrom(ctx).V(1).Info("Deleting TaskRun beyond the history limit", "taskRun", klog.KObj(tr))
	if ref := tr.Spec.JobRef; ref != nil {
		r.deletedJobs.Remember(ref.UID, struct{}{})
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: tr.Namespace, Name: ref.Name}}
		err := r.Delete(ctx, job, client.Preconditions{UID: &ref.UID},
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete Job %s: %w", ref.Name, err)
		}
	}
	if err := r.Delete(ctx, tr); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete TaskRun %s: %w", tr.Name, err)
	}
	return nil
}

// expiredRuns returns the finished runs beyond the newest keepSucceeded
// succeeded and keepFailed failed ones.
func expiredRuns(runs []*platformv1.TaskRun, keepSucceeded, keepFailed int) []*platformv1.TaskRun {
	var succeeded, failed []*platformv1.TaskRun
	for _, tr := range runs {
		if !tr.DeletionTimestamp.IsZero() {
			continue
		}
		switch tr.Status.Phase {
		case platformv1.TaskRunSucceeded:
			succeeded = append(succeeded, tr)
		case platformv1.TaskRunFailed:
			failed = append(failed, tr)
		}
	}
	newestFirst := func(a, b *platformv1.TaskRun) int {
		if newer(a, b) {
			return -1
		}
		return 1
	}
	slices.SortFunc(succeeded, newestFirst)
	slices.SortFunc(failed, newestFirst)
	var out []*platformv1.TaskRun
	if len(succeeded) > keepSucceeded {
		out = append(out, succeeded[keepSucceeded:]...)
	}
	if len(failed) > keepFailed {
		out = append(out, failed[keepFailed:]...)
	}
	return out
}

// deletedJobTTL is how long a deleted Job is remembered: far longer than
// any cache takes to see a delete. After a restart the cache starts fresh and
// holds no deleted Job, so losing the memory then is harmless.
const deletedJobTTL = 10 * time.Minute

// recordedRunTTL is how long a recorded run waits for its create event
// before it is forgotten (a watch that relisted never delivers it).
const recordedRunTTL = 10 * time.Minute
