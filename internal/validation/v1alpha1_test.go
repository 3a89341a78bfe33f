// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	platformv1 "github.com/example/platform-operator/api/v1"
	platformv1alpha1 "github.com/example/platform-operator/api/v1alpha1"
	"github.com/example/platform-operator/internal/testutil"
)

func TestScheduleTask_RefusesATaskWhoseV1alpha1FormDoesNotFit(t *testing.T) {
	lt := strings.Repeat("<", platformv1.MaxArgumentLength)
	task := func(own int, extra map[string]string) *platformv1.ScheduleTask {
		st := testutil.NewScheduleTask("ns", "t")
		st.Spec.Command = nil
		st.Spec.Args = []string{lt, lt}
		st.Annotations = map[string]string{"example.com/own": strings.Repeat("x", own)}
		maps.Copy(st.Annotations, extra)
		return st
	}
	for _, tc := range []struct {
		name string
		task *platformv1.ScheduleTask
		want []string
	}{
		// 32 KiB of '<' are 192 KiB HTML-escaped: with 70 KB more, over the limit.
		{"fits because the annotation is not HTML-escaped", task(70000, nil), nil},
		{"args do not fit beside the task's own annotations", task(240000, nil), []string{"spec.args"}},
		{"the task's own annotations leave no room", task(apivalidation.TotalAnnotationSizeLimitB-len("example.com/own")-20, nil), []string{"metadata.annotations"}},
		{"written from an incomplete v1alpha1 form", task(10, map[string]string{platformv1alpha1.OmittedAnnotation: "args"}),
			[]string{"metadata.annotations[platform.example.com/v1-data-omitted]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range ScheduleTask(tc.task) {
				got = append(got, e.Field)
				if e.Field != "metadata.annotations[platform.example.com/v1-data-omitted]" &&
					!strings.Contains(e.Detail, "v1alpha1 form of this task would not fit in annotations") {
					t.Errorf("%s: detail %q does not say why", e.Field, e.Detail)
				}
			}
			if delta := cmp.Diff(tc.want, got); delta != "" {
				t.Errorf("fields refused (-want +got):\n%s", delta)
			}
		})
	}
}
