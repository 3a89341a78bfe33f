// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// markRecorded puts platformv1.RecordedLabel on the Job of a finished run,
// which takes the Job out of the manager's cache: the record is final (see
// Reconcile), so nothing reads the Job again, and a cluster that keeps many
// finished Jobs in its CronJobs' histories no longer costs the manager their
// memory.
//
// It runs on every pass of a finished run, so a run finished by an earlier
// version of the operator, or a label lost to a crash between the status
// write and this one, is marked on the next event. A Job that the cache no
// longer shows is marked already (or gone) and costs no request; the cache
// answers only for Jobs without the label.
func (r *Reconciler) markRecorded(ctx context.Context, tr *platformv1.TaskRun) error {
	ref := tr.Spec.JobRef
	if ref == nil {
		return nil
	}
	job := &batchv1.Job{}
	err := r.Get(ctx, types.NamespacedName{Namespace: tr.Namespace, Name: ref.Name}, job)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get Job %s: %w", ref.Name, err)
	}
	if job.UID != ref.UID || !job.DeletionTimestamp.IsZero() || job.Labels[platformv1.RecordedLabel] != "" {
		return nil
	}
	// A merge patch of the one label, with the UID as a precondition: it
	// touches nothing the Job controller writes, so it needs no
	// resourceVersion and cannot conflict with the Job's progress, and it
	// never labels a newer Job of the same name.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":    ref.UID,
		"labels": map[string]string{platformv1.RecordedLabel: "true"},
	}})
	if err != nil {
		return err
	}
	target := &batchv1.Job{}
	target.Namespace, target.Name = tr.Namespace, ref.Name
	err = r.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or another Job of that name: nothing of this run to mark
	}
	if err != nil {
		return fmt.Errorf("mark Job %s recorded: %w", ref.Name, err)
	}
	return nil
}
