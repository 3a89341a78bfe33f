// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
)

func TestTaskState_EachTaskInExactlyOneState(t *testing.T) {
	ready := func(s metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: platformv1.ConditionReady, Status: s}}
	}
	tests := []struct {
		name string
		st   platformv1.ScheduleTask
		want string
	}{
		{"idle", platformv1.ScheduleTask{Status: platformv1.ScheduleTaskStatus{Conditions: ready("True")}}, StateIdle},
		{"active", platformv1.ScheduleTask{Status: platformv1.ScheduleTaskStatus{Active: true}}, StateActive},
		{"last run failed", platformv1.ScheduleTask{Status: platformv1.ScheduleTaskStatus{Active: true, LastResult: platformv1.RunFailed}}, StateFailing},
		{"not ready", platformv1.ScheduleTask{Status: platformv1.ScheduleTaskStatus{Conditions: ready("False")}}, StateFailing},
		{"suspended wins", platformv1.ScheduleTask{Spec: platformv1.ScheduleTaskSpec{Suspend: ptr.To(true)},
			Status: platformv1.ScheduleTaskStatus{LastResult: platformv1.RunFailed}}, StateSuspended},
	}
	for _, tt := range tests {
		if got := taskState(&tt.st); got != tt.want {
			t.Errorf("%s: state %q, want %q", tt.name, got, tt.want)
		}
	}
}
