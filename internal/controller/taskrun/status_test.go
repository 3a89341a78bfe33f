// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

var (
	now   = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	start = now.Add(-time.Minute)
)

// fixture returns a TaskRun of a Job and the Job, as the operator makes them.
func fixture() (*platformv1.TaskRun, *batchv1.Job) {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t", UID: "cj"}}
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: platformv1.TaskContainerName, Image: "busybox"}}
	job := testutil.JobFromCronJob(cj, now.Truncate(time.Minute))
	job.UID = "job-uid"
	tr := &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: job.Name, Generation: 1},
		Spec:       platformv1.TaskRunSpec{ScheduleTaskName: "t", JobRef: &platformv1.JobRef{Name: job.Name, UID: job.UID}},
	}
	return tr, job
}

// pod returns a pod of the Job created at offset seconds after start.
func pod(job *batchv1.Job, name string, offset int, phase corev1.PodPhase, code int32) *corev1.Pod {
	p := testutil.PodForJob(job, name, phase, code)
	p.CreationTimestamp = metav1.NewTime(start.Add(time.Duration(offset) * time.Second))
	return p
}

// cond is the Succeeded condition buildStatus writes at now.
func cond(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
	return []metav1.Condition{{Type: platformv1.ConditionSucceeded, Status: status, Reason: reason, Message: message,
		ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(now)}}
}

// at is a time offset seconds after start.
func at(offset int) *metav1.Time {
	return &metav1.Time{Time: start.Add(time.Duration(offset) * time.Second)}
}

func TestBuildStatus_FollowsTheJob(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*batchv1.Job) []*corev1.Pod
		want  platformv1.TaskRunStatus
	}{
		{
			name:  "no pod yet",
			setup: func(*batchv1.Job) []*corev1.Pod { return nil },
			want: platformv1.TaskRunStatus{Phase: platformv1.TaskRunPending,
				Conditions: cond(metav1.ConditionUnknown, "Pending", "Run is Pending")},
		},
		{
			name: "pod running",
			setup: func(j *batchv1.Job) []*corev1.Pod {
				testutil.StartJob(j, start)
				return []*corev1.Pod{pod(j, "p1", 0, corev1.PodRunning, 0)}
			},
			want: platformv1.TaskRunStatus{Phase: platformv1.TaskRunRunning, StartTime: at(0), Attempts: 1, PodName: "p1",
				Conditions: cond(metav1.ConditionUnknown, "Running", "Run is Running")},
		},
		{
			name: "completed",
			setup: func(j *batchv1.Job) []*corev1.Pod {
				testutil.CompleteJob(j, start, start.Add(42*time.Second))
				return []*corev1.Pod{pod(j, "p1", 0, corev1.PodSucceeded, 0)}
			},
			want: platformv1.TaskRunStatus{Phase: platformv1.TaskRunSucceeded, StartTime: at(0), CompletionTime: at(42),
				Duration: "42s", Attempts: 1, PodName: "p1", Reason: platformv1.ReasonCompleted, Message: "Job completed",
				Conditions: cond(metav1.ConditionTrue, platformv1.ReasonCompleted, "Job completed")},
		},
		{
			name: "failed after retries",
			setup: func(j *batchv1.Job) []*corev1.Pod {
				testutil.FailJob(j, platformv1.ReasonBackoffLimitExceeded, 3, start, start.Add(90*time.Second))
				return []*corev1.Pod{pod(j, "p2", 20, corev1.PodFailed, 2), pod(j, "p3", 40, corev1.PodFailed, 3), pod(j, "p1", 0, corev1.PodFailed, 1)}
			},
			want: platformv1.TaskRunStatus{Phase: platformv1.TaskRunFailed, StartTime: at(0), CompletionTime: at(90),
				Duration: "1m30s", Attempts: 3, PodName: "p3", ExitCode: ptr.To[int32](3),
				Reason: platformv1.ReasonBackoffLimitExceeded, Message: "Job failed: BackoffLimitExceeded",
				Conditions: cond(metav1.ConditionFalse, platformv1.ReasonBackoffLimitExceeded, "Job failed: BackoffLimitExceeded")},
		},
		{
			name: "deadline exceeded, pods already gone",
			setup: func(j *batchv1.Job) []*corev1.Pod {
				testutil.FailJob(j, platformv1.ReasonDeadlineExceeded, 1, start, start.Add(10*time.Second))
				return nil
			},
			want: platformv1.TaskRunStatus{Phase: platformv1.TaskRunFailed, StartTime: at(0), CompletionTime: at(10),
				Duration: "10s", Attempts: 1, Reason: platformv1.ReasonDeadlineExceeded, Message: "Job failed: DeadlineExceeded",
				Conditions: cond(metav1.ConditionFalse, platformv1.ReasonDeadlineExceeded, "Job failed: DeadlineExceeded")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, job := fixture()
			pods := tt.setup(job)
			got := buildStatus(tr, &observation{job: job, pods: pods}, now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			// The cache keeps a pod slimmed (stripPod): the status built
			// from what it keeps is the same.
			cached := make([]*corev1.Pod, len(pods))
			for i, p := range pods {
				o, err := stripPod(p.DeepCopy())
				if err != nil {
					t.Fatal(err)
				}
				cached[i] = o.(*corev1.Pod)
			}
			got = buildStatus(tr, &observation{job: job, pods: cached}, now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("status from the cached pods (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildStatus_DeletedJobCancelsTheRun(t *testing.T) {
	tr, _ := fixture()
	got := buildStatus(tr, &observation{jobGone: true}, now)
	msg := "Job " + tr.Spec.JobRef.Name + " was deleted before the run finished"
	want := platformv1.TaskRunStatus{Phase: platformv1.TaskRunFailed, CompletionTime: &metav1.Time{Time: now},
		Reason: platformv1.ReasonCancelled, Message: msg,
		Conditions: cond(metav1.ConditionFalse, platformv1.ReasonCancelled, msg)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestBuildStatus_ManualRunWithoutJobIsPending(t *testing.T) {
	tr, _ := fixture()
	tr.Spec.JobRef = nil
	got := buildStatus(tr, &observation{}, now)
	want := platformv1.TaskRunStatus{Phase: platformv1.TaskRunPending,
		Conditions: cond(metav1.ConditionUnknown, "Pending", "Waiting for the run's Job to be started")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestBuildStatus_AStopRequestEndsTheRunWithItsReason(t *testing.T) {
	tr, job := fixture()
	testutil.StartJob(job, start)
	tr.Annotations = map[string]string{
		platformv1.StopReasonAnnotation:  platformv1.ReasonConcurrencyForbidden,
		platformv1.StopMessageAnnotation: "Not started: run x is active",
	}
	got := buildStatus(tr, &observation{job: job}, now)
	want := platformv1.TaskRunStatus{Phase: platformv1.TaskRunFailed, CompletionTime: &metav1.Time{Time: now},
		Reason: platformv1.ReasonConcurrencyForbidden, Message: "Not started: run x is active",
		Conditions: cond(metav1.ConditionFalse, platformv1.ReasonConcurrencyForbidden, "Not started: run x is active")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}
