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
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
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
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: containerName, Image: "busybox"}}
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

func TestBuildStatus_FollowsTheJob(t *testing.T) {
	tests := []struct {
		name         string
		setup        func(*batchv1.Job) []*corev1.Pod
		wantPhase    platformv1.TaskRunPhase
		wantReason   string
		wantCond     metav1.ConditionStatus
		wantAttempts int32
		wantExit     *int32
		wantPod      string
		wantDuration string
	}{
		{
			name:      "no pod yet",
			setup:     func(*batchv1.Job) []*corev1.Pod { return nil },
			wantPhase: platformv1.TaskRunPending, wantReason: "Pending", wantCond: metav1.ConditionUnknown,
		},
		{
			name: "pod running",
			setup: func(j *batchv1.Job) []*corev1.Pod {
				testutil.StartJob(j, start)
				return []*corev1.Pod{pod(j, "p1", 0, corev1.PodRunning, 0)}
			},
			wantPhase: platformv1.TaskRunRunning, wantReason: "Running", wantCond: metav1.ConditionUnknown,
			wantAttempts: 1, wantPod: "p1",
		},
		{
			name: "completed",
			setup: func(j *batchv1.Job) []*corev1.Pod {
				testutil.CompleteJob(j, start, start.Add(42*time.Second))
				return []*corev1.Pod{pod(j, "p1", 0, corev1.PodSucceeded, 0)}
			},
			wantPhase: platformv1.TaskRunSucceeded, wantReason: platformv1.ReasonCompleted, wantCond: metav1.ConditionTrue,
			wantAttempts: 1, wantPod: "p1", wantDuration: "42s",
		},
		{
			name: "failed after retries",
			setup: func(j *batchv1.Job) []*corev1.Pod {
				testutil.FailJob(j, platformv1.ReasonBackoffLimitExceeded, 3, start, start.Add(90*time.Second))
				return []*corev1.Pod{pod(j, "p2", 20, corev1.PodFailed, 2), pod(j, "p3", 40, corev1.PodFailed, 3), pod(j, "p1", 0, corev1.PodFailed, 1)}
			},
			wantPhase: platformv1.TaskRunFailed, wantReason: platformv1.ReasonBackoffLimitExceeded, wantCond: metav1.ConditionFalse,
			wantAttempts: 3, wantExit: ptr.To[int32](3), wantPod: "p3", wantDuration: "1m30s",
		},
		{
			name: "deadline exceeded, pods already gone",
			setup: func(j *batchv1.Job) []*corev1.Pod {
				testutil.FailJob(j, platformv1.ReasonDeadlineExceeded, 1, start, start.Add(10*time.Second))
				return nil
			},
			wantPhase: platformv1.TaskRunFailed, wantReason: platformv1.ReasonDeadlineExceeded, wantCond: metav1.ConditionFalse,
			wantAttempts: 1, wantDuration: "10s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, job := fixture()
			pods := tt.setup(job)
			st := buildStatus(tr, &observation{job: job, pods: pods}, now)
			if st.Phase != tt.wantPhase || st.Reason != tt.wantReason && st.Phase != platformv1.TaskRunPending && st.Phase != platformv1.TaskRunRunning {
				t.Errorf("phase/reason = %s/%s, want %s/%s", st.Phase, st.Reason, tt.wantPhase, tt.wantReason)
			}
			c := meta.FindStatusCondition(st.Conditions, platformv1.ConditionSucceeded)
			if c == nil || c.Status != tt.wantCond || c.Reason != tt.wantReason {
				t.Errorf("Succeeded condition = %+v, want %s/%s", c, tt.wantCond, tt.wantReason)
			}
			if st.Attempts != tt.wantAttempts || st.PodName != tt.wantPod || st.Duration != tt.wantDuration {
				t.Errorf("attempts/pod/duration = %d/%q/%q, want %d/%q/%q", st.Attempts, st.PodName, st.Duration, tt.wantAttempts, tt.wantPod, tt.wantDuration)
			}
			if (st.ExitCode == nil) != (tt.wantExit == nil) || st.ExitCode != nil && *st.ExitCode != *tt.wantExit {
				t.Errorf("exitCode = %v, want %v", st.ExitCode, tt.wantExit)
			}
			if tt.wantPhase != platformv1.TaskRunPending && (st.StartTime == nil || !st.StartTime.Time.Equal(start)) {
				t.Errorf("startTime = %v, want %v", st.StartTime, start)
			}
		})
	}
}

func TestBuildStatus_DeletedJobCancelsTheRun(t *testing.T) {
	tr, _ := fixture()
	st := buildStatus(tr, &observation{jobGone: true}, now)
	if st.Phase != platformv1.TaskRunFailed || st.Reason != platformv1.ReasonCancelled || st.CompletionTime == nil {
		t.Errorf("status = %+v, want Failed/Cancelled with a completion time", st)
	}
}

func TestBuildStatus_ManualRunWithoutJobIsPending(t *testing.T) {
	tr, _ := fixture()
	tr.Spec.JobRef = nil
	st := buildStatus(tr, &observation{}, now)
	if st.Phase != platformv1.TaskRunPending {
		t.Errorf("phase = %s, want Pending", st.Phase)
	}
}
