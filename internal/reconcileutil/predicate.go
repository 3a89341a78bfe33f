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

package reconcileutil

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
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
		return specOrMetadataChanged(e.ObjectOld, e.ObjectNew)
	}}
}

func specOrMetadataChanged(o, n client.Object) bool {
	return o.GetGeneration() != n.GetGeneration() ||
		!maps.Equal(o.GetLabels(), n.GetLabels()) ||
		!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences()) ||
		!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
		!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
}
