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

package scheduletask

import (
	batchv1 "k8s.io/api/batch/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/reconcileutil"
)

// CacheBlock is what the ScheduleTask controller needs of the manager's
// cache: the CronJobs it applies, whole, and the Jobs they make, slimmed.
func CacheBlock() reconcileutil.CacheBlock {
	return reconcileutil.CacheBlock{
		KindLabel: platformv1.ScheduleTaskLabel,
		Children: map[client.Object]toolscache.TransformFunc{
			&batchv1.CronJob{}: nil,
			&batchv1.Job{}:     stripJob,
		},
	}
}

// stripJob keeps of a Job what the ScheduleTask and TaskRun controllers
// read: its name, UID, owner, creation time, task label, the annotations that
// tie it to a schedule or a manual run, and its status. Its spec (the pod
// template above all) and the labels and annotations Kubernetes adds are most
// of the object, and nothing reads them: new Jobs are built from the CronJob,
// never from another Job. Nothing updates a Job, so the slimmed copy is never
// written back.
func stripJob(obj any) (any, error) {
	if job, ok := obj.(*batchv1.Job); ok {
		job.Spec = batchv1.JobSpec{}
		job.Labels = reconcileutil.KeepKeys(job.Labels, platformv1.ScheduleTaskLabel)
		job.Annotations = reconcileutil.KeepKeys(job.Annotations,
			batchv1.CronJobScheduledTimestampAnnotation, platformv1.TaskRunUIDAnnotation)
	}
	return obj, nil
}
