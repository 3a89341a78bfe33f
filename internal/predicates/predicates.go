// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package predicates

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// SpecOrMetadataChanged passes creates, deletes and the updates that change
// an object's generation (its spec) or the metadata a reconciler acts on:
// labels, annotations, owner references, finalizers and the deletion
// timestamp. It drops the updates that change only the status, which for a
// watched child (a Job, a CronJob, a Deployment) are most of its traffic and
// would wake the parent for nothing: under a burst those wasted passes queue
// ahead of the ones that matter.
func SpecOrMetadataChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		return SpecOrMetadataDiffers(e.ObjectOld, e.ObjectNew)
	}}
}

// SpecOrMetadataDiffers reports whether n differs from o in generation or
// in the metadata SpecOrMetadataChanged watches; predicates that judge more
// fields call it directly.
func SpecOrMetadataDiffers(o, n client.Object) bool {
	return o.GetGeneration() != n.GetGeneration() ||
		!maps.Equal(o.GetLabels(), n.GetLabels()) ||
		!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences()) ||
		!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
		!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
}

// NotLeavingTheCache drops the delete event of a child that leaves the
// cache because the operator is done with it (it now carries
// platformv1.RecordedLabel, which cacheblock.ChildSelector excludes): the object was
// not deleted, and nothing of it changed that a pass would act on, so under a
// burst of finishing runs each such event would only queue a pass for
// nothing. The transform of such a child must keep the label for this to
// see it.
func NotLeavingTheCache() predicate.Funcs {
	return predicate.Funcs{DeleteFunc: func(e event.DeleteEvent) bool {
		_, recorded := e.Object.GetLabels()[platformv1.RecordedLabel]
		return !recorded
	}}
}

// UrgentPriority is the work queue priority of the passes UrgentOnCreate
// asks for; everything else is queued at priority 0 (resyncs and the
// initial list lower).
const UrgentPriority = 100

// UrgentOnCreate enqueues the requests mapFn returns, as
// handler.EnqueueRequestsFromMapFunc does, except that the creation of a
// watched object puts its request ahead of the rest of the queue. A
// reconciler uses it for the objects whose arrival must be acted on at once
// (a Job to record as a run), so that under a burst they do not wait behind
// passes that only refresh a status. Objects of the initial list are not
// urgent: at a start, every object is new.
func UrgentOnCreate(mapFn handler.MapFunc) handler.EventHandler {
	mapped := handler.EnqueueRequestsFromMapFunc(mapFn)
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
			if !ok || e.IsInInitialList || e.Object == nil {
				mapped.Create(ctx, e, q)
				return
			}
			for _, req := range mapFn(ctx, e.Object) {
				pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(UrgentPriority)}, req)
			}
		},
		UpdateFunc:  mapped.Update,
		DeleteFunc:  mapped.Delete,
		GenericFunc: mapped.Generic,
	}
}

// ToLabeled maps an object to the object of its namespace that its label
// names, as a child carrying its owner's name label wakes its owner (a
// task's Job, an application's pod). It maps nothing when the label or any
// of the labels also is missing or empty.
func ToLabeled(label string, also ...string) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		l := obj.GetLabels()
		if slices.ContainsFunc(also, func(k string) bool { return l[k] == "" }) || l[label] == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: l[label]}}}
	}
}
