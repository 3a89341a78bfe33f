// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
)

func TestUserCreateMetadata_OnlyWhatAdmissionWouldSet(t *testing.T) {
	task := &platformv1.ScheduleTask{ObjectMeta: metav1.ObjectMeta{Name: "nightly", UID: "task-uid"}}
	taskRef := metav1.OwnerReference{APIVersion: "platform.example.com/v1", Kind: "ScheduleTask", Name: "nightly",
		UID: "task-uid", Controller: ptr.To(true)}
	run := func(mutate func(*platformv1.TaskRun)) *platformv1.TaskRun {
		tr := &platformv1.TaskRun{
			ObjectMeta: metav1.ObjectMeta{Name: "r",
				Labels:      map[string]string{platformv1.ScheduleTaskLabel: "nightly", "team": "a"},
				Annotations: map[string]string{platformv1.RequestedByAnnotation: "alice", "note": "x"}},
			Spec: platformv1.TaskRunSpec{ScheduleTaskName: "nightly", Trigger: platformv1.TriggerManual},
		}
		mutate(tr)
		return tr
	}
	tests := []struct {
		name string
		run  *platformv1.TaskRun
		task *platformv1.ScheduleTask
		want []string // fields refused
	}{
		{"as admission leaves it", run(func(*platformv1.TaskRun) {}), task, nil},
		{"owned by its task", run(func(tr *platformv1.TaskRun) { tr.OwnerReferences = []metav1.OwnerReference{taskRef} }), task, nil},
		{"label of another task", run(func(tr *platformv1.TaskRun) { tr.Labels[platformv1.ScheduleTaskLabel] = "other" }), task,
			[]string{"metadata.labels[platform.example.com/scheduletask]"}},
		{"another operator label", run(func(tr *platformv1.TaskRun) { tr.Labels["platform.example.com/x"] = "" }), task,
			[]string{"metadata.labels[platform.example.com/x]"}},
		{"run number", run(func(tr *platformv1.TaskRun) { tr.Annotations[platformv1.RunNumberAnnotation] = "9" }), task,
			[]string{"metadata.annotations[platform.example.com/run-number]"}},
		{"stop request", run(func(tr *platformv1.TaskRun) { tr.Annotations[platformv1.StopReasonAnnotation] = "Cancelled" }), task,
			[]string{"metadata.annotations[platform.example.com/stop-reason]"}},
		{"someone else's name", run(func(tr *platformv1.TaskRun) { tr.Annotations[platformv1.RequestedByAnnotation] = "bob" }), task,
			[]string{"metadata.annotations[platform.example.com/requested-by]"}},
		{"foreign controller", run(func(tr *platformv1.TaskRun) {
			tr.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "c", Controller: ptr.To(true)}}
		}), task, []string{"metadata.ownerReferences[0]"}},
		{"task of the same name made before", run(func(tr *platformv1.TaskRun) {
			ref := taskRef
			ref.UID = "old-uid"
			tr.OwnerReferences = []metav1.OwnerReference{taskRef, ref}
		}), task, []string{"metadata.ownerReferences[1]"}},
		{"owned by a task not found", run(func(tr *platformv1.TaskRun) { tr.OwnerReferences = []metav1.OwnerReference{taskRef} }), nil,
			[]string{"metadata.ownerReferences[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range userCreateMetadata(tt.run, tt.task, "alice") {
				got = append(got, e.Field)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("refused fields (-want +got):\n%s", d)
			}
		})
	}
}

func TestChangedAnnotations(t *testing.T) {
	keys := []string{"a", "b", "c", "d"}
	old := map[string]string{"a": "1", "b": "", "c": "3"}
	cur := map[string]string{"a": "1", "c": "4", "d": ""}
	if d := cmp.Diff([]string{"b", "c", "d"}, changedAnnotations(old, cur, keys)); d != "" {
		t.Errorf("changed keys (-want +got):\n%s", d)
	}
}
