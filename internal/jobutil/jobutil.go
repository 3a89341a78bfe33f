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

// Package jobutil decides, once for the whole project, what a Job's status
// means: whether it has finished and how. The controllers, the benchmark's
// observer and the fault tests all ask it, so they cannot disagree.
package jobutil

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// FinishedCondition returns the Job's final condition, Complete or Failed
// with status True, or nil while the Job has not finished. A Job gets at
// most one of them; the interim conditions (SuccessCriteriaMet,
// FailureTarget) are not final: the Job's pods may still be terminating.
func FinishedCondition(job *batchv1.Job) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// Finished reports whether the Job has finished, and whether it succeeded.
func Finished(job *batchv1.Job) (finished, succeeded bool) {
	c := FinishedCondition(job)
	return c != nil, c != nil && c.Type == batchv1.JobComplete
}
