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
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/reconcileutil"
	"github.com/example/platform-operator/internal/schedule"
	"github.com/example/platform-operator/internal/tracing"
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

	// An H the webhook did not see resolved (a task stored without it) goes
	// out as written, and the CronJob API's refusal lands on Ready.
	sched, err := schedule.Effective(spec.Schedule, task.Namespace, task.Name)
	if err != nil {
		sched = spec.Schedule
	}
	cj := batchv1ac.CronJobSpec().
		WithSchedule(sched).
		WithConcurrencyPolicy(batchv1.ConcurrencyPolicy(concurrencyPolicy(spec))).
		WithSuspend(ptr.Deref(spec.Suspend, false)).
		// The TaskRuns are the durable history; the CronJob keeps more
		// Jobs than the task keeps runs (see jobHistoryMargin), so a Job
		// is never deleted before the operator has recorded it.
		WithSuccessfulJobsHistoryLimit(jobHistoryLimit(spec.SuccessfulRunsHistoryLimit)).
		WithFailedJobsHistoryLimit(jobHistoryLimit(spec.FailedRunsHistoryLimit)).
		WithJobTemplate(jobTemplate(task, labels, job))
	if spec.TimeZone != nil {
		cj.WithTimeZone(*spec.TimeZone)
	}
	if d := startingDeadline(spec); d != nil {
		cj.WithStartingDeadlineSeconds(*d)
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

// jobTemplate is the CronJob's job template. It carries the task's
// tracing.TraceParentAnnotation, the trace of the change that made the task
// what it is, so that every Job of the schedule, and the TaskRun recorded from
// it, links to that change. It is the task's and not the trace of the
// reconcile applying it: it changes with the task's spec, never from one pass
// to the next, and so costs no write of the CronJob of its own.
func jobTemplate(task *platformv1.ScheduleTask, labels map[string]string,
	job *batchv1ac.JobSpecApplyConfiguration) *batchv1ac.JobTemplateSpecApplyConfiguration {
	t := batchv1ac.JobTemplateSpec().WithLabels(labels).WithSpec(job)
	if tp := task.Annotations[tracing.TraceParentAnnotation]; tp != "" {
		t.WithAnnotations(map[string]string{tracing.TraceParentAnnotation: tp})
	}
	return t
}

// startingDeadline is the CronJob's startingDeadlineSeconds: the task's,
// and for a Skip task that sets none SkipStartingDeadlineSeconds, so that
// the CronJob controller, back after an outage, does not start the latest
// missed run late (which RunLatest and RunAll want it to).
func startingDeadline(spec *platformv1.ScheduleTaskSpec) *int64 {
	if spec.StartingDeadlineSeconds == nil && spec.MissedRuns == platformv1.MissedRunsSkip {
		return ptr.To[int64](platformv1.SkipStartingDeadlineSeconds)
	}
	return spec.StartingDeadlineSeconds
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

// cronJobKind names the CronJob's kind to the applier's repair backoff.
const cronJobKind = "CronJob"

// Reasons of the events about the CronJob.
const (
	EventCronJobCreated  = "CronJobCreated"
	EventCronJobUpdated  = "CronJobUpdated"
	EventCronJobRepaired = "CronJobRepaired"
	EventCronJobError    = "CronJobError"
	// EventJobTemplateRestored: the job template held fields the task does
	// not set (another manager's additions), and was put back.
	EventJobTemplateRestored = "JobTemplateRestored"
	// EventChildContested: the CronJob was changed back so often that its
	// repairs are spaced out (the ChildContested condition turned True).
	EventChildContested = "ChildContested"
)

// reconcileCronJob applies the task's CronJob, signed (see signTemplate), and
// then makes sure its job template is the task's and nothing more (see
// checkTemplate). A CronJob the API server rejects (an invalid schedule, for
// instance) or one that belongs to someone else is reported in obs and on
// the Ready condition; retrying it would fail the same way, so it is not an
// error.
func (r *Reconciler) reconcileCronJob(ctx context.Context, task *platformv1.ScheduleTask, obs *observation) error {
	desired, err := DesiredCronJob(task, r.Scheme())
	if err != nil {
		return err
	}
	if obs.suspendedAfterFailures {
		// spec.suspend stays the user's; only the CronJob is suspended.
		desired.Spec.WithSuspend(true)
	}
	rendered, err := renderedTemplate(desired)
	if err != nil {
		return err
	}
	signed := r.signTemplate(task, desired, rendered)
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
	case reconcileutil.ApplyDeferred:
		// Changed again right after a repair: the next repair waits (see
		// reconcileutil.RepairBackoff); the job template is still checked
		// below, at once.
		wait := r.applier.RepairWait(cronJobKind, client.ObjectKeyFromObject(cj))
		log.V(1).Info("Holding back the repair of a CronJob changed again", "cronJob", klog.KObj(cj), "wait", wait)
		obs.wakeAt(wait)
	}
	obs.contest = r.applier.Contest(cronJobKind, client.ObjectKeyFromObject(cj))
	obs.wakeAt(obs.contest.EndsIn)
	return r.checkTemplate(ctx, task, obs, desired, rendered, signed, res == reconcileutil.ApplyCreated)
}

// renderedTemplate is the pod template of the configuration, as a typed value.
func renderedTemplate(desired *batchv1ac.CronJobApplyConfiguration) (*corev1.PodTemplateSpec, error) {
	t := &corev1.PodTemplateSpec{}
	if err := convert(desired.Spec.JobTemplate.Spec.Template, t); err != nil {
		return nil, fmt.Errorf("read rendered pod template: %w", err)
	}
	return t, nil
}

// convert copies in to out through JSON, which apply configurations and
// typed API values share.
func convert(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// signTemplate puts the signature of the task's pod template, as the API
// server will store it, on the configuration's job template, where every Job
// made from it inherits it, and returns the template hash it signed. The
// stored template is predicted (provenance.Defaulted), so the signature goes
// out with the apply that sets the template and costs no write of its own;
// where this API server was seen to default more, the stored template learned
// then is signed instead (see learnTemplate).
func (r *Reconciler) signTemplate(task *platformv1.ScheduleTask, desired *batchv1ac.CronJobApplyConfiguration, rendered *corev1.PodTemplateSpec) string {
	hash := provenance.TemplateHash(provenance.Defaulted(rendered))
	if l, ok := r.learnedTemplates.Load(task.UID); ok && l.(learnedTemplate).rendered == provenance.TemplateHash(rendered) {
		hash = l.(learnedTemplate).stored
	}
	desired.Spec.JobTemplate.WithAnnotations(map[string]string{
		provenance.SignatureAnnotation: r.Signer.Sign(task.UID, hash),
	})
	return hash
}

// learnedTemplate is, for a task whose stored template the prediction
// missed, the hash of the rendering and of the template the API server
// stored for it.
type learnedTemplate struct{ rendered, stored string }

// checkTemplate makes sure the CronJob's job template is the task's and
// nothing more, and that its signature matches it. Server-side apply never
// removes a field another manager added, so a co-tenant who may patch
// CronJobs could otherwise add init containers, host namespaces or a pod
// security context to every run of the task, unseen. Such fields show in
// two ways: in managedFields, as another manager's entry under
// spec.jobTemplate (kept by the cache for this check); and, when someone
// also rewrote managedFields to hide them, as a stored template whose hash
// is not the one signed. Either way the template is put back with one
// update. In the common case this reads a cached object and writes nothing.
func (r *Reconciler) checkTemplate(ctx context.Context, task *platformv1.ScheduleTask, obs *observation,
	desired *batchv1ac.CronJobApplyConfiguration, rendered *corev1.PodTemplateSpec, signed string, created bool) error {
	cj := obs.cronJob
	foreign := slices.ContainsFunc(cj.ManagedFields, foreignTemplateEntry)
	stored := storedTemplateHash(cj)
	switch {
	case !foreign && stored == signed:
		return nil
	case !foreign && created:
		// Made by this very apply, the template is exactly what the API
		// server makes of the rendering: the prediction missed a default.
		return r.learnTemplate(ctx, task, obs, desired, rendered, stored)
	}
	rep, err := r.removeImplants(ctx, task, desired, signed)
	if err != nil || rep.cronJob == nil {
		return err
	}
	obs.cronJob = rep.cronJob
	if !rep.wrote {
		return nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("cronJob", klog.KObj(rep.cronJob))
	switch {
	case len(rep.implants) > 0:
		log.Info("Removed fields other managers added to the job template", "fields", implantsString(rep.implants))
		r.Recorder.Eventf(task, rep.cronJob, corev1.EventTypeWarning, EventJobTemplateRestored, "Update",
			"%s", truncateNote(fmt.Sprintf("Removed from the job template of CronJob %s what other field managers added: %s",
				rep.cronJob.Name, implantsString(rep.implants))))
	case rep.unowned:
		log.Info("Removed fields no manager owns from the job template")
		r.Recorder.Eventf(task, rep.cronJob, corev1.EventTypeWarning, EventJobTemplateRestored, "Update",
			"Removed from the job template of CronJob %s fields the task does not set and no field manager owns (managedFields were edited)",
			rep.cronJob.Name)
	}
	if after := storedTemplateHash(rep.cronJob); after != signed {
		return r.learnTemplate(ctx, task, obs, desired, rendered, after)
	}
	return nil
}

// learnTemplate signs the template the API server stored for the rendering,
// in a template the operator itself wrote whole (created, or put back), so
// nobody else's field is in it, and remembers it for the task: this API
// server defaults a field provenance.Defaulted does not know. It costs one
// write per task, and again after a restart of the manager; never a
// forgery, since only a template the operator wrote whole is learned.
func (r *Reconciler) learnTemplate(ctx context.Context, task *platformv1.ScheduleTask, obs *observation,
	desired *batchv1ac.CronJobApplyConfiguration, rendered *corev1.PodTemplateSpec, stored string) error {
	ctrl.LoggerFrom(ctx).Info("Signing the job template as the API server stored it: it defaulted fields the operator does not predict",
		"cronJob", klog.KObj(obs.cronJob))
	r.learnedTemplates.Store(task.UID, learnedTemplate{rendered: provenance.TemplateHash(rendered), stored: stored})
	desired.Spec.JobTemplate.WithAnnotations(map[string]string{
		provenance.SignatureAnnotation: r.Signer.Sign(task.UID, stored),
	})
	cj := &batchv1.CronJob{}
	if _, err := r.applier.Apply(ctx, task, cj, desired); err != nil {
		return fmt.Errorf("sign the job template of CronJob %s: %w", task.Name, err)
	}
	obs.cronJob = cj
	return nil
}

// templateRepair is what removeImplants found and did.
type templateRepair struct {
	// cronJob is the CronJob as read or written; nil when it is gone or no
	// longer the task's.
	cronJob *batchv1.CronJob
	// implants are what other managers had added, by manager.
	implants []implant
	// unowned: the template held fields nobody owns (the template put back
	// is the signed one, where the template read was not).
	unowned bool
	// wrote: the template was put back.
	wrote bool
}

// removeImplants puts the CronJob's job template back to the task's with one
// update of the object read past the cache: the template rebuilt from the
// configuration (the API server defaults it again), and the other managers'
// claims on it dropped from managedFields, so they stay consistent with the
// object and the next pass finds nothing to do. The operator's own apply
// entry is untouched, so the next apply neither conflicts nor differs. A
// CronJob that is right after all (the cache had not yet seen the last
// repair) is returned as read, unwritten.
func (r *Reconciler) removeImplants(ctx context.Context, task *platformv1.ScheduleTask,
	desired *batchv1ac.CronJobApplyConfiguration, signed string) (templateRepair, error) {
	live := &batchv1.CronJob{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Name}, live); err != nil {
		return templateRepair{}, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(live, task) {
		return templateRepair{}, nil
	}
	before := provenance.TemplateHash(&live.Spec.JobTemplate.Spec.Template)
	if !slices.ContainsFunc(live.ManagedFields, foreignTemplateEntry) && before == signed {
		return templateRepair{cronJob: live}, nil
	}
	implants, managed, err := dropForeignTemplateFields(live.ManagedFields)
	if err != nil {
		return templateRepair{}, fmt.Errorf("read managedFields of CronJob %s: %w", live.Name, err)
	}
	var tmpl batchv1.JobTemplateSpec
	if err := convert(desired.Spec.JobTemplate, &tmpl); err != nil {
		return templateRepair{}, fmt.Errorf("read rendered job template: %w", err)
	}
	live.Spec.JobTemplate = tmpl
	live.ManagedFields = managed
	if err := r.Update(ctx, live, client.FieldOwner(FieldManager)); err != nil {
		return templateRepair{}, fmt.Errorf("put back the job template of CronJob %s: %w", live.Name, err)
	}
	after := provenance.TemplateHash(&live.Spec.JobTemplate.Spec.Template)
	return templateRepair{cronJob: live, implants: implants, wrote: true,
		unowned: before != signed && after == signed && len(implants) == 0}, nil
}

// eventOnChange records a warning only when the Ready condition does not
// already say the same, so a persisting error is reported once, not on every pass.
func (r *Reconciler) eventOnChange(task *platformv1.ScheduleTask, eventType, reason, message string) {
	if c := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionReady); c != nil && c.Message == message {
		return
	}
	r.Recorder.Eventf(task, nil, eventType, reason, "Reconcile", "%s", message)
}
