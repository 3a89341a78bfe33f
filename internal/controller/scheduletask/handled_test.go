// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

func TestHandledRequests_StatusWinsAndOldAnnotationsCountOnlyBeforeIt(t *testing.T) {
	resumed := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	legacy := map[string]string{
		legacyRunNowHandledAnnotation: "old-run", legacyResumeHandledAnnotation: "old-resume",
		legacyResumedAtAnnotation: "2026-01-02T03:04:05Z",
	}
	tests := []struct {
		name        string
		annotations map[string]string
		status      platformv1.ScheduleTaskHandledRequests
		want        platformv1.ScheduleTaskHandledRequests
	}{
		{name: "nothing handled yet"},
		{name: "status holds what was handled", status: platformv1.ScheduleTaskHandledRequests{RunNow: "a"},
			want: platformv1.ScheduleTaskHandledRequests{RunNow: "a"}},
		{name: "upgrade: a manager before status handled these", annotations: legacy,
			want: platformv1.ScheduleTaskHandledRequests{RunNow: "old-run", Resume: "old-resume", ResumedAt: &resumed}},
		{name: "after the upgrade the annotations are ignored", annotations: legacy,
			status: platformv1.ScheduleTaskHandledRequests{RunNow: "new"},
			want:   platformv1.ScheduleTaskHandledRequests{RunNow: "new"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := testutil.NewScheduleTask("ns", "t")
			task.Annotations, task.Status.HandledRequests = tt.annotations, tt.status
			if diff := cmp.Diff(tt.want, handledRequests(task)); diff != "" {
				t.Errorf("handled requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsHandled_ALongValueMatchesItsHash(t *testing.T) {
	long := strings.Repeat("x", maxHandledValue+1)
	if got := handledValue(long); len(got) > maxHandledValue || got == long {
		t.Fatalf("handledValue of %d characters = %q, want a hash of at most %d", len(long), got, maxHandledValue)
	}
	for _, tc := range []struct {
		value, handled string
		want           bool
	}{
		{"", "", true},
		{"a", "", false},
		{"a", "a", true},
		{"b", "a", false},
		{long, handledValue(long), true},
		{long + "y", handledValue(long), false},
	} {
		if got := isHandled(tc.value, tc.handled); got != tc.want {
			t.Errorf("isHandled(%.10q, %.10q) = %t, want %t", tc.value, tc.handled, got, tc.want)
		}
	}
}
