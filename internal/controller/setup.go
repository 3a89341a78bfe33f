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

// Package controller wires the project's reconcilers into a manager; each
// Kind's reconciler lives in a package of its own below this one.
package controller

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/controller/taskrun"
	"github.com/example/platform-operator/internal/metrics"
)

// Options tune the controllers.
type Options struct {
	// ScheduleTaskWorkers and TaskRunWorkers are the concurrent reconciles
	// of each controller.
	ScheduleTaskWorkers int
	TaskRunWorkers      int
}

// Setup registers every reconciler with the manager.
func Setup(mgr ctrl.Manager, o Options) error {
	if err := (&scheduletask.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("scheduletask-controller"),
	}).SetupWithManager(mgr, max(o.ScheduleTaskWorkers, 1)); err != nil {
		return fmt.Errorf("set up scheduletask controller: %w", err)
	}
	if err := (&taskrun.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("taskrun-controller"),
	}).SetupWithManager(mgr, max(o.TaskRunWorkers, 1)); err != nil {
		return fmt.Errorf("set up taskrun controller: %w", err)
	}
	if err := metrics.RegisterTaskGauge(mgr.GetCache()); err != nil {
		return fmt.Errorf("register the scheduletasks gauge: %w", err)
	}
	return nil
}

// CacheOptions limits the manager's cache to what the operator needs: only
// the Jobs and pods that carry the task label, so memory follows the number
// of tasks' runs and not the size of the cluster; no managedFields, which no
// reconciler reads; and of those Jobs and pods only what the reconcilers
// read (see stripJob and stripPod).
func CacheOptions() cache.Options {
	hasTask, err := labels.NewRequirement(platformv1.ScheduleTaskLabel, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	ours := labels.NewSelector().Add(*hasTask)
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}:        {Label: ours, Transform: stripJob},
			&corev1.Pod{}:         {Label: ours, Transform: stripPod},
			&platformv1.TaskRun{}: {Transform: stripFinishedRun},
		},
	}
}

// stripManagedFields is controller-runtime's transform that drops
// metadata.managedFields.
var stripManagedFields = cache.TransformStripManagedFields()

// stripJob keeps of a Job what the reconcilers read: its name, UID, owner,
// creation time, task label, the annotations that tie it to a schedule or a
// manual run, and its status. Its spec (the pod template above all) and the
// labels and annotations Kubernetes adds are most of the object, and nothing
// reads them: new Jobs are built from the CronJob, never from another Job.
// Nothing updates a Job, so the cached copy is never written back.
func stripJob(obj any) (any, error) {
	if job, ok := obj.(*batchv1.Job); ok {
		job.Spec = batchv1.JobSpec{}
		job.Labels = keep(job.Labels, platformv1.ScheduleTaskLabel)
		job.Annotations = keep(job.Annotations, batchv1.CronJobScheduledTimestampAnnotation, scheduletask.TaskRunUIDAnnotation)
	}
	return stripManagedFields(obj)
}

// keep returns the entries of m with the given keys, nil when none.
func keep(m map[string]string, keys ...string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = make(map[string]string, len(keys))
			}
			out[k] = v
		}
	}
	return out
}

// stripFinishedRun slims a finished TaskRun, the bulk of what the manager
// caches once runs pile up: a finished run is never written again, and the
// reconcilers read of it only its identity, owner, run number, spec, phase,
// reason and times (for the task's status, history and retention). Its
// conditions, message and the rest of its status, and annotations such as
// its trace context, are for people and stay on the API server.
func stripFinishedRun(obj any) (any, error) {
	if tr, ok := obj.(*platformv1.TaskRun); ok && tr.IsFinished() {
		tr.Annotations = keep(tr.Annotations, scheduletask.RunNumberAnnotation)
		tr.Status = platformv1.TaskRunStatus{
			Phase:          tr.Status.Phase,
			StartTime:      tr.Status.StartTime,
			CompletionTime: tr.Status.CompletionTime,
			Reason:         tr.Status.Reason,
		}
	}
	return stripManagedFields(obj)
}

// stripPod keeps a pod's metadata and status, which tell how a run's attempt
// went, and drops its spec, which the reconcilers never read.
func stripPod(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.Spec = corev1.PodSpec{}
	}
	return stripManagedFields(obj)
}
