// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/jobutil"
	"github.com/example/platform-operator/internal/objstatus"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/schedule"
)

// Annotations the controller keeps for itself.
const (
	// instantiateAnnotation marks a Job made from a CronJob's template by hand,
	// as `kubectl create job --from=cronjob/...` does.
	instantiateAnnotation = "cronjob.kubernetes.io/instantiate"
)

// Reasons of the events about runs.
const (
	EventRunStarted  = "RunStarted"
	EventRunReplaced = "RunReplaced"
)

// foreignControlled reports whether another object controls a run that
// names the task. Such a run cannot be adopted; it must not stop the rest
// of the pass (retention, other runs, status), so it is set aside and
// reported on the RunsAdopted condition.
func foreignControlled(task *platformv1.ScheduleTask, tr *platformv1.TaskRun) bool {
	ref := metav1.GetControllerOf(tr)
	return ref != nil && ref.UID != task.UID
}

// unadoptedMessage says which runs the task cannot adopt; it names at most
// maxNamedRuns of them, so the condition stays small however many there are.
func unadoptedMessage(names []string) string {
	slices.Sort(names)
	const maxNamedRuns = 10
	msg := "TaskRuns naming this task are controlled by another object and cannot be adopted: " +
		strings.Join(names[:min(len(names), maxNamedRuns)], ", ")
	if len(names) > maxNamedRuns {
		msg += fmt.Sprintf(" and %d more", len(names)-maxNamedRuns)
	}
	return msg
}

// setRunsAdoptedCondition sets RunsAdopted from the runs the pass could not
// adopt.
func setRunsAdoptedCondition(conds *[]metav1.Condition, task *platformv1.ScheduleTask, unadopted []string, now time.Time) {
	c := metav1.Condition{Type: platformv1.ConditionRunsAdopted, Status: metav1.ConditionTrue,
		Reason: platformv1.ReasonAllRunsAdopted, Message: "Every TaskRun naming this task is the task's"}
	if len(unadopted) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, platformv1.ReasonForeignController, unadoptedMessage(unadopted)
	}
	objstatus.SetCondition(conds, c, task.Generation, now)
}

// warnUnadopted finds the manual runs naming the task that another object
// controls, and queues a Warning event when their set appears or changes
// (the RunsAdopted condition records it), not on every pass.
func (p *pass) warnUnadopted() {
	for _, tr := range p.obs.runs {
		if tr.Spec.JobRef == nil && tr.DeletionTimestamp.IsZero() && foreignControlled(p.task, tr) {
			p.unadopted = append(p.unadopted, tr.Name)
		}
	}
	if len(p.unadopted) == 0 {
		return
	}
	msg := unadoptedMessage(p.unadopted)
	if c := meta.FindStatusCondition(p.task.Status.Conditions, platformv1.ConditionRunsAdopted); c != nil &&
		c.Status == metav1.ConditionFalse && c.Message == msg {
		return
	}
	p.transition(nil, corev1.EventTypeWarning, platformv1.ReasonForeignController, "Adopt", "%s", msg)
}

// EventUnverifiedJob: a Job claims to be a run of the task (its CronJob is
// its controller) but does not carry the task's signed pod template; it is
// not recorded.
const EventUnverifiedJob = "UnverifiedJob"

// unverifiedJobTTL is how long a Job reported as unverified is remembered:
// a report per Job, not per pass; after a restart, or a day, once more.
const unverifiedJobTTL = 24 * time.Hour

// verifyJob says why job is not provably a run of task, or "" when it is:
// its pod template, as the cache transform hashed it from the full Job
// (provenance.TemplateHashAnnotation), must carry the operator's signature
// for this task. A Job read past the cache has its template and is hashed
// here.
func verifyJob(signer *provenance.Signer, task *platformv1.ScheduleTask, job *batchv1.Job) string {
	sig := job.Annotations[provenance.SignatureAnnotation]
	if sig == "" {
		return "it carries no signature of the task's pod template"
	}
	hash := job.Annotations[provenance.TemplateHashAnnotation]
	if len(job.Spec.Template.Spec.Containers) > 0 {
		hash = provenance.TemplateHash(&job.Spec.Template)
	}
	if !signer.Verify(task.UID, hash, sig) {
		return "its pod template is not one the operator rendered for this task"
	}
	return ""
}

// madeFromImplant reports whether job, which failed the proof, is an
// unfinished Job made from the task's CronJob while its job template held
// someone else's change: it carries the signature the operator puts on the
// task's job template now (the template's metadata, which every Job made
// from it inherits) over a pod template that is not the one signed. The
// hold (planTemplateHold) keeps such a template from firing, but the CronJob
// controller fires from its own cache, which can lag the hold by seconds
// under load; such a Job would run the change under the task's name, so
// it is deleted, as the CronJob controller deletes the Jobs it controls
// that its policies end. A Job without a signature, or with another one (a
// template the task had before, a key since replaced), is only reported:
// nothing shows it was made from a template the operator holds now.
func (p *pass) madeFromImplant(job *batchv1.Job) bool {
	sig := job.Annotations[provenance.SignatureAnnotation]
	if finished, _ := jobutil.Finished(job); finished || sig == "" || p.jobTemplate == nil {
		return false
	}
	return sig == p.jobTemplate.Annotations[provenance.SignatureAnnotation]
}

// runJobName is the name of the Job the operator starts for a run: a
// catch-up run's is the CronJob's name for its fire time, any other's
// manualJobName.
func runJobName(task *platformv1.ScheduleTask, tr *platformv1.TaskRun) string {
	if tr.Spec.Trigger == platformv1.TriggerCatchUp && tr.Spec.ScheduledTime != nil {
		return catchUpName(task, tr.Spec.ScheduledTime.Time)
	}
	return manualJobName(tr)
}

// waitsItsTurn reports whether a run the operator starts waits for an
// active run rather than being refused or replacing it: backfill and
// catch-up runs stand for past fire times, which are all to run.
func waitsItsTurn(tr *platformv1.TaskRun) bool {
	return tr.Spec.Trigger == platformv1.TriggerBackfill || tr.Spec.Trigger == platformv1.TriggerCatchUp
}

// signRun makes the task's container in the Job of a run the operator
// starts (manual and backfill runs) the run's: the run's own args and env
// (admission let only a user who may create the Job directly set them), and
// PLATFORM_SCHEDULED_TIME, the time the run stands for. It signs the pod
// template that results, as the API server will store it: the Job is then
// provably the run of the task it claims to be (see planRecords).
func signRun(signer *provenance.Signer, task *platformv1.ScheduleTask, job *batchv1.Job, tr *platformv1.TaskRun) {
	// The operator's value of the time wins over one the run sets.
	env := slices.DeleteFunc(slices.Clone(tr.Spec.Env), func(e corev1.EnvVar) bool { return e.Name == platformv1.ScheduledTimeEnv })
	env = append(env, corev1.EnvVar{
		Name: platformv1.ScheduledTimeEnv, Value: tr.DueTime().UTC().Format(time.RFC3339)})
	run := &platformv1.TaskRunSpec{Args: tr.Spec.Args, Env: env}
	for i := range job.Spec.Template.Spec.Containers {
		c := &job.Spec.Template.Spec.Containers[i]
		if c.Name == platformv1.TaskContainerName {
			c.Args = run.RunArgs(c.Args)
			c.Env = run.RunEnv(c.Env)
		}
	}
	job.Annotations[provenance.SignatureAnnotation] = signer.Sign(task.UID,
		provenance.TemplateHash(provenance.Defaulted(&job.Spec.Template)))
}

// stopRun asks for a run to end, with a reason and a message (see
// refused), with a patch, so a run slimmed by the cache is safe to pass.
func (r *Reconciler) stopRun(ctx context.Context, tr *platformv1.TaskRun, reason, message string) error {
	stopped := refused(tr, reason, message)
	if stopped == nil {
		return nil
	}
	if err := r.Patch(ctx, stopped, client.MergeFrom(tr)); err != nil {
		return fmt.Errorf("stop TaskRun %s: %w", tr.Name, err)
	}
	return nil
}

// stopping reports whether a run was asked to stop and not yet ended.
func stopping(tr *platformv1.TaskRun) bool {
	return tr.Annotations[platformv1.StopReasonAnnotation] != ""
}

// jobFromTemplate returns a new Job of the job template tmpl, in namespace.
func jobFromTemplate(namespace string, tmpl *batchv1.JobTemplateSpec, name string) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   namespace,
			Name:        name,
			Labels:      map[string]string{},
			Annotations: map[string]string{instantiateAnnotation: "manual"},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	maps.Copy(job.Labels, tmpl.Labels)
	maps.Copy(job.Annotations, tmpl.Annotations)
	return job
}

// manualJobName is the Job name of a manual run. The CronJob controller
// names its Jobs <cronjob>-<minutes since the epoch>, all digits after the
// last dash; a manual run's Job ends in -m<8 hex digits> instead, so no
// TaskRun name (<task>-29934076, say) can take the name of a scheduled Job
// to come. The hash is of the TaskRun's name and UID: deterministic for the
// run, so a retry finds the Job it made, and different for a run of the same
// name made again. 63 characters at most, as Jobs label their pods with
// their name.
func manualJobName(tr *platformv1.TaskRun) string {
	return truncateName(tr.Name, 53) + "-m" + shortHash(tr.Name+"/"+string(tr.UID))
}

// scheduleSkew is how long after its starting deadline a Job of a fire
// time may still be created: the CronJob controller checks the deadline on
// its clock and then creates the Job, which the API server stamps on its own.
const scheduleSkew = 5 * time.Second

// firedFor returns the fire time a Job of the task's CronJob was started
// for by the CronJob controller, or nil when the Job is not such a one. The
// controller names the Job <cronjob>-<minutes since the epoch> of a fire
// time of the schedule and creates it at that time, no later than the
// starting deadline (without one, before the next fire time). A Job that
// anyone who may create Jobs made from the template under such a name, but
// at another time, is no scheduled run: it would stand for a fire time it
// did not run at, and move the task's account of fire times and missed
// runs (newestScheduled) to a time of its maker's choosing.
func firedFor(task *platformv1.ScheduleTask, cj *batchv1.CronJob, job *batchv1.Job) *metav1.Time {
	fire, ok := fireTimeOfName(cj.Name, job.Name)
	if !ok {
		return nil
	}
	created := job.CreationTimestamp.Time
	if created.Before(fire) {
		return nil
	}
	sched, err := schedule.Parse(cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil || !sched.Next(fire.Add(-time.Second)).Equal(fire) {
		return nil
	}
	if d := startingDeadline(&task.Spec); d != nil {
		if created.After(fire.Add(time.Duration(*d)*time.Second + scheduleSkew)) {
			return nil
		}
	} else if next := sched.Next(fire); !next.IsZero() && !created.Before(next) {
		return nil
	}
	return &metav1.Time{Time: fire}
}

// truncateName cuts s to at most n bytes, without a trailing dash or dot.
func truncateName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && (s[len(s)-1] == '-' || s[len(s)-1] == '.') {
		s = s[:len(s)-1]
	}
	return s
}

// shortHash is 8 hex digits of the SHA-256 of s.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
