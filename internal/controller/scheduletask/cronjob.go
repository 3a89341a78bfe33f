// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/provenance"
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

	pod, err := podTemplateConfiguration(podTemplate(task, labels))
	if err != nil {
		return nil, err
	}
	job := batchv1ac.JobSpec().
		WithBackoffLimit(ptr.Deref(spec.BackoffLimit, platformv1.DefaultBackoffLimit)).
		WithTemplate(pod)
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

// planCronJob renders the task's CronJob, signed (see signTemplate), and
// suspended while the failure streak holds it (spec.suspend stays the
// user's; only the CronJob is suspended).
func (p *pass) planCronJob(scheme *runtime.Scheme) error {
	desired, err := DesiredCronJob(p.task, scheme)
	if err != nil {
		return err
	}
	if p.suspendedAfterFailures {
		desired.Spec.WithSuspend(true)
	}
	if p.rendered, err = renderedTemplate(desired); err != nil {
		return err
	}
	p.desired = desired
	p.signed = signTemplate(p.signer, p.task, p.obs.learned, desired, p.rendered)
	p.jobTemplate = &batchv1.JobTemplateSpec{}
	if err := convert(desired.Spec.JobTemplate, p.jobTemplate); err != nil {
		return fmt.Errorf("read rendered job template: %w", err)
	}
	p.planTemplateHold()
	return nil
}

// hashSuspended is the hash of the pass's configuration with spec.suspend
// set to suspend.
func (p *pass) hashSuspended(suspend bool) (string, error) {
	was := ptr.Deref(p.desired.Spec.Suspend, false)
	p.desired.Spec.WithSuspend(suspend)
	defer p.desired.Spec.WithSuspend(was)
	return apply.Hash(p.desired)
}

// resumes reports whether the pass lifts a suspension the operator
// applied: the cache shows the CronJob suspended, as last applied with a
// configuration other than this one (a hold, the task's own suspend, the
// failure streak), and the pass wants it not to be. A CronJob someone
// else suspended under this very configuration is theirs to change back
// with the applier's backoff, as any other field.
func (p *pass) resumes() bool {
	cj := p.obs.cronJob
	if cj == nil || !ptr.Deref(cj.Spec.Suspend, false) || ptr.Deref(p.desired.Spec.Suspend, false) {
		return false
	}
	hash, err := apply.Hash(p.desired)
	return err == nil && cj.Annotations[apply.AppliedHashAnnotation] != hash
}

// resume lifts the CronJob's suspension with a merge patch on the version
// the cache showed (an optimistic lock), never with an apply: the pass
// judged that version's job template to be the task's, and a co-tenant's
// change that the cache has not shown yet must not be the template the
// resumed CronJob fires with. An apply would write spec.suspend onto
// whatever the template is by then; the patch fails instead, and the change
// that made it fail wakes a pass that puts the template back. The rest of
// the configuration is applied by the next pass. When the suspension was
// a hold (planTemplateHold) of this very configuration, the patch also
// records the configuration's hash, so that pass writes nothing.
func (r *Reconciler) resume(ctx context.Context, p *pass) error {
	cached := p.obs.cronJob
	resumed := cached.DeepCopy()
	resumed.Spec.Suspend = ptr.To(false)
	held := p.holdEnded()
	if held {
		hash, err := apply.Hash(p.desired)
		if err != nil {
			return err
		}
		resumed.Annotations = maps.Clone(resumed.Annotations)
		resumed.Annotations[apply.AppliedHashAnnotation] = hash
	}
	err := r.Patch(ctx, resumed, client.MergeFromWithOptions(cached, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(FieldManager))
	log := ctrl.LoggerFrom(ctx).WithValues("cronJob", klog.KObj(cached))
	switch {
	case apierrors.IsConflict(err):
		// Changed since the cache showed it: the change's own event
		// brings the pass that looks at it.
		log.V(1).Info("Not resuming CronJob: it changed since this pass read it")
		p.cronJob = cached
		r.observeContests(p)
		p.wakeAt(time.Second)
		return nil
	case err != nil:
		p.cronJobErr = err
		return fmt.Errorf("resume CronJob %s: %w", cached.Name, err)
	}
	if held {
		log.Info("Resumed CronJob held while its job template was contested")
	} else {
		log.Info("Resumed CronJob")
	}
	p.cronJob = resumed
	r.observeContests(p)
	return nil
}

// holdEnded reports whether the pass's apply ends a hold: the CronJob was
// last applied with this very configuration, held (suspended).
func (p *pass) holdEnded() bool {
	cj := p.obs.cronJob
	if p.templateHeld || cj == nil || !ptr.Deref(cj.Spec.Suspend, false) {
		return false
	}
	held, err := p.hashSuspended(true)
	return err == nil && cj.Annotations[apply.AppliedHashAnnotation] == held
}

// jobTemplateKind names the CronJob's job template to the applier's repair
// backoff: its repairs are spaced out apart from those of the CronJob's
// other fields, since only they suspend the CronJob.
const jobTemplateKind = "job template of CronJob"

// planTemplateHold decides what to do about a job template that is not the
// one the operator signed, as the cache shows it (another manager's entry
// under spec.jobTemplate, or a stored template whose hash is not the
// signed one). What the template holds runs under the task's name, so it
// must never run; and a co-tenant who patches it in a loop must not cost
// the operator a write per patch. So:
//
//   - a changed template on a CronJob that can fire (not suspended), or
//     whose repair is due, is put back at once, with one update that also
//     suspends the CronJob (putBackTemplate);
//   - while the next repair is held back (apply.RepairBackoff: 1 s, 2 s,
//     4 s ... after the last), the CronJob stays suspended, changed or
//     not, and a change on the suspended CronJob waits for the repair: it
//     cannot fire meanwhile;
//   - once the wait is over with the template unchanged, the CronJob is
//     applied as the task says again.
//
// A co-tenant's loop of patches thus costs a repair per backoff step, and
// the template it patches is never the one a Job is made from. A manual run
// is made from the signed template (p.jobTemplate), never the CronJob's, so
// it starts as ever. Decided from the cache alone: a held change reads
// nothing past it.
func (p *pass) planTemplateHold() {
	cj := p.obs.cronJob
	p.unheldSuspend = ptr.Deref(p.desired.Spec.Suspend, false)
	p.templateChanged = cj != nil && !templateSigned(cj, p.signed)
	switch {
	case p.templateChanged && (!ptr.Deref(cj.Spec.Suspend, false) || p.obs.templateWait == 0):
		p.putBackTemplate = true
	case p.templateChanged || p.obs.templateWait > 0:
		p.wakeAt(p.obs.templateWait)
	default:
		return
	}
	p.templateHeld = true
	p.desired.Spec.WithSuspend(true)
}

// applyCronJob applies the pass's CronJob and then makes sure its job
// template is the task's and nothing more (see planTemplateHold). A CronJob
// the API server rejects (an invalid schedule, for instance) or one that
// belongs to someone else is reported on the Ready condition; retrying it
// would fail the same way, so it is not an error.
func (r *Reconciler) applyCronJob(ctx context.Context, p *pass) error {
	task := p.task
	templateKey := apply.RepairKey{Kind: jobTemplateKind, NamespacedName: client.ObjectKeyFromObject(task)}
	if p.templateChanged && r.applier.Repairs != nil {
		// Seen changed: the backoff counts the change, whether its repair
		// goes now or waits.
		r.applier.Repairs.Changed(templateKey)
	}
	if p.putBackTemplate {
		done, err := r.putBackTemplate(ctx, p, templateKey)
		if err != nil || done {
			return err
		}
	}
	if p.resumes() {
		return r.resume(ctx, p)
	}
	cj := &batchv1.CronJob{}
	res, err := r.applier.Apply(ctx, task, cj, p.desired)
	var notOwned *apply.NotControlledError
	switch {
	case errors.As(err, &notOwned):
		p.cronJobErr = notOwned
		p.wakeAt(time.Minute)
		eventOnChange(p, corev1.EventTypeWarning, EventCronJobError, notOwned.Error())
		return nil
	case apierrors.IsInvalid(err):
		p.cronJobErr = fmt.Errorf("CronJob rejected by the API server: %w", err)
		eventOnChange(p, corev1.EventTypeWarning, EventCronJobError, p.cronJobErr.Error())
		return nil
	case err != nil:
		p.cronJobErr = err
		return err
	}
	p.cronJob = cj

	log := ctrl.LoggerFrom(ctx)
	switch res {
	case apply.Created:
		log.Info("Created CronJob", "cronJob", klog.KObj(cj))
		p.event(cj, corev1.EventTypeNormal, EventCronJobCreated, "Create", "Created CronJob %s", cj.Name)
	case apply.Updated:
		log.Info("Updated CronJob", "cronJob", klog.KObj(cj))
		p.event(cj, corev1.EventTypeNormal, EventCronJobUpdated, "Update", "Updated CronJob %s", cj.Name)
	case apply.Repaired:
		log.Info("Repaired hand-edited CronJob", "cronJob", klog.KObj(cj))
		p.event(cj, corev1.EventTypeNormal, EventCronJobRepaired, "Update", "Repaired hand-edited CronJob %s", cj.Name)
	case apply.Deferred:
		// Changed again right after a repair: the next repair waits (see
		// apply.RepairBackoff); the job template is still checked
		// below, at once.
		wait := r.applier.RepairWait(cronJobKind, client.ObjectKeyFromObject(cj))
		log.V(1).Info("Holding back the repair of a CronJob changed again", "cronJob", klog.KObj(cj), "wait", wait)
		p.wakeAt(wait)
	}
	r.observeContests(p)
	if res == apply.Created {
		return r.checkCreatedTemplate(ctx, p)
	}
	return nil
}

// observeContests reads whether the CronJob or its job template is
// contested (apply.RepairBackoff), and asks for a pass when that may end
// or the template's repair is due.
func (r *Reconciler) observeContests(p *pass) {
	key := client.ObjectKeyFromObject(p.task)
	p.contest = r.applier.Contest(cronJobKind, key)
	p.templateContest = r.applier.Contest(jobTemplateKind, key)
	p.wakeAt(p.contest.EndsIn)
	p.wakeAt(p.templateContest.EndsIn)
	p.wakeAt(r.applier.RepairWait(jobTemplateKind, key))
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
func signTemplate(signer *provenance.Signer, task *platformv1.ScheduleTask, learned *learnedTemplate,
	desired *batchv1ac.CronJobApplyConfiguration, rendered *corev1.PodTemplateSpec) string {
	hash := provenance.TemplateHash(provenance.Defaulted(rendered))
	if learned != nil && learned.rendered == provenance.TemplateHash(rendered) {
		hash = learned.stored
	}
	desired.Spec.JobTemplate.WithAnnotations(map[string]string{
		provenance.SignatureAnnotation: signer.Sign(task.UID, hash),
	})
	return hash
}

// learnedTemplate is, for a task whose stored template the prediction
// missed, the hash of the rendering and of the template the API server
// stored for it.
type learnedTemplate struct{ rendered, stored string }

// checkCreatedTemplate makes sure the template of a CronJob this very
// apply created is the signed one. Made by the apply, the template is
// exactly what the API server makes of the rendering, so a hash other than
// the signed one means the prediction missed a default: the stored template
// is learned and signed (learnTemplate). Another manager's entry in it (a
// co-tenant's patch in the moment since) is left to the next pass, which
// puts the template back (planTemplateHold).
func (r *Reconciler) checkCreatedTemplate(ctx context.Context, p *pass) error {
	cj := p.cronJob
	if slices.ContainsFunc(cj.ManagedFields, foreignTemplateEntry) || storedTemplateHash(cj) == p.signed {
		return nil
	}
	return r.learnTemplate(ctx, p, storedTemplateHash(cj))
}

// templateSigned reports whether cj's job template is the one signed and
// nothing more: no other manager's entry under spec.jobTemplate, and a
// stored template of the signed hash.
func templateSigned(cj *batchv1.CronJob, signed string) bool {
	return !slices.ContainsFunc(cj.ManagedFields, foreignTemplateEntry) && storedTemplateHash(cj) == signed
}

// putBackTemplate puts back a job template that is not the one the
// operator signed (see planTemplateHold), suspending the CronJob in the same
// update, and records the repair with the backoff. Server-side apply never
// removes a field another manager added, so a co-tenant who may patch
// CronJobs could otherwise add init containers, host namespaces or a pod
// security context to every run of the task, unseen. Such fields show in
// two ways: in managedFields, as another manager's entry under
// spec.jobTemplate (kept by the cache for this check); and, when someone
// also rewrote managedFields to hide them, as a stored template whose hash
// is not the one signed. It reports whether the pass's CronJob is done: the
// update left nothing for the apply to write.
func (r *Reconciler) putBackTemplate(ctx context.Context, p *pass, key apply.RepairKey) (bool, error) {
	rep, err := r.removeImplants(ctx, p)
	if err != nil || rep.cronJob == nil {
		// Gone, or no longer the task's: the apply says so.
		return false, err
	}
	if !rep.wrote {
		// Right after all (the cache had not yet seen the last repair):
		// the CronJob is applied as the hold, if any, says.
		if p.obs.templateWait == 0 {
			p.templateHeld = false
			p.desired.Spec.WithSuspend(p.unheldSuspend)
		}
		return false, nil
	}
	p.cronJob = rep.cronJob
	log := ctrl.LoggerFrom(ctx).WithValues("cronJob", klog.KObj(rep.cronJob))
	manager := ""
	switch {
	case len(rep.implants) > 0:
		manager = rep.implants[0].manager
		log.Info("Removed fields other managers added to the job template", "fields", implantsString(rep.implants))
		p.event(rep.cronJob, corev1.EventTypeWarning, EventJobTemplateRestored, "Update",
			"Removed from the job template of CronJob %s what other field managers added: %s",
			rep.cronJob.Name, implantsString(rep.implants))
	case rep.unowned:
		log.Info("Removed fields no manager owns from the job template")
		p.event(rep.cronJob, corev1.EventTypeWarning, EventJobTemplateRestored, "Update",
			"Removed from the job template of CronJob %s fields the task does not set and no field manager owns (managedFields were edited)",
			rep.cronJob.Name)
	}
	if (len(rep.implants) > 0 || rep.unowned) && r.applier.Repairs != nil {
		r.applier.Repairs.Repaired(key, manager)
	}
	if after := storedTemplateHash(rep.cronJob); after != p.signed {
		// The template the operator wrote whole is not the one predicted:
		// this API server defaults a field the prediction does not know.
		// That is no change by anyone, so nothing is held.
		if !rep.unowned && len(rep.implants) == 0 {
			p.templateHeld = false
			p.desired.Spec.WithSuspend(p.unheldSuspend)
		}
		if err := r.learnTemplate(ctx, p, after); err != nil {
			return false, err
		}
		r.observeContests(p)
		return true, nil
	}
	r.observeContests(p)
	return rep.stamped, nil
}

// learnTemplate signs the template the API server stored for the rendering,
// in a template the operator itself wrote whole (created, or put back), so
// nobody else's field is in it, and remembers it for the task: this API
// server defaults a field provenance.Defaulted does not know. It costs one
// write per task, and again after a restart of the manager; never a
// forgery, since only a template the operator wrote whole is learned.
func (r *Reconciler) learnTemplate(ctx context.Context, p *pass, stored string) error {
	task := p.task
	ctrl.LoggerFrom(ctx).Info("Signing the job template as the API server stored it: it defaulted fields the operator does not predict",
		"cronJob", klog.KObj(p.cronJob))
	r.learnedTemplates.Store(task.UID, learnedTemplate{rendered: provenance.TemplateHash(p.rendered), stored: stored})
	p.desired.Spec.JobTemplate.WithAnnotations(map[string]string{
		provenance.SignatureAnnotation: p.signer.Sign(task.UID, stored),
	})
	cj := &batchv1.CronJob{}
	if _, err := r.applier.Apply(ctx, task, cj, p.desired); err != nil {
		return fmt.Errorf("sign the job template of CronJob %s: %w", task.Name, err)
	}
	p.cronJob = cj
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
	// wrote: the template was put back; stamped: the update also showed
	// every other field of the configuration (apply.Applier.Stamp).
	wrote, stamped bool
}

// removeImplants puts the CronJob's job template back to the task's with one
// update of the object read past the cache: the template rebuilt from the
// configuration (the API server defaults it again), spec.suspend as the
// pass wants it (suspended, see planTemplateHold), and the other managers'
// claims on the template dropped from managedFields, so they stay
// consistent with the object and the next pass finds nothing to do. The
// operator's own apply entry is untouched, so the next apply neither
// conflicts nor differs. A CronJob that is right after all (the cache had
// not yet seen the last repair) is returned as read, unwritten.
//
// The read past the cache is one per repair, which the backoff spaces out:
// the cache holds neither the pod template nor the operator's own
// managedFields entry that the update must keep.
func (r *Reconciler) removeImplants(ctx context.Context, p *pass) (templateRepair, error) {
	task, desired, signed := p.task, p.desired, p.signed
	live := &batchv1.CronJob{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Name}, live); err != nil {
		return templateRepair{}, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(live, task) {
		return templateRepair{}, nil
	}
	before := provenance.TemplateHash(&live.Spec.JobTemplate.Spec.Template)
	if templateSigned(live, signed) {
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
	live.Spec.Suspend = ptr.To(ptr.Deref(desired.Spec.Suspend, false))
	live.ManagedFields = managed
	// Applied before as the task says but for the hold, the CronJob takes
	// the held configuration's hash: the suspend this update makes is the
	// operator's own.
	unheld, err := p.hashSuspended(p.unheldSuspend)
	if err != nil {
		return templateRepair{}, err
	}
	stamped, err := apply.Stamp(live, desired, unheld)
	if err != nil {
		return templateRepair{}, err
	}
	if err := r.Update(ctx, live, client.FieldOwner(FieldManager)); err != nil {
		return templateRepair{}, fmt.Errorf("put back the job template of CronJob %s: %w", live.Name, err)
	}
	after := provenance.TemplateHash(&live.Spec.JobTemplate.Spec.Template)
	return templateRepair{cronJob: live, implants: implants, wrote: true, stamped: stamped,
		unowned: before != signed && after == signed && len(implants) == 0}, nil
}

// eventOnChange queues a warning only when the Ready condition does not
// already say the same, so a persisting error is reported once, not on every
// pass: a change of Ready's message that the status records.
func eventOnChange(p *pass, eventType, reason, message string) {
	if c := meta.FindStatusCondition(p.task.Status.Conditions, platformv1.ConditionReady); c != nil && c.Message == message {
		return
	}
	p.transition(nil, eventType, reason, "Reconcile", "%s", message)
}
