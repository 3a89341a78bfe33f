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

package reconcileutil

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
