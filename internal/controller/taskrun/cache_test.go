// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/index"
)

// finishedRun is a run as the API server stores it once it succeeded.
func finishedRun(withJob bool) *platformv1.TaskRun {
	tr, _ := fixture()
	tr.Labels = map[string]string{platformv1.ScheduleTaskLabel: "t"}
	tr.Annotations = map[string]string{platformv1.RunNumberAnnotation: "7", "platform.example.com/traceparent": "00-x"}
	tr.OwnerReferences = []metav1.OwnerReference{{APIVersion: "platform.example.com/v1", Kind: "ScheduleTask",
		Name: "t", UID: "task-uid", Controller: ptr.To(true)}}
	if !withJob {
		tr.Spec.JobRef = nil
	}
	tr.Status = platformv1.TaskRunStatus{Phase: platformv1.TaskRunSucceeded, StartTime: at(0), CompletionTime: at(9),
		Reason: platformv1.ReasonCompleted, Message: "Job completed", PodName: "p1", Attempts: 1,
		Conditions: cond(metav1.ConditionTrue, platformv1.ReasonCompleted, "Job completed")}
	return tr
}

func TestStripFinishedRun_KeepsWhatTheTaskReads(t *testing.T) {
	o, err := stripFinishedRun(finishedRun(true))
	if err != nil {
		t.Fatal(err)
	}
	tr := o.(*platformv1.TaskRun)
	if tr.Labels != nil || tr.OwnerReferences != nil || len(tr.Status.Conditions) != 0 || tr.Status.Message != "" {
		t.Errorf("kept labels %v, owners %v, conditions %v, message %q; want none", tr.Labels, tr.OwnerReferences,
			tr.Status.Conditions, tr.Status.Message)
	}
	if len(tr.Annotations) != 1 || runNumberOf(tr) != "7" {
		t.Errorf("annotations %v, want only the run number 7 (a run whose status does not carry it)", tr.Annotations)
	}
	// A run whose status carries its number keeps no annotation at all.
	numbered := finishedRun(true)
	numbered.Status.RunNumber = 7
	o, err = stripFinishedRun(numbered)
	if err != nil {
		t.Fatal(err)
	}
	if tr := o.(*platformv1.TaskRun); tr.Annotations != nil || tr.RunNumber() != 7 {
		t.Errorf("annotations %v, run number %d; want none, and 7 from the status", tr.Annotations, tr.RunNumber())
	}
	if tr.Spec.ScheduleTaskName != "t" || tr.Spec.JobRef == nil || tr.Status.Phase != platformv1.TaskRunSucceeded ||
		!tr.Status.StartTime.Equal(at(0)) || !tr.Status.CompletionTime.Equal(at(9)) || tr.Status.Reason != platformv1.ReasonCompleted {
		t.Errorf("lost what the task's status reads: spec %+v, status %+v", tr.Spec, tr.Status)
	}

	// A run that never had a Job keeps its owner: only such a run can be
	// another object's, and the task reports it as not adopted.
	o, err = stripFinishedRun(finishedRun(false))
	if err != nil {
		t.Fatal(err)
	}
	if metav1.GetControllerOf(o.(*platformv1.TaskRun)) == nil {
		t.Error("a finished run without a Job lost its controller reference")
	}

	// A running run is kept whole.
	running := finishedRun(true)
	running.Status = platformv1.TaskRunStatus{Phase: platformv1.TaskRunRunning, PodName: "p1"}
	o, err = stripFinishedRun(running)
	if err != nil {
		t.Fatal(err)
	}
	if tr := o.(*platformv1.TaskRun); tr.Labels == nil || tr.OwnerReferences == nil || tr.Status.PodName != "p1" {
		t.Errorf("a running run was slimmed: %+v", tr)
	}
}

func TestStripPod_KeepsTheTaskContainersExitCodesOnly(t *testing.T) {
	_, job := fixture()
	p := pod(job, "p1", 0, corev1.PodFailed, 3)
	p.Annotations = map[string]string{"a": "b"}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "sidecar",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 9}}})
	o, err := stripPod(p)
	if err != nil {
		t.Fatal(err)
	}
	got := o.(*corev1.Pod)
	if len(got.Spec.Containers) != 0 || got.Annotations != nil || got.Status.Conditions != nil {
		t.Errorf("kept spec %v, annotations %v, conditions %v", got.Spec.Containers, got.Annotations, got.Status.Conditions)
	}
	if index.ControllingJobUID(got) != string(job.UID) || got.Status.Phase != corev1.PodFailed {
		t.Errorf("lost the owner or phase: %+v", got)
	}
	if code := exitCode(got); code == nil || *code != 3 || len(got.Status.ContainerStatuses) != 1 {
		t.Errorf("exit code %v from statuses %+v, want 3 from the task container only", code, got.Status.ContainerStatuses)
	}
}

// runNumberOf is the run-number annotation of tr.
func runNumberOf(tr *platformv1.TaskRun) string {
	return tr.Annotations[platformv1.RunNumberAnnotation]
}
