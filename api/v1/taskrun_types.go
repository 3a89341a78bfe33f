// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Trigger says what started a run.
// +kubebuilder:validation:Enum=Scheduled;Manual;Backfill;CatchUp
type Trigger string

const (
	// TriggerScheduled: the CronJob started the run on its schedule.
	TriggerScheduled Trigger = "Scheduled"
	// TriggerManual: a user asked for the run.
	TriggerManual Trigger = "Manual"
	// TriggerBackfill: a user asked for the run of a past fire time
	// (spec.scheduledTime), as `kubectl stask backfill` does.
	TriggerBackfill Trigger = "Backfill"
	// TriggerCatchUp: the operator started the run for a fire time the
	// CronJob missed (spec.scheduledTime), as the task's missedRuns RunAll
	// asks.
	TriggerCatchUp Trigger = "CatchUp"
)

// ScheduledTimeEnv is the environment variable a run the operator starts
// itself (manual, backfill and catch-up runs) gets: the time it stands for,
// RFC 3339 in UTC (a backfill or catch-up run's scheduledTime, a manual
// run's creation). A
// scheduled run's Job is the CronJob's, whose template cannot carry it.
const ScheduledTimeEnv = "PLATFORM_SCHEDULED_TIME"

// TaskRunPhase is where a run is in its life.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type TaskRunPhase string

const (
	// TaskRunPending: the run is recorded but no pod runs yet.
	TaskRunPending TaskRunPhase = "Pending"
	// TaskRunRunning: a pod of the run has started.
	TaskRunRunning TaskRunPhase = "Running"
	// TaskRunSucceeded: the run's Job completed.
	TaskRunSucceeded TaskRunPhase = "Succeeded"
	// TaskRunFailed: the run's Job failed, timed out or was cancelled.
	TaskRunFailed TaskRunPhase = "Failed"
)

// Condition types and reasons of a TaskRun.
const (
	// ConditionSucceeded is Unknown while the run goes on, then True or False.
	ConditionSucceeded = "Succeeded"

	// ReasonCompleted: the Job completed.
	ReasonCompleted = "Completed"
	// ReasonBackoffLimitExceeded: every attempt the backoffLimit allows failed.
	ReasonBackoffLimitExceeded = "BackoffLimitExceeded"
	// ReasonDeadlineExceeded: the run took longer than activeDeadlineSeconds.
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonCancelled: the run was stopped, for example because its task was deleted.
	ReasonCancelled = "Cancelled"
	// ReasonTaskNotFound: a manual run's ScheduleTask did not exist (it was
	// deleted, or never made) for the whole grace period after the run was
	// created, so no Job could be started for it.
	ReasonTaskNotFound = "TaskNotFound"
	// ReasonTaskCannotRun: a manual run's ScheduleTask existed but had no
	// usable CronJob (Ready False, for example because the CronJob API
	// refused it) for the whole grace period after the run was created.
	ReasonTaskCannotRun = "TaskCannotRun"
)

// JobRef identifies the Job that carries a run. Name and UID together, so a
// later Job of the same name is never mistaken for this one.
type JobRef struct {
	// name of the Job. At most 63 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// uid of the Job. At most 128 characters.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	UID types.UID `json:"uid,omitempty"`
}

// TaskRunSpec says which task a run belongs to and what started it. It is a
// record, so it cannot change after creation; the one exception is jobRef,
// which the operator sets once on a manual run when it starts the run's Job.
// +kubebuilder:validation:XValidation:rule="has(self.scheduledTime) == has(oldSelf.scheduledTime)",message="scheduledTime is immutable"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.jobRef) || has(self.jobRef)",message="jobRef cannot be removed once set"
// +kubebuilder:validation:XValidation:rule="has(self.args) == has(oldSelf.args)",message="args is immutable"
// +kubebuilder:validation:XValidation:rule="!has(self.trigger) || (self.trigger != 'Backfill' && self.trigger != 'CatchUp') || has(self.scheduledTime)",message="a Backfill or CatchUp run needs scheduledTime, the fire time it stands for",fieldPath=".scheduledTime"
// +kubebuilder:validation:XValidation:rule="has(self.env) == has(oldSelf.env)",message="env is immutable"
type TaskRunSpec struct {
	// scheduleTaskName is the name of the ScheduleTask, in the same
	// namespace. At most 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="scheduleTaskName is immutable"
	ScheduleTaskName string `json:"scheduleTaskName,omitempty"`

	// trigger says what started the run: Scheduled (the CronJob), Manual
	// (a user, now), Backfill (a user, for the past fire time in
	// scheduledTime) or CatchUp (the operator, for a fire time in
	// scheduledTime that the CronJob missed; see the task's missedRuns).
	// +optional
	// +default="Manual"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="trigger is immutable"
	Trigger Trigger `json:"trigger,omitempty"`

	// scheduledTime is the time the schedule asked for the run: set by the
	// operator on a scheduled or catch-up run, by the user on a backfill
	// run (a fire time of the task's schedule, not in the future).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="scheduledTime is immutable"
	ScheduledTime *metav1.Time `json:"scheduledTime,omitempty"`

	// jobRef is the Job that carries the run; set by the operator, once.
	// ---
	// Exception to kube-api-linter's optionalfields: a JobRef is never empty
	// (both its fields are required), so a value with omitzero would do, but
	// jobRef stays a pointer: nil is how the controllers, the CLI and the tests
	// tell a run that has no Job yet, and the wire format is the same.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="jobRef is immutable once set"
	JobRef *JobRef `json:"jobRef,omitempty,omitzero"` //nolint:kubeapilinter // nil means no Job yet, see above

	// args replace the task's args for this run only; a manual run's
	// parameter, recorded here so the history says what ran. Setting args or
	// env needs the right to create Jobs in the namespace, since they change
	// what runs under the task's ServiceAccount; the run verb alone starts
	// the task as written. The task's bounds apply: at most 256 entries of
	// at most 16384 characters, and with the task's command and env at most
	// 32768 characters in all.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=16384
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="args is immutable"
	Args []string `json:"args,omitempty"`

	// env adds variables to the task's environment for this run only, or
	// replaces the task's of the same name; a manual run's parameter, like
	// args. At most 128 variables; a name has at most 256 characters and a
	// value at most 16384.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:XValidation:rule="size(self.name) <= 256",message="must be at most 256 characters",fieldPath=".name"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.value) || size(self.value) <= 16384",message="must be at most 16384 characters",fieldPath=".value"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="env is immutable"
	Env []corev1.EnvVar `json:"env,omitempty"`
}

// HasParameters reports whether the run overrides the task's args or env.
func (s *TaskRunSpec) HasParameters() bool {
	return len(s.Args) > 0 || len(s.Env) > 0
}

// RunArgs are the args the run's container gets: the run's own, else the
// task's.
func (s *TaskRunSpec) RunArgs(taskArgs []string) []string {
	if len(s.Args) > 0 {
		return s.Args
	}
	return taskArgs
}

// RunEnv is the environment the run's container gets: the task's, each
// variable the run sets replacing the task's of the same name in place,
// and the run's other variables after them in the run's order.
func (s *TaskRunSpec) RunEnv(taskEnv []corev1.EnvVar) []corev1.EnvVar {
	if len(s.Env) == 0 {
		return taskEnv
	}
	out := make([]corev1.EnvVar, 0, len(taskEnv)+len(s.Env))
	set := make(map[string]int, len(s.Env))
	for i, e := range s.Env {
		set[e.Name] = i
	}
	used := make(map[string]bool, len(s.Env))
	for _, e := range taskEnv {
		if i, ok := set[e.Name]; ok {
			e = s.Env[i]
			used[e.Name] = true
		}
		out = append(out, e)
	}
	for _, e := range s.Env {
		if !used[e.Name] {
			out = append(out, e)
		}
	}
	return out
}

// TaskRunStatus follows the run's Job and pods.
type TaskRunStatus struct {
	// conditions are the latest observations of the run's state. At most 16.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// phase is Pending, Running, Succeeded or Failed.
	// ---
	// Exception to kube-api-linter's nophase: the Succeeded condition is the
	// run's state for controllers; phase is kept beside it for kubectl users
	// (the Phase column, `kubectl get trun`) and the CLI, and it is in use.
	// +optional
	Phase TaskRunPhase `json:"phase,omitempty"` //nolint:kubeapilinter // kept beside conditions for kubectl users, see above

	// startTime is when the run's Job started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the run finished, successfully or not.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// duration is completionTime minus startTime, for display. At most 64
	// characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Duration string `json:"duration,omitempty"`

	// attempts is the number of pods tried; unset until the first.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Attempts int32 `json:"attempts,omitempty"`

	// reason is a CamelCase word for why the run is in its phase, for example
	// Completed, BackoffLimitExceeded, DeadlineExceeded or Cancelled. At
	// most 1024 characters, as a condition's reason.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`

	// message is a human-readable account of the reason. At most 32768
	// characters, as a condition's message.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	Message string `json:"message,omitempty"`

	// exitCode is the exit code of the last failed container.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`

	// podName is the name of the run's last pod. At most 253 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	PodName string `json:"podName,omitempty"`

	// runNumber is the run's place in the count of the runs its task ever
	// started (the platform.example.com/run-number annotation the operator
	// gives it), in the status so that the record carries it as a field;
	// unset until the run is adopted.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RunNumber int64 `json:"runNumber,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=trun,categories=platform
// +kubebuilder:printcolumn:name="Task",type=string,JSONPath=`.spec.scheduleTaskName`
// +kubebuilder:printcolumn:name="Trigger",type=string,JSONPath=`.spec.trigger`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Start",type=date,JSONPath=`.status.startTime`
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.status.duration`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// TaskRun is the durable record of one execution of a ScheduleTask. The
// operator creates one for every Job of the task's CronJob; a user creates one
// with trigger Manual to run the task now.
type TaskRun struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec says which task the run belongs to and what started it.
	// +required
	Spec TaskRunSpec `json:"spec,omitzero"`

	// status is the observed state of the run.
	// ---
	// Exception to kube-api-linter's optionalfields: a value omitted when zero,
	// not a pointer, as the status of every Kubernetes object is
	// (kubernetes-sigs/kube-api-linter#192).
	// +optional
	Status TaskRunStatus `json:"status,omitzero"` //nolint:kubeapilinter // status is a value, see above
}

// +kubebuilder:object:root=true

// TaskRunList contains a list of TaskRun.
type TaskRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []TaskRun `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &TaskRun{}, &TaskRunList{})
		return nil
	})
}

// IsFinished reports whether the run reached its final phase; a finished run
// is a record that nothing changes any more.
func (tr *TaskRun) IsFinished() bool {
	return tr.Status.Phase == TaskRunSucceeded || tr.Status.Phase == TaskRunFailed
}

// MaxRunNumber is the highest run number the operator believes: 2^53, more
// runs than a task firing every minute makes in ten billion years, and the
// largest integer a JSON client in JavaScript reads exactly. A higher number
// was written by hand, and counting on from it would overflow the count.
const MaxRunNumber int64 = 1 << 53

// RunNumber returns the run's number: its RunNumberAnnotation, or
// status.runNumber where the annotation is not at hand (the manager caches a
// finished run without its annotations); 0 when it has none yet, or one that
// cannot be true (below 1 or above MaxRunNumber).
func (tr *TaskRun) RunNumber() int64 {
	n := tr.Status.RunNumber
	if v, ok := tr.Annotations[RunNumberAnnotation]; ok {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0
		}
	}
	if n < 1 || n > MaxRunNumber {
		return 0
	}
	return n
}

// DueTime is when the run was asked for: its scheduled time, else its creation.
func (tr *TaskRun) DueTime() time.Time {
	if tr.Spec.ScheduledTime != nil {
		return tr.Spec.ScheduledTime.Time
	}
	return tr.CreationTimestamp.Time
}
