// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"encoding/json"
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/cacheblock"
	"github.com/example/platform-operator/internal/jobutil"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/tracing"
)

// CacheBlock is what the ScheduleTask controller needs of the manager's
// cache: the CronJobs it applies and the Jobs they make, both slimmed to
// what it reads, and of a CronJob's managedFields only the entries of other
// managers that hold fields of its job template.
func CacheBlock() cacheblock.Block {
	return cacheblock.Block{
		KindLabel: platformv1.ScheduleTaskLabel,
		// The CronJob is the task's own, of its name; a run's Job is its
		// task's CronJob's (planRecords checks which CronJob by UID).
		Children: []cacheblock.Child{{
			Object:        &batchv1.CronJob{},
			Transform:     stripCronJob,
			ManagedFields: foreignTemplateEntry,
			Owners:        []cacheblock.Owner{{GroupKind: taskKind, Names: cacheblock.SameName()}},
		}, {
			Object:    &batchv1.Job{},
			Transform: stripJob,
			Owners:    []cacheblock.Owner{{GroupKind: schema.GroupKind{Group: batchv1.GroupName, Kind: "CronJob"}, Names: anyJobName}},
		}},
	}
}

// taskKind is the ScheduleTask's group and kind, as its CronJob's
// controller reference names it.
var taskKind = platformv1.GroupVersion.WithKind("ScheduleTask").GroupKind()

// anyJobName is the name rule of a task's Jobs: any name. The CronJob
// controller names its Jobs for a fire time and the operator its runs'
// (manualJobName), but `kubectl create job NAME --from=cronjob/TASK` makes
// a Job of any name controlled by the CronJob, and a Job of the task's
// signed template is a run of the task, whoever made it (planRecords). Such
// a Job costs the cache what stripJob keeps of it, a few hundred bytes
// whatever the Job holds.
func anyJobName(_, _ string) bool { return true }

// stripCronJob keeps of a CronJob what the ScheduleTask controller reads:
//
//   - the spec, but for the job template's pod template: the applier's drift
//     check compares every other field the operator sets. The pod template
//     is most of a CronJob and all of a large task's command, args and
//     env; what is read of it is its hash, computed here from the full
//     template (with what the API server defaulted) and kept in
//     provenance.TemplateHashAnnotation, overwriting any value the CronJob
//     carried. The controller checks that hash against the one it signed on
//     every pass (planTemplateHold), which sees any change of the template, so
//     the applier skips the template (Applier.Unchecked); a manual run reads
//     the CronJob past the cache for its template;
//   - of the metadata, the labels and the annotation the operator sets (the
//     drift check reads no others) and the owner references;
//   - of the status, lastScheduleTime and lastSuccessfulTime, for the task's
//     status; the list of active Jobs, which grows with a task's
//     concurrency, is read from the Jobs themselves;
//   - of managedFields, the entries of other managers that own fields of the
//     job template (see foreignTemplateEntry), kept by the cache block.
//
// Nothing updates a CronJob from the cache: the applier applies a
// configuration, and the template is put back (removeImplants) from an
// object read past the cache.
func stripCronJob(obj any) (any, error) {
	if cj, ok := obj.(*batchv1.CronJob); ok {
		tmpl := &cj.Spec.JobTemplate
		hash := fullTemplateHash(&tmpl.Spec.Template, cj.Annotations)
		tmpl.Spec.Template = corev1.PodTemplateSpec{}
		cj.Labels = cacheblock.KeepKeys(cj.Labels, platformv1.ScheduleTaskLabel, platformv1.ManagedByLabel)
		cj.Annotations = cacheblock.KeepKeys(cj.Annotations, apply.AppliedHashAnnotation)
		if cj.Annotations == nil {
			cj.Annotations = map[string]string{}
		}
		cj.Annotations[provenance.TemplateHashAnnotation] = hash
		// The operator gives the CronJob and its job template the same
		// labels: one map holds both. The cache's objects are never written
		// to (reads get deep copies), so sharing is safe.
		if maps.Equal(tmpl.Labels, cj.Labels) {
			tmpl.Labels = cj.Labels
		}
		cj.Status = batchv1.CronJobStatus{
			LastScheduleTime:   cj.Status.LastScheduleTime,
			LastSuccessfulTime: cj.Status.LastSuccessfulTime,
		}
	}
	return obj, nil
}

// fullTemplateHash is the hash a transform keeps of a pod template: the
// template's own, or, when the template is already gone, the hash the
// transform kept when it dropped it. client-go may run a transform twice on
// one object: with the streaming initial list (WatchList) its reflector
// transforms each object in a temporary store and the informer's store
// transforms it again (kubernetes#131799). Hashing the empty template then
// would leave every Job present at a manager's start unverifiable until it
// changes, and one that never changes again (it ended while the manager
// was down) never recorded. A template as the API server stores it always
// has a container, so an empty one is this transform's work, never a value
// from outside: a forged hash annotation on a real object is always
// overwritten.
func fullTemplateHash(t *corev1.PodTemplateSpec, annotations map[string]string) string {
	if len(t.Spec.Containers) == 0 {
		return annotations[provenance.TemplateHashAnnotation]
	}
	return provenance.TemplateHash(t)
}

// storedTemplateHash is the hash of the CronJob's pod template as the API
// server stores it: computed from the template when cj holds it (read past
// the cache, or returned by a write), else the one stripCronJob kept when it
// dropped the template. A stored pod template always has a container, so an
// empty one is the cache's.
func storedTemplateHash(cj *batchv1.CronJob) string {
	if len(cj.Spec.JobTemplate.Spec.Template.Spec.Containers) == 0 {
		return cj.Annotations[provenance.TemplateHashAnnotation]
	}
	return provenance.TemplateHash(&cj.Spec.JobTemplate.Spec.Template)
}

// stripJob keeps of a Job what the ScheduleTask and TaskRun controllers
// read: its name, UID, owner, creation time, task label, the annotations that
// tie it to a schedule or a manual run, prove where it came from and name the
// trace its run links to, and of its status the times, the pod counts and
// the condition that finished it (jobutil.FinishedCondition); the conditions that lead up to it
// (SuccessCriteriaMet, FailureTarget) repeat it. Its spec (the pod template above all) and the labels and
// annotations Kubernetes adds are most of the object; what is read of the
// template is its hash, computed here from the full Job and kept in
// provenance.TemplateHashAnnotation, overwriting any value the Job carried,
// so the Job's signature can be checked without the template. New Jobs are
// built from the CronJob, never from another Job; nothing updates a Job, so
// the slimmed copy is never written back.
func stripJob(obj any) (any, error) {
	if job, ok := obj.(*batchv1.Job); ok {
		hash := fullTemplateHash(&job.Spec.Template, job.Annotations)
		job.Spec = batchv1.JobSpec{}
		// The recorded label is kept for the one event that carries it: the
		// Job leaving the cache (see predicates.NotLeavingTheCache).
		job.Labels = cacheblock.KeepKeys(job.Labels, platformv1.ScheduleTaskLabel, platformv1.RecordedLabel)
		job.Annotations = cacheblock.KeepKeys(job.Annotations,
			batchv1.CronJobScheduledTimestampAnnotation, platformv1.TaskRunUIDAnnotation,
			provenance.SignatureAnnotation, tracing.TraceParentAnnotation)
		if job.Annotations == nil {
			job.Annotations = map[string]string{}
		}
		job.Annotations[provenance.TemplateHashAnnotation] = hash
		var finished []batchv1.JobCondition
		if c := jobutil.FinishedCondition(job); c != nil {
			finished = []batchv1.JobCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message,
				LastTransitionTime: c.LastTransitionTime}}
		}
		job.Status = batchv1.JobStatus{
			StartTime: job.Status.StartTime, CompletionTime: job.Status.CompletionTime,
			Active: job.Status.Active, Succeeded: job.Status.Succeeded, Failed: job.Status.Failed,
			Conditions: finished,
		}
	}
	return obj, nil
}

// apiServerManagers are field managers of the API server itself, whose
// entries are never another tenant's additions.
var apiServerManagers = map[string]bool{"kube-apiserver": true, "before-first-apply": true}

// foreignTemplateEntry reports whether a CronJob's managedFields entry is
// another manager's claim on fields of the job template: not the operator's
// own, not the API server's, not of a subresource (the CronJob controller
// writes status), and holding something under spec.jobTemplate.
func foreignTemplateEntry(e metav1.ManagedFieldsEntry) bool {
	if e.Manager == FieldManager || apiServerManagers[e.Manager] || e.Subresource != "" || e.FieldsV1 == nil {
		return false
	}
	var fields struct {
		Spec struct {
			JobTemplate json.RawMessage `json:"f:jobTemplate"`
		} `json:"f:spec"`
	}
	return json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields) == nil && len(fields.Spec.JobTemplate) > 0
}
