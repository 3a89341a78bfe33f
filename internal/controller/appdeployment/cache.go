// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cacheblock"
)

// CacheBlock is what the AppDeployment controller needs of the manager's
// cache: the Deployments and Services it made, whole (a Deployment's
// template is the stable version's only record while a canary runs), their
// ReplicaSets as stubs of their metadata (a pass reads only who controls
// them, see observe; index.ReplicaSetMetadata says why) and their pods without their
// spec.
func CacheBlock() cacheblock.Block {
	return cacheblock.Block{
		KindLabel: platformv1.AppNameLabel,
		Children: map[client.Object]toolscache.TransformFunc{
			&appsv1.Deployment{}: nil,
			&corev1.Service{}:    nil,
			&appsv1.ReplicaSet{}: cacheblock.StubTransform,
			// Each revision's pod fields, for undo (revisions.go).
			&appsv1.ControllerRevision{}: nil,
			&corev1.Pod{}:                stripPod,
		},
		// An application's pods are its Deployments' ReplicaSets' (observe
		// checks both links by UID).
		Controllers: map[client.Object][]schema.GroupKind{
			&corev1.Pod{}: {{Group: appsv1.GroupName, Kind: "ReplicaSet"}},
		},
		Own: map[client.Object]cache.ByObject{
			&platformv1.AppDeployment{}: {},
		},
	}
}

// stripPod keeps what a pass reads of a pod, its labels, times and status,
// and drops its spec. Pods are never written back, only deleted.
func stripPod(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.Spec = corev1.PodSpec{}
		pod.Annotations = nil
	}
	return obj, nil
}
