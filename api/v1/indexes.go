// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

// Keys of the manager's cache field indexes, for client.MatchingFields. The
// indexes themselves are registered in one place (internal/index) before
// any controller starts; the keys are here, beside the fields they index,
// so a reader of one kind never imports another kind's controller for them.
const (
	// TaskRunTaskNameIndex indexes TaskRuns by spec.scheduleTaskName, the
	// one link a user's manual TaskRun has to its task before the operator
	// adopts it.
	TaskRunTaskNameIndex = "spec.scheduleTaskName"
	// JobTaskIndex indexes Jobs by their task label: a label selector on a
	// cached List is a scan of every Job in the namespace, the index finds
	// one task's Jobs at the same cost with thousands of tasks.
	JobTaskIndex = "metadata.labels." + ScheduleTaskLabel
	// PodJobUIDIndex indexes pods by the UID of the Job that controls them.
	// It is the controller reference, not the Job's controller-uid label:
	// anyone who may create pods can put that label on one, and a pod found
	// by label would give a run another pod's phase, exit code and logs.
	PodJobUIDIndex = "metadata.ownerReferences.controller.job"
	// PodAppIndex indexes pods by their application's name, so a pass finds
	// its pods without scanning every pod of the namespace.
	PodAppIndex = "metadata.labels." + AppNameLabel
	// ReplicaSetAppIndex indexes ReplicaSets by their application's name
	// (the Deployment controller copies the pod template's labels onto
	// them).
	ReplicaSetAppIndex = "metadata.labels." + AppNameLabel
)
