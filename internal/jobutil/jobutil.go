// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

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
