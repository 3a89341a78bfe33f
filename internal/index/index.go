// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package index

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Register adds every field index of the manager's cache. Call it once,
// before any controller is set up: a controller may read any index, its
// own kind's or another's, and none depends on another's setup for it.
func Register(ctx context.Context, indexer client.FieldIndexer) error {
	for _, ix := range []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&platformv1.TaskRun{}, platformv1.TaskRunTaskNameIndex, func(obj client.Object) []string {
			return []string{obj.(*platformv1.TaskRun).Spec.ScheduleTaskName}
		}},
		{&batchv1.Job{}, platformv1.JobTaskIndex, LabelIndex(platformv1.ScheduleTaskLabel)},
		{&corev1.Pod{}, platformv1.PodJobUIDIndex, func(obj client.Object) []string {
			if uid := ControllingJobUID(obj); uid != "" {
				return []string{uid}
			}
			return nil
		}},
		{&corev1.Pod{}, platformv1.PodAppIndex, LabelIndex(platformv1.AppNameLabel)},
		{ReplicaSetMetadata(), platformv1.ReplicaSetAppIndex, LabelIndex(platformv1.AppNameLabel)},
	} {
		if err := indexer.IndexField(ctx, ix.obj, ix.field, ix.fn); err != nil {
			return fmt.Errorf("index %T by %s: %w", ix.obj, ix.field, err)
		}
	}
	return nil
}

// ReplicaSetMetadata is the form in which the manager's cache holds,
// indexes and lists ReplicaSets: their metadata alone, watched through the
// metadata API. A pass reads only who controls a ReplicaSet, and an empty
// ReplicaSet struct is over a kilobyte where its metadata is a fifth of
// that: every labelled ReplicaSet, a tenant's forged one included, costs
// the cache that much less. Read ReplicaSets as a
// metav1.PartialObjectMetadataList of this kind; a typed read fails, the
// cache having no informer for it.
func ReplicaSetMetadata() *metav1.PartialObjectMetadata {
	rs := &metav1.PartialObjectMetadata{}
	rs.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	return rs
}

// LabelIndex indexes objects by the value of one label, for a cache field
// index: a label selector on a cached List scans every object of the
// namespace, an index finds the few that match at once.
func LabelIndex(key string) client.IndexerFunc {
	return func(obj client.Object) []string {
		if v, ok := obj.GetLabels()[key]; ok {
			return []string{v}
		}
		return nil
	}
}

// ControllingJobUID returns the UID of the Job that controls obj, "" when
// no Job does.
func ControllingJobUID(obj client.Object) string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "Job" || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
		return ""
	}
	return string(ref.UID)
}
