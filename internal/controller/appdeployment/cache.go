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

package appdeployment

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/reconcileutil"
)

// CacheBlock is what the AppDeployment controller needs of the manager's
// cache: the Deployments and Services it made, whole (a Deployment's
// template is the stable version's only record while a canary runs), their
// ReplicaSets as stubs (a pass reads only who controls them, see
// observe) and their pods without their spec.
func CacheBlock() reconcileutil.CacheBlock {
	return reconcileutil.CacheBlock{
		KindLabel: platformv1.AppNameLabel,
		Children: map[client.Object]toolscache.TransformFunc{
			&appsv1.Deployment{}: nil,
			&corev1.Service{}:    nil,
			&appsv1.ReplicaSet{}: reconcileutil.StubTransform,
			&corev1.Pod{}:        stripPod,
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
