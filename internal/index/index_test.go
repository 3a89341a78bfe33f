// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package index

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLabelIndex_IndexesByTheLabelsValueAndSkipsObjectsWithoutIt(t *testing.T) {
	index := LabelIndex("task")
	with := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"task": "nightly", "other": "x"}}}
	if got := index(with); !slices.Equal(got, []string{"nightly"}) {
		t.Errorf("index of a labelled object = %v, want [nightly]", got)
	}
	if got := index(&corev1.Pod{}); got != nil {
		t.Errorf("index of an unlabelled object = %v, want none", got)
	}
}
