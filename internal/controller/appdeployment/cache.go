// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cacheblock"
)

// CacheBlock is what the AppDeployment controller needs of the manager's
// cache: the Deployments and Services it made, whole (a Deployment's
// template is the stable version's only record while a canary runs), and
// only those named as it names them; their ReplicaSets and the
// application's ControllerRevisions as stubs of their metadata (a pass
// reads only who controls them and, of a revision, its label, see observe
// and reconcileRevisions; index.ReplicaSetMetadata says why; undo reads a
// revision's data past the cache) and their pods without their spec.
func CacheBlock() cacheblock.Block {
	// The Deployments and Services are named after the application (the
	// canary's with CanarySuffix, a blue-green release's preview's with
	// PreviewSuffix); its pods are its Deployments' ReplicaSets' (observe
	// checks both links by UID).
	named := []cacheblock.Owner{{GroupKind: appKind,
		Names: cacheblock.SameName("", platformv1.CanarySuffix, platformv1.PreviewSuffix)}}
	return cacheblock.Block{
		KindLabel: platformv1.AppNameLabel,
		Children: []cacheblock.Child{
			{Object: &appsv1.Deployment{}, Owners: named},
			{Object: &corev1.Service{}, Owners: named},
			{Object: &appsv1.ReplicaSet{}, Transform: cacheblock.StubTransform},
			{Object: &appsv1.ControllerRevision{}, Transform: cacheblock.StubTransform},
			{Object: &corev1.Pod{}, Transform: stripPod, Owners: []cacheblock.Owner{{
				GroupKind: schema.GroupKind{Group: appsv1.GroupName, Kind: "ReplicaSet"}, Names: cacheblock.Generated}}},
		},
		Own: map[client.Object]cache.ByObject{&platformv1.AppDeployment{}: {}},
	}
}

// appKind is the AppDeployment's group and kind, as its children's
// controller references name it.
var appKind = platformv1.GroupVersion.WithKind("AppDeployment").GroupKind()

// stripPod keeps what a pass reads of a pod, its labels, times and status,
// and drops its spec. Pods are never written back, only deleted.
func stripPod(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.Spec = corev1.PodSpec{}
		pod.Annotations = nil
	}
	return obj, nil
}
