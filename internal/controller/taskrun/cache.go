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

package taskrun

import (
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/reconcileutil"
)

// CacheBlock is what the TaskRun controller needs of the manager's cache:
// the pods of runs, without their spec, and every TaskRun, finished ones
// slimmed.
func CacheBlock() reconcileutil.CacheBlock {
	return reconcileutil.CacheBlock{
		KindLabel: platformv1.ScheduleTaskLabel,
		Children: map[client.Object]toolscache.TransformFunc{
			&corev1.Pod{}: stripPod,
		},
		Own: map[client.Object]cache.ByObject{
			&platformv1.TaskRun{}: {Transform: stripFinishedRun},
		},
	}
}

// stripFinishedRun slims a finished TaskRun, the bulk of what the manager
// caches once runs pile up: the reconcilers read of it only its identity,
// owner, run number, spec, phase, reason and times (for the task's status,
// history and retention). Its conditions, message and the rest of its
// status, and annotations such as its trace context, are for people and stay
// on the API server.
//
// The trap: an Update of a slimmed run would store the slimmed status. None
// happens: the TaskRun controller returns before writing a finished run
// (a record is never rewritten), and the ScheduleTask controller writes runs
// only with patches of the fields it sets.
func stripFinishedRun(obj any) (any, error) {
	if tr, ok := obj.(*platformv1.TaskRun); ok && tr.IsFinished() {
		tr.Annotations = reconcileutil.KeepKeys(tr.Annotations, platformv1.RunNumberAnnotation)
		tr.Status = platformv1.TaskRunStatus{
			Phase:          tr.Status.Phase,
			StartTime:      tr.Status.StartTime,
			CompletionTime: tr.Status.CompletionTime,
			Reason:         tr.Status.Reason,
		}
	}
	return obj, nil
}

// stripPod keeps a pod's metadata and status, which tell how a run's attempt
// went, and drops its spec, which the reconcilers never read.
func stripPod(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.Spec = corev1.PodSpec{}
	}
	return obj, nil
}
