// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// What the webhooks judge, and what they let pass unseen.
//
// A webhook that fails closed must never stand between an object and its
// deletion: a finalizer's removal, or any update of an object already being
// deleted, passes without validation, and so does every update that changes
// only metadata the operator does not interpret. The webhook configurations
// say the same in matchConditions (see the +kubebuilder:webhook markers), so
// the API server does not even call a webhook for those requests and a
// webhook outage cannot block them; the code below keeps the rule for an
// installation whose configuration lacks the conditions.
//
// What the operator interprets, and so what still goes through admission:
//   - ScheduleTask: the spec, and the annotations in
//     interpretedTaskAnnotations (a run-now request and its requester).
//   - TaskRun: the spec, the owner references, and every label and
//     annotation whose key starts with platformv1.OperatorKeyPrefix.
//
// The CEL in the markers mirrors these lists: a new interpreted annotation of
// a ScheduleTask (AppDeployment's promote/abort/retry requests, say) is one
// more entry here and one more string in the marker's list.

// interpretedTaskAnnotations are the ScheduleTask annotations whose change
// asks the operator to act.
var interpretedTaskAnnotations = []string{
	platformv1.RunNowAnnotation,
	platformv1.RunNowRequestedByAnnotation,
}

// changedAnnotations returns the keys among keys whose value (or presence)
// differs between the two annotation maps.
func changedAnnotations(old, cur map[string]string, keys []string) []string {
	var out []string
	for _, k := range keys {
		ov, ook := old[k]
		nv, nok := cur[k]
		if ook != nok || ov != nv {
			out = append(out, k)
		}
	}
	return out
}

// operatorKeys returns, sorted, every key of either map that the operator
// owns on a TaskRun.
func operatorKeys(old, cur map[string]string) []string {
	var keys []string
	for k := range maps.Keys(old) {
		if strings.HasPrefix(k, platformv1.OperatorKeyPrefix) {
			keys = append(keys, k)
		}
	}
	for k := range maps.Keys(cur) {
		if strings.HasPrefix(k, platformv1.OperatorKeyPrefix) && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// isTaskRef reports whether ref points at the ScheduleTask of that name.
func isTaskRef(ref metav1.OwnerReference, task string) bool {
	return strings.HasPrefix(ref.APIVersion, platformv1.GroupVersion.Group+"/") && ref.Kind == "ScheduleTask" && ref.Name == task
}
