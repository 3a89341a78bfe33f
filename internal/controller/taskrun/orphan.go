// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/text"
)

// DefaultManualRunGrace is how long a manual run may wait for a task that
// does not exist or cannot run before it ends Failed: long enough for a
// task applied together with the run, or for a CronJob the API refused a
// moment ago to be put right, and short enough that nobody waits on a run
// that will never start.
const DefaultManualRunGrace = 60 * time.Second

// orphanVerdict is why a manual run that never got a Job must end.
type orphanVerdict struct {
	reason, message string
}

// checkOrphan looks at a run that has no Job yet and nobody asked to stop.
// The ScheduleTask controller starts a manual run's Job only while the task
// exists and has its CronJob; when neither has been so for the grace period
// since the run was made (and, for a task that cannot run, since it last
// became unable to), the run ends Failed with TaskNotFound or TaskCannotRun
// instead of staying Pending forever. Otherwise obs.orphanRecheck says when
// to look again: no event wakes the run when time passes.
//
// The task is read live: the verdict is final, and the cache may be behind
// a task created or repaired a moment ago.
func (r *Reconciler) checkOrphan(ctx context.Context, tr *platformv1.TaskRun, obs *observation) error {
	if tr.Spec.JobRef != nil || tr.Annotations[platformv1.StopReasonAnnotation] != "" {
		return nil
	}
	grace := r.ManualRunGrace
	if grace <= 0 {
		grace = DefaultManualRunGrace
	}
	now := r.Clock.Now()
	if wait := tr.CreationTimestamp.Add(grace).Sub(now); wait > 0 {
		obs.orphanRecheck = wait
		return nil
	}
	task := &platformv1.ScheduleTask{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tr.Namespace, Name: tr.Spec.ScheduleTaskName}, task)
	switch {
	case apierrors.IsNotFound(err):
		obs.orphan = &orphanVerdict{platformv1.ReasonTaskNotFound, fmt.Sprintf(
			"Not started: ScheduleTask %s does not exist (%s after the run was created)", tr.Spec.ScheduleTaskName, grace)}
	case err != nil:
		return fmt.Errorf("get ScheduleTask %s: %w", tr.Spec.ScheduleTaskName, err)
	case !task.DeletionTimestamp.IsZero():
		obs.orphan = &orphanVerdict{platformv1.ReasonTaskNotFound, fmt.Sprintf(
			"Not started: ScheduleTask %s is being deleted", task.Name)}
	default:
		c := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionReady)
		if c == nil || c.Status != metav1.ConditionFalse || c.ObservedGeneration != task.Generation ||
			c.Reason == platformv1.ReasonSuspendedAfterFailures {
			// Ready, not yet looked at, or only its schedule suspended (a
			// manual run still starts): the ScheduleTask controller will
			// start the run. Look again in case it turns out unable to.
			obs.orphanRecheck = grace
			return nil
		}
		if wait := c.LastTransitionTime.Add(grace).Sub(now); wait > 0 {
			// Unable only since a moment ago: perhaps a passing error.
			obs.orphanRecheck = wait
			return nil
		}
		obs.orphan = &orphanVerdict{platformv1.ReasonTaskCannotRun, fmt.Sprintf(
			"Not started: ScheduleTask %s cannot run (Ready is False since %s, %s: %s)",
			task.Name, c.LastTransitionTime.UTC().Format(time.RFC3339), c.Reason, text.Truncate(c.Message, maxQuotedMessage))}
	}
	ctrl.LoggerFrom(ctx).Info("Ending manual run that cannot start", "taskRun", klog.KObj(tr),
		"reason", obs.orphan.reason)
	return nil
}

// maxQuotedMessage bounds the part of the task's condition message a run's
// message quotes, so that the run's message stays within its schema's bound.
const maxQuotedMessage = 1024
