// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package jobutil

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestFinished(t *testing.T) {
	cond := func(typ batchv1.JobConditionType, s corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: s}
	}
	tests := []struct {
		name                    string
		conds                   []batchv1.JobCondition
		wantFinished, wantSucce bool
	}{
		{"no conditions: running", nil, false, false},
		{"complete", []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), cond(batchv1.JobComplete, corev1.ConditionTrue)}, true, true},
		{"failed", []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue), cond(batchv1.JobFailed, corev1.ConditionTrue)}, true, false},
		{"failure target only: pods still terminating", []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue)}, false, false},
		{"success criteria only: not final yet", []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue)}, false, false},
		{"complete but False", []batchv1.JobCondition{cond(batchv1.JobComplete, corev1.ConditionFalse)}, false, false},
		{"suspended", []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue)}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			finished, succeeded := Finished(&batchv1.Job{Status: batchv1.JobStatus{Conditions: tt.conds}})
			if finished != tt.wantFinished || succeeded != tt.wantSucce {
				t.Errorf("Finished() = %v, %v; want %v, %v", finished, succeeded, tt.wantFinished, tt.wantSucce)
			}
		})
	}
}
