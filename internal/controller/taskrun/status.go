// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/jobutil"
	"github.com/example/platform-operator/internal/objstatus"
)

// observation is the run's Job and pods as one pass sees them.
type observation struct {
	job     *batchv1.Job
	pods    []*corev1.Pod
	jobGone bool
	// uncached: the Job was found on the API server, not in the cache.
	uncached bool
	// orphan: a manual run that must end because its task does not exist
	// or cannot run (orphan.go); orphanRecheck: when to look again.
	orphan        *orphanVerdict
	orphanRecheck time.Duration
}

// buildStatus rebuilds a running TaskRun's status from its Job and pods.
func buildStatus(tr *platformv1.TaskRun, obs *observation, now time.Time) platformv1.TaskRunStatus {
	st := platformv1.TaskRunStatus{
		Phase:      platformv1.TaskRunPending,
		StartTime:  tr.Status.StartTime,
		Conditions: slices.Clone(tr.Status.Conditions),
		// The record carries its number as a field, which lets the cache
		// keep a finished run without its annotations (stripFinishedRun).
		RunNumber: tr.RunNumber(),
	}
	var reason, message string
	switch {
	case tr.Annotations[platformv1.StopReasonAnnotation] != "":
		// The ScheduleTask controller refused or cancelled the run.
		st.Phase = platformv1.TaskRunFailed
		st.Reason = tr.Annotations[platformv1.StopReasonAnnotation]
		st.Message = tr.Annotations[platformv1.StopMessageAnnotation]
		st.CompletionTime = &metav1.Time{Time: now}
		st.Attempts, st.PodName, st.ExitCode = tr.Status.Attempts, tr.Status.PodName, tr.Status.ExitCode
	case obs.orphan != nil:
		st.Phase = platformv1.TaskRunFailed
		st.Reason, st.Message = obs.orphan.reason, obs.orphan.message
		st.CompletionTime = &metav1.Time{Time: now}
	case tr.Spec.JobRef == nil:
		reason, message = string(platformv1.TaskRunPending), "Waiting for the run's Job to be started"
	case obs.jobGone:
		st.Phase = platformv1.TaskRunFailed
		st.Reason = platformv1.ReasonCancelled
		st.Message = fmt.Sprintf("Job %s was deleted before the run finished", tr.Spec.JobRef.Name)
		st.CompletionTime = &metav1.Time{Time: now}
		st.Attempts, st.PodName, st.ExitCode = tr.Status.Attempts, tr.Status.PodName, tr.Status.ExitCode
	default:
		fromJob(&st, obs.job, obs.pods)
	}
	if st.StartTime != nil && st.CompletionTime != nil {
		st.Duration = st.CompletionTime.Sub(st.StartTime.Time).Round(time.Second).String()
	}

	c := metav1.Condition{Type: platformv1.ConditionSucceeded, Status: metav1.ConditionUnknown, Reason: reason, Message: message}
	switch st.Phase {
	case platformv1.TaskRunSucceeded:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, st.Reason, st.Message
	case platformv1.TaskRunFailed:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, st.Reason, st.Message
	default:
		if c.Reason == "" {
			c.Reason, c.Message = string(st.Phase), fmt.Sprintf("Run is %s", st.Phase)
		}
	}
	objstatus.SetCondition(&st.Conditions, c, tr.Generation, now)
	return st
}

// fromJob fills phase, times, attempts, reason, pod and exit code from the
// Job's conditions and its pods.
func fromJob(st *platformv1.TaskRunStatus, job *batchv1.Job, pods []*corev1.Pod) {
	st.Attempts = max(int32(len(pods)), job.Status.Succeeded+job.Status.Failed+job.Status.Active)
	var started bool
	var newest, newestFailed *corev1.Pod
	for _, p := range pods {
		if p.Status.Phase != corev1.PodPending {
			started = true
		}
		if podNewer(p, newest) {
			newest = p
		}
		if p.Status.Phase == corev1.PodFailed && podNewer(p, newestFailed) {
			newestFailed = p
		}
	}
	if newest != nil {
		st.PodName = newest.Name
	}
	if newestFailed != nil {
		st.ExitCode = exitCode(newestFailed)
	}
	if st.StartTime == nil && (started || job.Status.Succeeded+job.Status.Failed > 0) {
		st.StartTime = job.Status.StartTime
	}

	if c := jobutil.FinishedCondition(job); c != nil {
		if c.Type == batchv1.JobComplete {
			st.Phase, st.Reason, st.Message = platformv1.TaskRunSucceeded, platformv1.ReasonCompleted, "Job completed"
			st.CompletionTime = job.Status.CompletionTime
			if st.CompletionTime == nil {
				st.CompletionTime = &c.LastTransitionTime
			}
		} else {
			st.Phase, st.Reason, st.Message = platformv1.TaskRunFailed, c.Reason, c.Message
			st.CompletionTime = &c.LastTransitionTime
		}
		if st.StartTime == nil {
			st.StartTime = job.Status.StartTime
		}
		return
	}
	if started {
		st.Phase = platformv1.TaskRunRunning
	}
}

// exitCode is the exit code of the pod's task container, if it terminated.
func exitCode(p *corev1.Pod) *int32 {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != platformv1.TaskContainerName {
			continue
		}
		if t := cs.State.Terminated; t != nil {
			return &t.ExitCode
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			return &t.ExitCode
		}
	}
	return nil
}

// podNewer reports whether a was created after b (nil b counts as oldest).
func podNewer(a, b *corev1.Pod) bool {
	if b == nil {
		return true
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name > b.Name
}
