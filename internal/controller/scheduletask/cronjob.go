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

package scheduletask

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/reconcileutil"
)

// FieldManager is the ScheduleTask controller's name in the managedFields of
// the CronJobs it applies.
const FieldManager = "platform-operator-scheduletask"

// DesiredCronJob returns the CronJob that task renders to, as a server-side
// apply configuration: every field the operator sets and none other, so that
// what the API server defaults (imagePullPolicy, terminationMessagePath, a
// fieldRef's apiVersion, ...) is never fought over. It carries the task as
// its controller. The benchmark's baseline applies it too, so that it does
// the same API work as the reconciler.
func DesiredCronJob(task *platformv1.ScheduleTask, scheme *runtime.Scheme) (*batchv1ac.CronJobApplyConfiguration, error) {
	gvk, err := apiutil.GVKForObject(task, scheme)
	if err != nil {
		return nil, err
	}
	spec := &task.Spec
	labels := map[string]string{
		platformv1.ScheduleTaskLabel: task.Name,
		platformv1.ManagedByLabel:    platformv1.ManagedByValue,
	}

	container := corev1ac.Container().
		WithName(platformv1.TaskContainerName).
		WithImage(spec.Image).
		WithCommand(spec.Command...).
		WithArgs(spec.Args...)
	for i := range spec.Env {
		env, err := reconcileutil.ApplyConfigurationOf[corev1ac.EnvVarApplyConfiguration](&spec.Env[i])
		if err != nil {
			return nil, err
		}
		container.WithEnv(env)
	}
	if r := ptr.Deref(spec.Resources, corev1.ResourceRequirements{}); len(r.Limits)+len(r.Requests)+len(r.Claims) > 0 {
		res, err := reconcileutil.ApplyConfigurationOf[corev1ac.ResourceRequirementsApplyConfiguration](&r)
		if err != nil {
			return nil, err
		}
		container.WithResources(res)
	}
	sc, err := containerSecurityContext(spec)
	if err != nil {
		return nil, err
	}
	container.WithSecurityContext(sc)

	pod := corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithContainers(container).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)))
	if sa := ptr.Deref(spec.ServiceAccountName, ""); sa != "" {
		// The API server copies serviceAccountName into the deprecated
		// serviceAccount and, when the first is missing, reads the second
		// back. Owning both means that removing the name from the task removes
		// both, so the old value cannot come back through the mirror.
		pod.WithServiceAccountName(sa).WithDeprecatedServiceAccount(sa)
	}

	job := batchv1ac.JobSpec().
		WithBackoffLimit(ptr.Deref(spec.BackoffLimit, platformv1.DefaultBackoffLimit)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(pod))
	if spec.ActiveDeadlineSeconds != nil {
		job.WithActiveDeadlineSeconds(*spec.ActiveDeadlineSeconds)
	}

	cj := batchv1ac.CronJobSpec().
		WithSchedule(spec.Schedule).
		WithConcurrencyPolicy(batchv1.ConcurrencyPolicy(concurrencyPolicy(spec))).
		WithSuspend(ptr.Deref(spec.Suspend, false)).
		// The TaskRuns are the durable history; the CronJob keeps more
		// Jobs than the task keeps runs (see jobHistoryMargin), so a Job
		// is never deleted before the operator has recorded it.
		WithSuccessfulJobsHistoryLimit(jobHistoryLimit(spec.SuccessfulRunsHistoryLimit)).
		WithFailedJobsHistoryLimit(jobHistoryLimit(spec.FailedRunsHistoryLimit)).
		WithJobTemplate(batchv1ac.JobTemplateSpec().WithLabels(labels).WithSpec(job))
	if spec.TimeZone != nil {
		cj.WithTimeZone(*spec.TimeZone)
	}
	if spec.StartingDeadlineSeconds != nil {
		cj.WithStartingDeadlineSeconds(*spec.StartingDeadlineSeconds)
	}

	return batchv1ac.CronJob(task.Name, task.Namespace).
		WithLabels(labels).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(gvk.GroupVersion().String()).
			WithKind(gvk.Kind).
			WithName(task.Name).
			WithUID(task.UID).
			WithController(true).
			WithBlockOwnerDeletion(true)).
		WithSpec(cj), nil
}

// jobHistoryMargin is how many more finished Jobs, of each outcome, the
// CronJob keeps than the task keeps runs. The CronJob controller deletes the
// oldest finished Jobs beyond its limits as soon as it sees one finish, and a
// Job it deletes before the operator recorded it is a run lost without a
// trace; with the task's limits alone, `successfulRunsHistoryLimit: 0` would
// lose every run whose Job ends before the operator's next pass, and an
// outage longer than limit × period would lose the oldest runs.
//
// With the margin, an unrecorded Job is deleted only once more than
// limit + margin Jobs of its outcome have finished after it, so a manager
// outage (crash, leader hand-over, API trouble) loses nothing while fewer
// than limit + margin runs of each outcome end in it: at least 10 minutes
// for a task that runs every minute (the most often a schedule may fire),
// (limit + 10) × period in general. The operator's own recording delay is a
// pass, seconds, far inside one period. The margin costs nothing once runs
// are recorded: retention deletes the Job of every run it deletes, so in
// steady state the CronJob holds the task's limits' worth of Jobs, and the
// margin only ever holds Jobs waiting to be recorded.
const jobHistoryMargin = 10

// jobHistoryLimit is the CronJob's history limit for a run history limit of
// the task (the task's default when unset, never the CronJob API's).
func jobHistoryLimit(runs *int32) int32 {
	return ptr.Deref(runs, platformv1.DefaultRunsHistoryLimit) + jobHistoryMargin
}

// containerSecurityContext is the task's own security context, or else a safe
// default that any image runs with: no privilege escalation and the runtime's
// default seccomp profile. It does not require a non-root user or drop every
// capability, which would break images that run as root, such as busybox; a
// namespace that enforces the restricted standard asks the task to say so.
func containerSecurityContext(spec *platformv1.ScheduleTaskSpec) (*corev1ac.SecurityContextApplyConfiguration, error) {
	if sc := spec.SecurityContext; sc != nil {
		return reconcileutil.ApplyConfigurationOf[corev1ac.SecurityContextApplyConfiguration](sc)
	}
	return corev1ac.SecurityContext().
		WithAllowPrivilegeEscalation(false).
		WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)), nil
}

// concurrencyPolicy returns the task's policy, Allow when unset (the API
// server defaults it, but objects built in tests or by old clients may not).
func concurrencyPolicy(spec *platformv1.ScheduleTaskSpec) platformv1.ConcurrencyPolicy {
	if spec.ConcurrencyPolicy == "" {
		return platformv1.AllowConcurrent
	}
	return spec.ConcurrencyPolicy
}

// Reasons of the events about the CronJob.
const (
	EventCronJobCreated  = "CronJobCreated"
	EventCronJobUpdated  = "CronJobUpdated"
	EventCronJobRepaired = "CronJobRepaired"
	EventCronJobError    = "CronJobError"
)

// reconcileCronJob applies the task's CronJob. A CronJob the API server
// rejects (an invalid schedule, for instance) or one that belongs to someone
// else is reported in obs and on the Ready condition; retrying it would fail
// the same way, so it is not an error.
func (r *Reconciler) reconcileCronJob(ctx context.Context, task *platformv1.ScheduleTask, obs *observation) error {
	desired, err := DesiredCronJob(task, r.Scheme())
	if err != nil {
		return err
	}
	cj := &batchv1.CronJob{}
	res, err := r.applier.Apply(ctx, task, cj, desired)
	var notOwned *reconcileutil.NotControlledError
	switch {
	case errors.As(err, &notOwned):
		obs.cronJobErr = notOwned
		obs.wakeAt(time.Minute)
		r.eventOnChange(task, corev1.EventTypeWarning, EventCronJobError, notOwned.Error())
		return nil
	case apierrors.IsInvalid(err):
		obs.cronJobErr = fmt.Errorf("CronJob rejected by the API server: %w", err)
		r.eventOnChange(task, corev1.EventTypeWarning, EventCronJobError, obs.cronJobErr.Error())
		return nil
	case err != nil:
		obs.cronJobErr = err
		return err
	}
	obs.cronJob = cj

	log := ctrl.LoggerFrom(ctx)
	switch res {
	case reconcileutil.ApplyCreated:
		log.Info("Created CronJob", "cronJob", klog.KObj(cj))
		r.Recorder.Eventf(task, cj, corev1.EventTypeNormal, EventCronJobCreated, "Create", "Created CronJob %s", cj.Name)
	case reconcileutil.ApplyUpdated:
		log.Info("Updated CronJob", "cronJob", klog.KObj(cj))
		r.Recorder.Eventf(task, cj, corev1.EventTypeNormal, EventCronJobUpdated, "Update", "Updated CronJob %s", cj.Name)
	case reconcileutil.ApplyRepaired:
		log.Info("Repaired hand-edited CronJob", "cronJob", klog.KObj(cj))
		r.Recorder.Eventf(task, cj, corev1.EventTypeNormal, EventCronJobRepaired, "Update", "Repaired hand-edited CronJob %s", cj.Name)
	}
	return nil
}

// eventOnChange records a warning only when the Ready condition does not
// already say the same, so a persisting error is reported once, not on every pass.
func (r *Reconciler) eventOnChange(task *platformv1.ScheduleTask, eventType, reason, message string) {
	if c := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionReady); c != nil && c.Message == message {
		return
	}
	r.Recorder.Eventf(task, nil, eventType, reason, "Reconcile", "%s", message)
}
