// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// The annotations in which managers before status.handledRequests kept what
// they had acted on. Anyone who may edit a task can write an annotation, so
// removing one replayed its request (a second run, in the first
// requester's name): they are read once, on upgrade, and never written.
const (
	legacyRunNowHandledAnnotation = "platform.example.com/run-now-handled"
	legacyResumeHandledAnnotation = "platform.example.com/resume-handled"
	legacyResumedAtAnnotation     = "platform.example.com/resumed-at"
)

// maxHandledValue is the longest request value status.handledRequests keeps
// as it is (its schema's maxLength); a longer one is kept as its hash.
const maxHandledValue = 63

// handledValue is the form in which status.handledRequests keeps a request
// annotation's value: as it is when it fits, else a hash of it, which an
// unchanged value still matches.
func handledValue(v string) string {
	if len(v) <= maxHandledValue {
		return v
	}
	return "sha256:" + shortHash(v)
}

// isHandled says whether value, a request annotation's value, was already
// acted on when handled was recorded: an empty value asks for nothing.
func isHandled(value, handled string) bool {
	return value == "" || handledValue(value) == handled
}

// handledRequests is what the operator has acted on, from the task's
// status. A task whose status holds nothing yet, handled by a manager
// before status.handledRequests, has it in that manager's annotations: they
// are taken once, by the first pass of this manager, which writes them to
// status before it acts on any request, so an upgrade replays nothing.
// After that the annotations are ignored.
func handledRequests(task *platformv1.ScheduleTask) platformv1.ScheduleTaskHandledRequests {
	h := *task.Status.HandledRequests.DeepCopy()
	if h.RunNow != "" || h.Resume != "" || h.ResumedAt != nil {
		return h
	}
	a := task.Annotations
	if v := a[legacyRunNowHandledAnnotation]; v != "" {
		h.RunNow = handledValue(v)
	}
	if v := a[legacyResumeHandledAnnotation]; v != "" {
		h.Resume = handledValue(v)
	}
	if t, err := time.Parse(time.RFC3339, a[legacyResumedAtAnnotation]); err == nil {
		h.ResumedAt = &metav1.Time{Time: t}
	}
	return h
}
