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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	platformv1 "github.com/example/platform-operator/api/v1"
)

const (
	// containerName is the name of the one container of every run's pod.
	containerName = "task"
	// defaultHistoryLimit and defaultBackoffLimit match the CRD's defaults.
	defaultHistoryLimit = 10
	defaultBackoffLimit = 6
)

// mutateCronJob writes the fields the operator owns on a task's CronJob from
// the task's spec, and leaves every other field alone, so that values the API
// server defaults (imagePullPolicy, terminationMessagePath, ...) survive and
// the result compares equal to an unchanged CronJob. It is the mutate step of
// a create-or-update: called on an empty CronJob it renders a new one, called
// on the live one it repairs drift.
func mutateCronJob(cj *batchv1.CronJob, task *platformv1.ScheduleTask) {
	spec := &task.Spec
	if cj.Labels == nil {
		cj.Labels = map[string]string{}
	}
	cj.Labels[platformv1.ScheduleTaskLabel] = task.Name

	cj.Spec.Schedule = spec.Schedule
	cj.Spec.TimeZone = spec.TimeZone
	cj.Spec.ConcurrencyPolicy = batchv1.ConcurrencyPolicy(concurrencyPolicy(spec))
	cj.Spec.StartingDeadlineSeconds = spec.StartingDeadlineSeconds
	cj.Spec.Suspend = ptr.To(ptr.Deref(spec.Suspend, false))
	// The TaskRuns are the durable history; the CronJob keeps as many Jobs
	// (and so pods with their logs) as the task keeps runs.
	// Unset values take the task's own defaults, never nil: the CronJob API
	// would default nil to other numbers, and the next pass would "repair" them.
	cj.Spec.SuccessfulJobsHistoryLimit = ptr.To(ptr.Deref(spec.SuccessfulRunsHistoryLimit, defaultHistoryLimit))
	cj.Spec.FailedJobsHistoryLimit = ptr.To(ptr.Deref(spec.FailedRunsHistoryLimit, defaultHistoryLimit))

	jt := &cj.Spec.JobTemplate
	if jt.Labels == nil {
		jt.Labels = map[string]string{}
	}
	jt.Labels[platformv1.ScheduleTaskLabel] = task.Name
	jt.Spec.BackoffLimit = ptr.To(ptr.Deref(spec.BackoffLimit, defaultBackoffLimit))
	jt.Spec.ActiveDeadlineSeconds = spec.ActiveDeadlineSeconds

	pt := &jt.Spec.Template
	if pt.Labels == nil {
		pt.Labels = map[string]string{}
	}
	pt.Labels[platformv1.ScheduleTaskLabel] = task.Name
	pt.Spec.RestartPolicy = corev1.RestartPolicyNever
	pt.Spec.ServiceAccountName = spec.ServiceAccountName
	// The API server mirrors serviceAccountName into the deprecated field and
	// reads the deprecated one back when the new one is empty; keep both in
	// step or clearing serviceAccountName could never take effect.
	pt.Spec.DeprecatedServiceAccount = spec.ServiceAccountName

	// Exactly one container, ours. Fields are set one by one rather than the
	// container replaced, for the same reason as above.
	if len(pt.Spec.Containers) != 1 {
		pt.Spec.Containers = []corev1.Container{{}}
	}
	c := &pt.Spec.Containers[0]
	c.Name = containerName
	c.Image = spec.Image
	c.Command = spec.Command
	c.Args = spec.Args
	c.Env = normalizedEnv(spec.Env)
	c.Resources = spec.Resources
	c.SecurityContext = containerSecurityContext(spec)
	if pt.Spec.SecurityContext == nil {
		pt.Spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	pt.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
}

// DesiredCronJob returns the CronJob the operator creates for task, complete
// with its rendering hash and owner. The benchmark's baseline writes it, so
// that the baseline does the same API work as the reconciler.
func DesiredCronJob(task *platformv1.ScheduleTask, scheme *runtime.Scheme) (*batchv1.CronJob, error) {
	hash, err := renderingHash(task)
	if err != nil {
		return nil, err
	}
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{
		Namespace:   task.Namespace,
		Name:        task.Name,
		Annotations: map[string]string{renderingHashAnnotation: hash},
	}}
	mutateCronJob(cj, task)
	return cj, controllerutil.SetControllerReference(task, cj, scheme)
}

// containerSecurityContext is the task's own security context, or else a safe
// default that any image runs with: no privilege escalation and the runtime's
// default seccomp profile. It does not require a non-root user or drop every
// capability, which would break images that run as root, such as busybox; a
// namespace that enforces the restricted standard asks the task to say so.
func containerSecurityContext(spec *platformv1.ScheduleTaskSpec) *corev1.SecurityContext {
	if spec.SecurityContext != nil {
		return spec.SecurityContext.DeepCopy()
	}
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// concurrencyPolicy returns the task's policy, Allow when unset (the API
// server defaults it, but objects built in tests or by old clients may not).
func concurrencyPolicy(spec *platformv1.ScheduleTaskSpec) platformv1.ConcurrencyPolicy {
	if spec.ConcurrencyPolicy == "" {
		return platformv1.AllowConcurrent
	}
	return spec.ConcurrencyPolicy
}

// normalizedEnv returns env as the API server stores it in a pod template:
// a fieldRef without apiVersion gets "v1". Without this the operator would
// write the short form, read back the long one, and update forever.
func normalizedEnv(env []corev1.EnvVar) []corev1.EnvVar {
	if env == nil {
		return nil
	}
	out := make([]corev1.EnvVar, len(env))
	for i := range env {
		env[i].DeepCopyInto(&out[i])
		if f := out[i].ValueFrom; f != nil && f.FieldRef != nil && f.FieldRef.APIVersion == "" {
			f.FieldRef.APIVersion = "v1"
		}
	}
	return out
}

// Reasons of the events about the CronJob.
const (
	EventCronJobCreated  = "CronJobCreated"
	EventCronJobUpdated  = "CronJobUpdated"
	EventCronJobRepaired = "CronJobRepaired"
	EventCronJobError    = "CronJobError"
)

// reconcileCronJob creates the task's CronJob or puts back the fields the
// operator manages. A CronJob the API server rejects (an invalid schedule, for
// instance) or one that belongs to someone else is reported in obs and on the
// Ready condition; retrying it would fail the same way, so it is not an error.
func (r *Reconciler) reconcileCronJob(ctx context.Context, task *platformv1.ScheduleTask, obs *observation) error {
	log := ctrl.LoggerFrom(ctx)
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: task.Namespace, Name: task.Name}}
	hash, err := renderingHash(task)
	if err != nil {
		return err
	}
	var handEdited bool
	res, err := controllerutil.CreateOrUpdate(ctx, r.Client, cj, func() error {
		if !cj.CreationTimestamp.IsZero() && !metav1.IsControlledBy(cj, task) {
			return &notOwnedError{name: cj.Name}
		}
		before := cj.DeepCopy()
		mutateCronJob(cj, task)
		// The CronJob was rendered from this very spec, yet differs: someone
		// edited it. A different hash means the spec or the operator changed.
		handEdited = !cj.CreationTimestamp.IsZero() && cj.Annotations[renderingHashAnnotation] == hash &&
			!equality.Semantic.DeepEqual(before, cj)
		if cj.Annotations == nil {
			cj.Annotations = map[string]string{}
		}
		cj.Annotations[renderingHashAnnotation] = hash
		return controllerutil.SetControllerReference(task, cj, r.Scheme())
	})
	var notOwned *notOwnedError
	switch {
	case errors.As(err, &notOwned):
		obs.cronJobErr = notOwned
		obs.requeueAfter = time.Minute
		r.eventOnChange(task, "Warning", EventCronJobError, notOwned.Error())
		return nil
	case apierrors.IsInvalid(err):
		obs.cronJobErr = fmt.Errorf("CronJob rejected by the API server: %w", err)
		r.eventOnChange(task, "Warning", EventCronJobError, obs.cronJobErr.Error())
		return nil
	case err != nil:
		obs.cronJobErr = err
		return fmt.Errorf("create or update CronJob %s: %w", cj.Name, err)
	}
	obs.cronJob = cj

	switch res {
	case controllerutil.OperationResultCreated:
		log.Info("Created CronJob", "cronJob", klog.KObj(cj))
		r.Recorder.Eventf(task, cj, "Normal", EventCronJobCreated, "Create", "Created CronJob %s", cj.Name)
	case controllerutil.OperationResultUpdated:
		reason, verb := EventCronJobUpdated, "Updated"
		if handEdited {
			reason, verb = EventCronJobRepaired, "Repaired hand-edited"
		}
		log.Info("Updated CronJob", "cronJob", klog.KObj(cj), "reason", reason)
		r.Recorder.Eventf(task, cj, "Normal", reason, "Update", "%s CronJob %s", verb, cj.Name)
	}
	return nil
}

// renderingHashAnnotation on a CronJob is a hash of what the operator last
// rendered into it, so a later difference can be told apart: a hand edit
// (same hash) or a new spec or operator version (new hash).
const renderingHashAnnotation = "platform.example.com/rendering-hash"

// renderingHash hashes the CronJob the task renders to from scratch.
func renderingHash(task *platformv1.ScheduleTask) (string, error) {
	cj := &batchv1.CronJob{}
	mutateCronJob(cj, task)
	data, err := json.Marshal(struct {
		Labels map[string]string
		Spec   batchv1.CronJobSpec
	}{cj.Labels, cj.Spec})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]), nil
}

// eventOnChange records a warning only when the Ready condition does not
// already say the same, so a persisting error is reported once, not on every pass.
func (r *Reconciler) eventOnChange(task *platformv1.ScheduleTask, eventType, reason, message string) {
	if c := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionReady); c != nil && c.Message == message {
		return
	}
	r.Recorder.Eventf(task, nil, eventType, reason, "Reconcile", "%s", message)
}

// notOwnedError says that a CronJob of the task's name exists and is not the task's.
type notOwnedError struct{ name string }

func (e *notOwnedError) Error() string {
	return fmt.Sprintf("CronJob %s exists and is not controlled by this ScheduleTask; delete or rename it", e.name)
}
