// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cacheblock"
)

// CacheBlock is what the TaskRun controller needs of the manager's cache:
// the pods of runs, reduced to what tells how an attempt went, and every
// TaskRun, finished ones slimmed.
func CacheBlock() cacheblock.Block {
	return cacheblock.Block{
		KindLabel: platformv1.ScheduleTaskLabel,
		// A run's pods are its Job's, which the TaskRun names by UID
		// (platformv1.PodJobUIDIndex).
		Children: []cacheblock.Child{{Object: &corev1.Pod{}, Transform: stripPod, Owners: []cacheblock.Owner{{
			GroupKind: schema.GroupKind{Group: batchv1.GroupName, Kind: "Job"}, Names: cacheblock.Generated}}}},
		Own: map[client.Object]cache.ByObject{&platformv1.TaskRun{}: {Transform: stripFinishedRun}},
	}
}

// stripFinishedRun slims a finished TaskRun, the bulk of what the manager
// caches once runs pile up: the reconcilers read of it only its identity,
// run number, spec, phase, reason and times (for the task's status, history
// and retention). Its conditions, message and the rest of its status, its
// labels (runs are found by the spec.scheduleTaskName index) and its
// annotations (the run number is in its status too, see
// platformv1.TaskRun.RunNumber) are for people and stay on the API server; so
// does its owner reference once it has a Job, as only a run without one can
// be another object's to adopt (see the ScheduleTask controller's
// RunsAdopted). A map costs the cache some 400 bytes, half of what the rest
// of a finished run costs.
//
// The trap: an Update of a slimmed run would store the slimmed status. None
// happens: the TaskRun controller returns before writing a finished run
// (a record is never rewritten), and the ScheduleTask controller writes runs
// only with patches of the fields it sets.
func stripFinishedRun(obj any) (any, error) {
	if tr, ok := obj.(*platformv1.TaskRun); ok && tr.IsFinished() {
		tr.Labels = nil
		if tr.Status.RunNumber > 0 {
			tr.Annotations = nil // the number is in the status
		} else {
			// A run finished by a version that did not write the number in
			// its status: its annotation is the only place left.
			tr.Annotations = cacheblock.KeepKeys(tr.Annotations, platformv1.RunNumberAnnotation)
		}
		if tr.Spec.JobRef != nil {
			tr.OwnerReferences = nil
		}
		tr.Status = platformv1.TaskRunStatus{
			Phase:          tr.Status.Phase,
			StartTime:      tr.Status.StartTime,
			CompletionTime: tr.Status.CompletionTime,
			Reason:         tr.Status.Reason,
			RunNumber:      tr.Status.RunNumber,
		}
	}
	return obj, nil
}

// stripPod keeps of a run's pod what the TaskRun controller reads: its
// name, creation time, owner (the index by Job) and task label (the map to
// its run), its phase, and of the task container's status the exit codes.
// The spec, the other labels and annotations, the conditions and the other
// containers' statuses stay on the API server: a finished run's pods stay
// until the CronJob's history deletes their Job, and each would otherwise
// cost the cache a few kilobytes.
func stripPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.Spec = corev1.PodSpec{}
	pod.Labels = cacheblock.KeepKeys(pod.Labels, platformv1.ScheduleTaskLabel)
	pod.Annotations = nil
	var task []corev1.ContainerStatus
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == platformv1.TaskContainerName {
			task = []corev1.ContainerStatus{{Name: cs.Name,
				State:                corev1.ContainerState{Terminated: exitOnly(cs.State.Terminated)},
				LastTerminationState: corev1.ContainerState{Terminated: exitOnly(cs.LastTerminationState.Terminated)}}}
		}
	}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, ContainerStatuses: task}
	return pod, nil
}

// exitOnly keeps of a terminated state its exit code.
func exitOnly(t *corev1.ContainerStateTerminated) *corev1.ContainerStateTerminated {
	if t == nil {
		return nil
	}
	return &corev1.ContainerStateTerminated{ExitCode: t.ExitCode}
}
