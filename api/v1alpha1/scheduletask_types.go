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

// ScheduleTaskStatus is the part of v1's status the first design had.
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

	// active is true while a run is in progress.
	// ---
	// Exception to kube-api-linter's nobools and optionalfields: v1's
	// status.active, a bool in use; this version has always omitted it when
	// false, so false and unset are one.
	// +optional
	Active bool `json:"active,omitempty"` //nolint:kubeapilinter // v1's status.active, see above
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=stask,categories=platform

// ScheduleTask runs a container on a schedule (first design; use v1).
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
