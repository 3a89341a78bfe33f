// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

// Names and values that users, the CLI and the controllers all see. They are
// part of the API: a change here is a change users notice.

const (
	// ManagedByLabel and ManagedByValue mark every object the operator
	// creates, directly or through a template (CronJobs, Jobs, pods, TaskRuns
	// it records). The manager caches children of the built-in kinds only
	// when they carry it, so its memory follows what it manages, not the
	// size of the cluster.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "platform-operator"

	// TaskContainerName is the name of the one container of every run's pod;
	// `kubectl stask logs` reads it.
	TaskContainerName = "task"
	// AppContainerName is the name of an AppDeployment's application
	// container: the one its image, command, args, env, resources, port and
	// health check are for, among whatever others its template has.
	AppContainerName = "app"

	// DefaultBackoffLimit is the retries of a run when spec.backoffLimit is
	// unset; it matches the CRD's default for that field.
	DefaultBackoffLimit int32 = 6
	// DefaultRunsHistoryLimit is how many succeeded, and how many failed,
	// runs a task keeps when its history limits are unset; it matches the
	// CRD's defaults for those fields.
	DefaultRunsHistoryLimit int32 = 10
)

const (
	// TaskRunUIDAnnotation on a manual run's Job holds its TaskRun's UID: the
	// Job and the TaskRun are matched by UID, never by name alone.
	TaskRunUIDAnnotation = "platform.example.com/taskrun-uid"
	// RunNumberAnnotation on a TaskRun is its place in the count of runs the
	// task ever started, so status.triggerCount survives retention.
	RunNumberAnnotation = "platform.example.com/run-number"
	// StopReasonAnnotation and StopMessageAnnotation on a TaskRun are how the
	// ScheduleTask controller asks the TaskRun controller, the one writer of
	// a run's status, to end a run that is not to go on: a manual run that
	// may not start (ReasonConcurrencyForbidden, ReasonJobNameTaken) or an
	// active run of a task being deleted (ReasonCancelled).
	StopReasonAnnotation  = "platform.example.com/stop-reason"
	StopMessageAnnotation = "platform.example.com/stop-message"
	// RecordedLabel on a run's Job says that the run's TaskRun has recorded
	// it finished, so nothing the Job does can change the record any more.
	// The operator sets it (value "true") and its cache selects only the
	// children without it: the manager's memory follows the runs in progress,
	// not the finished Jobs a CronJob's history keeps.
	RecordedLabel = "platform.example.com/recorded"
)

// Reasons a run ended without its Job finishing, beside ReasonCancelled.
const (
	// ReasonConcurrencyForbidden ends a manual run that was asked for while
	// another run was active and the task's concurrencyPolicy is Forbid.
	ReasonConcurrencyForbidden = "ConcurrencyForbidden"
	// ReasonJobNameTaken ends a manual run whose Job name is held by a Job
	// of another run.
	ReasonJobNameTaken = "JobNameTaken"
)

const (
	// RequestedByAnnotation on a manual TaskRun names the user who asked for
	// it: set at admission from the request's authenticated user (for a
	// run-now run, the user who set the annotation), never by the user, and
	// immutable.
	RequestedByAnnotation = "platform.example.com/requested-by"
	// RunNowRequestedByAnnotation on a ScheduleTask names the user who last
	// set RunNowAnnotation; admission sets it, the operator copies it to the
	// run it starts as RequestedByAnnotation.
	RunNowRequestedByAnnotation = "platform.example.com/run-now-requested-by"
	// OperatorKeyPrefix starts every label and annotation key of a TaskRun
	// that the operator owns: users may neither set nor change them.
	OperatorKeyPrefix = "platform.example.com/"
)

// The RunsAdopted condition of a ScheduleTask.
const (
	// ConditionRunsAdopted is False while a TaskRun naming the task cannot be
	// adopted by it; the rest of the task's bookkeeping goes on regardless.
	ConditionRunsAdopted = "RunsAdopted"
	// ReasonAllRunsAdopted: every TaskRun naming the task is the task's.
	ReasonAllRunsAdopted = "AllRunsAdopted"
	// ReasonForeignController: a TaskRun naming the task is controlled by
	// another object, so the operator cannot take it over. It is also the
	// reason of the Warning event sent when that begins.
	ReasonForeignController = "ForeignController"
)
