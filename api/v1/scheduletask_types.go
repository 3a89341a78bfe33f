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

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConcurrencyPolicy says what to do when a run is due while an earlier run of
// the same task is still active. The values mirror batch/v1 CronJob's, because
// the operator hands them to the CronJob controller unchanged.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// AllowConcurrent lets runs overlap.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips a run that is due while another is active.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent stops the active run and starts the new one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// RunResult is the outcome of a finished run.
// +kubebuilder:validation:Enum=Succeeded;Failed
type RunResult string

const (
	// RunSucceeded means the run's Job completed.
	RunSucceeded RunResult = "Succeeded"
	// RunFailed means the run's Job failed, timed out or was cancelled.
	RunFailed RunResult = "Failed"
)

// Condition types and reasons of a ScheduleTask.
const (
	// ConditionReady is True when the task's CronJob exists and matches the spec.
	ConditionReady = "Ready"

	// ReasonCronJobReady: the CronJob exists and matches the spec.
	ReasonCronJobReady = "CronJobReady"
	// ReasonSuspended: the task is suspended, so no new runs are scheduled.
	ReasonSuspended = "Suspended"
	// ReasonCronJobError: the CronJob could not be created or updated.
	ReasonCronJobError = "CronJobError"
)

// Labels and annotations the operator puts on the objects it creates.
const (
	// ScheduleTaskLabel names the ScheduleTask on its CronJob, Jobs, pods and TaskRuns.
	ScheduleTaskLabel = "platform.example.com/scheduletask"
	// RunNowAnnotation on a ScheduleTask asks for one manual run each time its value changes.
	RunNowAnnotation = "platform.example.com/run-now"
)

// ScheduleTaskSpec is "run this container on this schedule".
type ScheduleTaskSpec struct {
	// schedule is a cron expression with the meaning a CronJob gives it: five
	// fields, or one of @yearly, @annually, @monthly, @weekly, @daily,
	// @midnight, @hourly.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ=')",message="must not set a time zone with TZ= or CRON_TZ=; use spec.timeZone"
	Schedule string `json:"schedule,omitempty"`

	// timeZone is the IANA name of the zone the schedule is read in, for
	// example "Europe/Berlin". The kube-controller-manager's zone when unset.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TimeZone *string `json:"timeZone,omitempty"`

	// image is the container image to run.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// command overrides the image's entrypoint.
	// +optional
	// +listType=atomic
	Command []string `json:"command,omitempty"`

	// args are the arguments to the entrypoint.
	// +optional
	// +listType=atomic
	Args []string `json:"args,omitempty"`

	// env sets environment variables in the container.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`

	// resources are the container's compute requests and limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// securityContext is the container's security context. When unset, runs
	// get no privilege escalation and the runtime's default seccomp profile;
	// a task that needs more, or that must meet the restricted Pod Security
	// Standard (runAsNonRoot, capabilities drop ALL), says so here.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// serviceAccountName is the ServiceAccount the run's pod uses.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName *string `json:"serviceAccountName,omitempty"`

	// concurrencyPolicy says what happens when a run is due while another is
	// still active: Allow, Forbid or Replace.
	// +optional
	// +default="Allow"
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// backoffLimit is the number of retries after a failed attempt, as in a Job.
	// +optional
	// +default=6
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// activeDeadlineSeconds is the timeout of one run, counted from its start.
	// ---
	// Exception to kube-api-linter's optionalfields: 0 is invalid, so the field
	// would not need a pointer, but it stays one: nil is "no timeout" in the
	// Job's *int64 activeDeadlineSeconds it is copied to, and the wire format
	// and the validation are the same either way.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"` //nolint:kubeapilinter // pointer mirrors batch/v1, see above

	// startingDeadlineSeconds is how late a missed run may still start.
	// ---
	// Exception to kube-api-linter's optionalfields, as for
	// activeDeadlineSeconds: a pointer like the CronJob's
	// *int64 startingDeadlineSeconds it is copied to.
	// +optional
	// +kubebuilder:validation:Minimum=10
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"` //nolint:kubeapilinter // pointer mirrors batch/v1, see above

	// suspend stops new scheduled runs; runs already started go on.
	// ---
	// Exception to kube-api-linter's nobools: a bool because it mirrors
	// CronJob's spec.suspend, which the operator copies it to, and because the
	// field is in use.
	// +optional
	// +default=false
	Suspend *bool `json:"suspend,omitempty"` //nolint:kubeapilinter // mirrors CronJob's suspend, see above

	// successfulRunsHistoryLimit is how many succeeded TaskRuns to keep.
	// +optional
	// +default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	SuccessfulRunsHistoryLimit *int32 `json:"successfulRunsHistoryLimit,omitempty"`

	// failedRunsHistoryLimit is how many failed TaskRuns to keep.
	// +optional
	// +default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`
}

// ScheduleTaskStatus is rebuilt by the operator from the task's CronJob and
// TaskRuns on every reconcile.
type ScheduleTaskStatus struct {
	// conditions are the latest observations of the task's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// lastScheduleTime is when a run was last started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// lastSuccessfulTime is when a run last succeeded.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// lastTaskRunName is the name of the newest TaskRun.
	// +optional
	// +kubebuilder:validation:MinLength=1
	LastTaskRunName string `json:"lastTaskRunName,omitempty"`

	// triggerCount is the number of runs ever started; unset until the first.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TriggerCount int64 `json:"triggerCount,omitempty"`

	// active is true while a run is in progress.
	// ---
	// Exception to kube-api-linter's nobools and optionalfields: a bool that is
	// always written (no omitempty), so that the Active column of
	// `kubectl get scheduletasks` shows false rather than nothing; the field
	// and its JSON are in use.
	// +optional
	Active bool `json:"active"` //nolint:kubeapilinter // always-written bool for the Active column, see above

	// activeRuns are the names of the TaskRuns in progress.
	// +optional
	// +listType=atomic
	ActiveRuns []string `json:"activeRuns,omitempty"`

	// nextScheduleTime is when the next scheduled run is due, computed in the
	// task's time zone. Right after a fire time it may still name that time
	// until the run's Job appears (for at most 30 seconds when the CronJob
	// controller is slow or down).
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// lastResult is the result of the newest finished run.
	// +optional
	LastResult RunResult `json:"lastResult,omitempty"`

	// observedGeneration is the spec generation the status describes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=stask,categories=platform
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Active",type=boolean,JSONPath=`.status.active`
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextScheduleTime`
// +kubebuilder:printcolumn:name="Last Result",type=string,JSONPath=`.status.lastResult`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ScheduleTask runs a container on a schedule. The operator turns it into an
// owned CronJob and records every run as a TaskRun.
type ScheduleTask struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the task: what to run and when.
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
		s.AddKnownTypes(SchemeGroupVersion, &ScheduleTask{}, &ScheduleTaskList{})
		return nil
	})
}
