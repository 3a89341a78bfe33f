// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package testutil

import (
	"fmt"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// JobFromCronJob returns the Job the CronJob controller would create for the
// given scheduled time: its name, the template's labels and annotations (the
// operator's signature among them), the scheduled-time annotation and its
// owner. envtest has no CronJob controller, so integration tests create it
// themselves.
func JobFromCronJob(cj *batchv1.CronJob, scheduled time.Time) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   cj.Namespace,
			Name:        fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60),
			Labels:      map[string]string{},
			Annotations: map[string]string{batchv1.CronJobScheduledTimestampAnnotation: scheduled.UTC().Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob")),
			},
		},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	maps.Copy(job.Labels, cj.Spec.JobTemplate.Labels)
	maps.Copy(job.Annotations, cj.Spec.JobTemplate.Annotations)
	return job
}

// PodForJob returns a pod of the Job, as the Job controller would create it,
// in the given phase; a Failed pod's task container exited with exitCode.
func PodForJob(job *batchv1.Job, name string, phase corev1.PodPhase, exitCode int32) *corev1.Pod {
	labels := map[string]string{batchv1.ControllerUidLabel: string(job.UID), batchv1.JobNameLabel: job.Name}
	maps.Copy(labels, job.Spec.Template.Labels)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: job.Namespace,
			Name:      name,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job")),
			},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	pod.Status.Phase = phase
	if phase == corev1.PodFailed || phase == corev1.PodSucceeded {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name:  pod.Spec.Containers[0].Name,
			Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Reason: "Error"}},
		}}
	}
	return pod
}

// CompleteJob sets the status the Job controller writes when a Job succeeds;
// the API server insists on every part of it.
func CompleteJob(job *batchv1.Job, start, end time.Time) {
	job.Status.StartTime = &metav1.Time{Time: start}
	job.Status.CompletionTime = &metav1.Time{Time: end}
	job.Status.Active = 0
	job.Status.Ready = nil
	job.Status.Succeeded = 1
	job.Status.Conditions = append(job.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: metav1.NewTime(end)},
		batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: metav1.NewTime(end)})
}

// FailJob sets the status the Job controller writes when a Job fails for
// reason (BackoffLimitExceeded, DeadlineExceeded) after failed pods.
func FailJob(job *batchv1.Job, reason string, failed int32, start, end time.Time) {
	job.Status.StartTime = &metav1.Time{Time: start}
	job.Status.Active = 0
	job.Status.Ready = nil
	job.Status.Failed = failed
	msg := "Job failed: " + reason
	job.Status.Conditions = append(job.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(end)},
		batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(end)})
}

// StartJob sets the status of a Job with one running pod.
func StartJob(job *batchv1.Job, start time.Time) {
	job.Status.StartTime = &metav1.Time{Time: start}
	job.Status.Active = 1
}
