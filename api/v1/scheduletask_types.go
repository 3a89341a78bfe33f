// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
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

// MissedRunsPolicy says what happens to the fire times the CronJob
// controller could not start a run at (it or the whole control plane was
// down across them).
// +kubebuilder:validation:Enum=Skip;RunLatest;RunAll
type MissedRunsPolicy string

const (
	// MissedRunsSkip starts none of them: a run that cannot start within
	// startingDeadlineSeconds (60 seconds when unset) of its fire time is
	// skipped, the latest one too.
	MissedRunsSkip MissedRunsPolicy = "Skip"
	// MissedRunsRunLatest starts the latest one only, late, as a CronJob
	// does; the ones before it are skipped.
	MissedRunsRunLatest MissedRunsPolicy = "RunLatest"
	// MissedRunsRunAll starts one run for each of them, oldest first (the
	// latest by the CronJob, the others by the operator as CatchUp runs),
	// the newest maxMissedRuns at most.
	MissedRunsRunAll MissedRunsPolicy = "RunAll"
)

// Bounds of missed-run handling.
const (
	// DefaultMaxMissedRuns is how many missed fire times RunAll starts
	// when maxMissedRuns is unset.
	DefaultMaxMissedRuns = 10
	// MaxMaxMissedRuns is the most maxMissedRuns may be: as many runs as
	// one backfill may create.
	MaxMaxMissedRuns = 100
	// SkipStartingDeadlineSeconds is the CronJob's startingDeadlineSeconds
	// for a Skip task that sets none: how late a run may start before it
	// counts as missed. Above the CronJob controller's delay on a busy
	// control plane (tens of seconds), below a minute, the shortest period.
	SkipStartingDeadlineSeconds = 60
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
	// ReasonSuspendedAfterFailures: suspendAfterFailures runs failed in a
	// row, so the operator suspended the CronJob (spec.suspend is left as
	// the user wrote it) until the task is resumed or a run succeeds.
	ReasonSuspendedAfterFailures = "SuspendedAfterFailures"

	// ConditionFresh is set on a task with staleAfterSeconds: True while a
	// run has succeeded within that time, False when none has.
	ConditionFresh = "Fresh"
	// ReasonSucceededRecently: a run succeeded within staleAfterSeconds.
	ReasonSucceededRecently = "SucceededRecently"
	// ReasonStale: no run has succeeded for staleAfterSeconds.
	ReasonStale = "Stale"

	// ConditionChildContested is set, on ScheduleTasks and AppDeployments,
	// while someone keeps changing a child (a CronJob, Deployment or
	// Service) that the operator keeps changing back: True after ten
	// repairs within ten minutes, naming the child and the field manager
	// that changes it; removed once the child has gone unchanged for ten
	// minutes. Repairs are spaced out meanwhile. It never touches Ready: a
	// co-tenant's loop must not fail the owner's runs or its kubectl wait.
	ConditionChildContested = "ChildContested"
	// ReasonRepairedRepeatedly: the child was changed back again and again.
	ReasonRepairedRepeatedly = "RepairedRepeatedly"
	// ReasonJobTemplateHeld: a ScheduleTask's job template was changed by
	// another field manager and was put back a moment ago; the CronJob is
	// suspended while the next repair is held back, so no change of the
	// template ever runs. Manual runs start as ever (they are made from
	// the task's own template).
	ReasonJobTemplateHeld = "JobTemplateHeld"
)

// Labels and annotations the operator puts on the objects it creates.
const (
	// ScheduleTaskLabel names the ScheduleTask on its CronJob, Jobs, pods and TaskRuns.
	ScheduleTaskLabel = "platform.example.com/scheduletask"
	// RunNowAnnotation on a ScheduleTask asks for one manual run each time its value changes.
	RunNowAnnotation = "platform.example.com/run-now"
	// ResumeAnnotation on a ScheduleTask, each time its value changes,
	// resumes a task the operator suspended after repeated failures and
	// starts its failure streak again from zero. It does not touch
	// spec.suspend.
	ResumeAnnotation = "platform.example.com/resume"
	// ScheduleTaskFinalizer lets the operator cancel a task's active runs
	// before garbage collection removes them. The mutating webhook puts it
	// on every task it admits at creation (saving the operator a write per
	// task); the operator adds it to a task that arrived without it.
	ScheduleTaskFinalizer = "platform.example.com/cancel-runs"
)

// Bounds of a ScheduleTask's own lists (its container's are beside
// ContainerFields). The schema markers repeat them (markers cannot refer
// to constants; internal/validation tests that the two agree).
const (
	// MaxCapabilities is the most capabilities securityContext.capabilities
	// may add, and the most it may drop.
	MaxCapabilities = 64
	// MaxActiveRuns is the most run names status.activeRuns lists.
	MaxActiveRuns = 100
	// MaxConditions is the most conditions a status may hold.
	MaxConditions = 16
)

// ScheduleTaskSpec is "run this container on this schedule".
// +kubebuilder:validation:XValidation:rule="!has(self.maxMissedRuns) || (has(self.missedRuns) && self.missedRuns == 'RunAll')",message="applies to missedRuns RunAll only: the other policies start one missed run at most",fieldPath=".maxMissedRuns"
// +kubebuilder:validation:XValidation:rule="!has(self.suspendAfterFailures) || self.suspendAfterFailures <= (has(self.failedRunsHistoryLimit) ? self.failedRunsHistoryLimit : 10)",message="must be at most failedRunsHistoryLimit (10 when unset): the failed runs counted are the TaskRuns kept",fieldPath=".suspendAfterFailures"
type ScheduleTaskSpec struct {
	// schedule is a cron expression with the meaning a CronJob gives it: five
	// fields, or one of @yearly, @annually, @monthly, @weekly, @daily,
	// @midnight, @hourly. @every and anything that fires more often than
	// once a minute are refused. A field may be H (a value picked from a
	// hash of the task's namespace and name, stable for the task), H(a-b)
	// (picked from a to b), H/n or H(a-b)/n (every n, from a picked offset),
	// so that many tasks written "H 2 * * *" do not all fire at 02:00; the
	// CronJob gets the concrete schedule, shown in status.effectiveSchedule.
	// At most 256 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ=')",message="must not set a time zone with TZ= or CRON_TZ=; use spec.timeZone"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('@every')",message="@every is not part of the CronJob schedule language; use five fields, e.g. \"*/5 * * * *\""
	Schedule string `json:"schedule,omitempty"`

	// timeZone is the IANA name of the zone the schedule is read in, for
	// example "Europe/Berlin". The kube-controller-manager's zone when unset;
	// when set, not empty and not "Local", which the CronJob API refuses.
	// At most 64 characters.
	// ---
	// Exception to kube-api-linter's optionalfields: "" is now refused
	// (minLength 1, as the CronJob API refuses it), so the field would not
	// need a pointer, but it stays one: nil is "unset" in the CronJob's
	// *string timeZone it is copied to, in the controllers, the CLI and the
	// tests, and the wire format is the same.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.lowerAscii() != 'local'",message="must name an explicit IANA zone such as \"Europe/Berlin\": the CronJob API refuses \"Local\""
	TimeZone *string `json:"timeZone,omitempty"` //nolint:kubeapilinter // nil means unset, as in batch/v1, see above

	// image is the container image to run. At most 512 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// The container's command, args, env and resources, with their
	// bounds.
	ContainerFields `json:",inline"`

	// securityContext is the container's security context. When unset, runs
	// get no privilege escalation and the runtime's default seccomp profile;
	// a task that needs more, or that must meet the restricted Pod Security
	// Standard (runAsNonRoot, capabilities drop ALL), says so here.
	// capabilities.add and capabilities.drop have at most 64 entries of at
	// most 64 characters; seLinuxOptions' strings and the Windows user and
	// credential spec name at most 253 characters, the credential spec 4096,
	// localhost profiles 1024, the other strings 64.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.capabilities) || !has(self.capabilities.add) || (size(self.capabilities.add) <= 64 && self.capabilities.add.all(c, size(c) <= 64))",message="must have at most 64 entries of at most 64 characters",fieldPath=".capabilities.add"
	// +kubebuilder:validation:XValidation:rule="!has(self.capabilities) || !has(self.capabilities.drop) || (size(self.capabilities.drop) <= 64 && self.capabilities.drop.all(c, size(c) <= 64))",message="must have at most 64 entries of at most 64 characters",fieldPath=".capabilities.drop"
	// +kubebuilder:validation:XValidation:rule="!has(self.seLinuxOptions) || ((!has(self.seLinuxOptions.user) || size(self.seLinuxOptions.user) <= 253) && (!has(self.seLinuxOptions.role) || size(self.seLinuxOptions.role) <= 253) && (!has(self.seLinuxOptions.type) || size(self.seLinuxOptions.type) <= 253) && (!has(self.seLinuxOptions.level) || size(self.seLinuxOptions.level) <= 253))",message="user, role, type and level must be at most 253 characters each",fieldPath=".seLinuxOptions"
	// +kubebuilder:validation:XValidation:rule="!has(self.windowsOptions) || ((!has(self.windowsOptions.gmsaCredentialSpecName) || size(self.windowsOptions.gmsaCredentialSpecName) <= 253) && (!has(self.windowsOptions.gmsaCredentialSpec) || size(self.windowsOptions.gmsaCredentialSpec) <= 4096) && (!has(self.windowsOptions.runAsUserName) || size(self.windowsOptions.runAsUserName) <= 253))",message="gmsaCredentialSpecName and runAsUserName must be at most 253 characters each, gmsaCredentialSpec at most 4096",fieldPath=".windowsOptions"
	// +kubebuilder:validation:XValidation:rule="!has(self.procMount) || size(self.procMount) <= 64",message="must be at most 64 characters",fieldPath=".procMount"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || (size(self.seccompProfile.type) <= 64 && (!has(self.seccompProfile.localhostProfile) || size(self.seccompProfile.localhostProfile) <= 1024))",message="type must be at most 64 characters, localhostProfile at most 1024",fieldPath=".seccompProfile"
	// +kubebuilder:validation:XValidation:rule="!has(self.appArmorProfile) || (size(self.appArmorProfile.type) <= 64 && (!has(self.appArmorProfile.localhostProfile) || size(self.appArmorProfile.localhostProfile) <= 1024))",message="type must be at most 64 characters, localhostProfile at most 1024",fieldPath=".appArmorProfile"
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// serviceAccountName is the ServiceAccount the run's pod uses. At most
	// 253 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName *string `json:"serviceAccountName,omitempty"`

	// template is the pod template of every run's pod: anything a Job's pod
	// template may say, such as volumes (a Secret or a PersistentVolumeClaim
	// to back up), envFrom, imagePullSecrets, init containers and sidecars,
	// node selectors, tolerations, affinity, priority class, and pod labels
	// and annotations. The fields above win: image, command, args, env (by
	// name), resources, securityContext and serviceAccountName apply to the
	// task container, the template's container named "task" (added first
	// when the template has none); every other container, volume and pod
	// field passes through as written. Its labels must not be the
	// operator's (app.kubernetes.io/managed-by or any platform.example.com/
	// label), its restartPolicy, when set, must be Never (the default) or
	// OnFailure, and it holds at most 64 KiB as JSON.
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`

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

	// suspendAfterFailures suspends the task's schedule, when set, after
	// that many runs in a row failed: the operator suspends the CronJob
	// (spec.suspend stays as written), sets Ready to False with reason
	// SuspendedAfterFailures and sends a Warning event. Setting a new value
	// of the platform.example.com/resume annotation (`kubectl stask resume`)
	// or a succeeding manual run resumes it. At most failedRunsHistoryLimit,
	// since the failures counted are the failed TaskRuns kept.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	SuspendAfterFailures int32 `json:"suspendAfterFailures,omitempty"`

	// staleAfterSeconds is how long the task may go without a succeeded
	// run, when set: past it, the Fresh condition turns False and names
	// the last success (the "backup did not run" alarm). Counted from the
	// task's creation until a first run succeeds. At least 60.
	// +optional
	// +kubebuilder:validation:Minimum=60
	StaleAfterSeconds int64 `json:"staleAfterSeconds,omitempty"`

	// missedRuns says what happens to the fire times at which no run could
	// start because the CronJob controller (or the whole control plane) was
	// down: Skip starts none of them, RunLatest (the default, a CronJob's
	// own behaviour) starts the latest, late, and RunAll starts one run for
	// each, oldest first: the latest by the CronJob, the others as TaskRuns
	// with trigger CatchUp and the missed scheduledTime, whose Jobs have the
	// names the CronJob would have given them. Fire times passed while the
	// task was suspended, or skipped because a run was active and
	// concurrencyPolicy is Forbid, are not missed. The operator counts the
	// missed ones in status.missedRuns, with a Warning event naming them,
	// when the next scheduled run starts.
	// +optional
	// +default="RunLatest"
	MissedRuns MissedRunsPolicy `json:"missedRuns,omitempty"`

	// maxMissedRuns is how many missed fire times RunAll starts at most,
	// the newest ones: 10 when unset, at most 100.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxMissedRuns int32 `json:"maxMissedRuns,omitempty"`
}

// ScheduleTaskStatus is rebuilt by the operator from the task's CronJob and
// TaskRuns on every reconcile.
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
	// Exception to kube-api-linter's nobools and optionalfields: a bool that is
	// always written (no omitempty), so that the Active column of
	// `kubectl get scheduletasks` shows false rather than nothing; the field
	// and its JSON are in use.
	// +optional
	Active bool `json:"active"` //nolint:kubeapilinter // always-written bool for the Active column, see above

	// activeRuns are the names of the TaskRuns in progress, in name order;
	// the first 100 when more are active (active stays true).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=253
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

	// effectiveSchedule is the schedule the task's CronJob runs on:
	// spec.schedule with every H replaced by the value picked for this
	// task. At most 256 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	EffectiveSchedule string `json:"effectiveSchedule,omitempty"`

	// consecutiveFailures is how many runs in a row failed since the last
	// success (or the last resume); unset when none did.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ConsecutiveFailures int32 `json:"consecutiveFailures,omitempty"`

	// missedRuns is how many fire times were missed (no run could start at
	// them; see spec.missedRuns) since the task was created; unset when
	// none were.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MissedRuns int64 `json:"missedRuns,omitempty"`

	// lastMissedTime is the newest fire time counted in missedRuns.
	// +optional
	LastMissedTime *metav1.Time `json:"lastMissedTime,omitempty"`

	// missedRunsCheckedTime is the time up to which every fire time is
	// accounted for: it started a run, was counted in missedRuns, or passed
	// while the task was suspended or before its spec last changed.
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

// SuspendedAfterFailures reports whether the task's status says the
// operator suspended its schedule after repeated failures (Ready is False
// with reason SuspendedAfterFailures).
func (st *ScheduleTask) SuspendedAfterFailures() bool {
	c := meta.FindStatusCondition(st.Status.Conditions, ConditionReady)
	return c != nil && c.Reason == ReasonSuspendedAfterFailures
}

// Suspended reports whether the task's status says its schedule is
// suspended, by spec.suspend or after repeated failures.
func (st *ScheduleTask) Suspended() bool {
	c := meta.FindStatusCondition(st.Status.Conditions, ConditionReady)
	return c != nil && (c.Reason == ReasonSuspended || c.Reason == ReasonSuspendedAfterFailures)
}
