// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ScheduleTaskSpec is the first design of a scheduled task. It has no
// concurrency policy: converted to v1, a task gets v1's default, Allow.
// +kubebuilder:validation:XValidation:rule="!has(self.command) || self.command.map(c, size(c)).sum() <= 32768",message="command must hold at most 32768 characters together"
type ScheduleTaskSpec struct {
	// schedule is a cron expression, as in v1. At most 256 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Schedule string `json:"schedule,omitempty"`

	// image is the container image to run. At most 512 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// command overrides the image's entrypoint. At most 64 entries of at
	// most 16384 characters each, and 32768 characters together, as in v1.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=16384
	Command []string `json:"command,omitempty"`

	// backoffLimit is the number of retries after a failed attempt.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// activeDeadlineSeconds is the timeout of one run.
	// ---
	// Exception to kube-api-linter's optionalfields: a pointer like v1's
	// activeDeadlineSeconds, which it converts to and from unchanged.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"` //nolint:kubeapilinter // as v1's, see above

	// suspend stops new scheduled runs.
	// ---
	// Exception to kube-api-linter's nobools: v1's suspend, which mirrors
	// CronJob's spec.suspend.
	// +optional
	Suspend *bool `json:"suspend,omitempty"` //nolint:kubeapilinter // mirrors CronJob's suspend, see above
}

// RunResult is the outcome of a finished run, as in v1.
// +kubebuilder:validation:Enum=Succeeded;Failed
type RunResult string

// ScheduleTaskStatus has every field of v1's status. Status is the
// operator's to shape, so this older version's status grew to v1's: status
// then converts field by field, and nothing of it travels in the
// platform.example.com/v1-data annotation, which anyone who may update the
// task can write.
type ScheduleTaskStatus struct {
	// conditions are the latest observations of the task's state. At most 16.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// lastScheduleTime is when a run was last started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// lastSuccessfulTime is when a run last succeeded.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// lastTaskRunName is the name of the newest TaskRun. At most 253 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	LastTaskRunName string `json:"lastTaskRunName,omitempty"`

	// triggerCount is the number of runs ever started; unset until the first.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TriggerCount int64 `json:"triggerCount,omitempty"`

	// active is true while a run is in progress.
	// ---
	// Exception to kube-api-linter's nobools and optionalfields: v1's
	// status.active, a bool in use; this version has always omitted it when
	// false, so false and unset are one.
	// +optional
	Active bool `json:"active,omitempty"` //nolint:kubeapilinter // v1's status.active, see above

	// activeRuns are the names of the TaskRuns in progress, in name order;
	// the first 100 when more are active (active stays true).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=253
	ActiveRuns []string `json:"activeRuns,omitempty"`

	// nextScheduleTime is when the next scheduled run is due.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// lastResult is the result of the newest finished run.
	// +optional
	LastResult RunResult `json:"lastResult,omitempty"`

	// effectiveSchedule is the schedule the task's CronJob runs on. At most
	// 256 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	EffectiveSchedule string `json:"effectiveSchedule,omitempty"`

	// consecutiveFailures is how many runs in a row failed since the last
	// success (or the last resume); unset when none did.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ConsecutiveFailures int32 `json:"consecutiveFailures,omitempty"`

	// missedRuns is how many fire times were missed since the task was
	// created; unset when none were.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MissedRuns int64 `json:"missedRuns,omitempty"`

	// lastMissedTime is the newest fire time counted in missedRuns.
	// +optional
	LastMissedTime *metav1.Time `json:"lastMissedTime,omitempty"`

	// missedRunsCheckedTime is the time up to which every fire time is
	// accounted for.
	// +optional
	MissedRunsCheckedTime *metav1.Time `json:"missedRunsCheckedTime,omitempty"`

	// handledRequests are the request annotations' values acted on.
	// +optional
	HandledRequests ScheduleTaskHandledRequests `json:"handledRequests,omitzero"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// ScheduleTaskHandledRequests are the request annotations' values the
// operator acted on, kept in status so that only the operator can write
// them: a value is acted on once, and forgetting it (which anyone who may
// edit the task could do to an annotation) cannot make it act again.
// +kubebuilder:validation:MinProperties=1
type ScheduleTaskHandledRequests struct {
	// runNow is the handled value of the run-now annotation (a longer
	// value is kept as its hash).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	RunNow string `json:"runNow,omitempty"`

	// resume is the handled value of the resume annotation (a longer value
	// is kept as its hash).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Resume string `json:"resume,omitempty"`

	// resumedAt is when the task was last resumed: failures before it do
	// not count towards suspendAfterFailures.
	// +optional
	ResumedAt *metav1.Time `json:"resumedAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=stask,categories=platform
// +kubebuilder:deprecatedversion:warning="platform.example.com/v1alpha1 ScheduleTask is deprecated; use platform.example.com/v1"

// ScheduleTask runs a container on a schedule (first design; use v1). The
// version is deprecated: it is served through the next minor release and
// removed in the one after (docs/admission.md).
type ScheduleTask struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the task.
	// +required
	Spec ScheduleTaskSpec `json:"spec,omitzero"`

	// status is the observed state of the task.
	// ---
	// Exception to kube-api-linter's optionalfields: a value omitted when zero,
	// not a pointer, as the status of every Kubernetes object is
	// (kubernetes-sigs/kube-api-linter#192).
	// +optional
	Status ScheduleTaskStatus `json:"status,omitzero"` //nolint:kubeapilinter // status is a value, see above
}

// +kubebuilder:object:root=true

// ScheduleTaskList contains a list of ScheduleTask.
type ScheduleTaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []ScheduleTask `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &ScheduleTask{}, &ScheduleTaskList{})
		return nil
	})
}
