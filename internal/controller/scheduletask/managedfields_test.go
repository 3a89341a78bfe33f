// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/jobutil"
	"github.com/example/platform-operator/internal/provenance"
)

// entry is a managedFields entry with the FieldsV1 JSON fields.
func entry(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: subresource,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

const (
	oursFields = `{"f:metadata":{"f:labels":{"f:platform.example.com/scheduletask":{}}},
	  "f:spec":{"f:schedule":{},"f:jobTemplate":{"f:spec":{"f:template":{"f:spec":{
	    "f:containers":{"k:{\"name\":\"task\"}":{".":{},"f:image":{},"f:name":{}}},
	    "f:securityContext":{"f:seccompProfile":{"f:type":{}}}}}}}}}`
	implantFields = `{"f:metadata":{"f:labels":{"f:team":{}}},
	  "f:spec":{"f:jobTemplate":{"f:spec":{"f:template":{"f:spec":{
	    "f:hostNetwork":{},
	    "f:initContainers":{"k:{\"name\":\"implant\"}":{".":{},"f:image":{},"f:name":{}}},
	    "f:containers":{"k:{\"name\":\"task\"}":{"f:image":{}},"k:{\"name\":\"sidecar\"}":{".":{},"f:name":{}}},
	    "f:securityContext":{"f:runAsUser":{}}}}}}}}`
)

func TestDropForeignTemplateFields_NamesWhatOnlyOthersOwnAndDropsTheirClaims(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{
		entry(FieldManager, metav1.ManagedFieldsOperationApply, "", oursFields),
		entry("co-tenant", metav1.ManagedFieldsOperationApply, "", implantFields),
		entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{"f:lastScheduleTime":{}}}`),
		entry("kubectl-label", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:x":{}}}}`),
		entry("template-only", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:jobTemplate":{"f:metadata":{"f:annotations":{"f:a":{}}}}}}`),
	}
	implants, kept, err := dropForeignTemplateFields(entries)
	if err != nil {
		t.Fatal(err)
	}
	want := []implant{
		{manager: "co-tenant", fields: []string{
			`spec.jobTemplate.spec.template.spec.containers[{"name":"sidecar"}]`,
			`spec.jobTemplate.spec.template.spec.hostNetwork`,
			`spec.jobTemplate.spec.template.spec.initContainers`,
			`spec.jobTemplate.spec.template.spec.securityContext.runAsUser`,
		}},
		{manager: "template-only", fields: []string{`spec.jobTemplate.metadata`}},
	}
	if d := cmp.Diff(want, implants, cmp.AllowUnexported(implant{})); d != "" {
		t.Errorf("implants (-want +got):\n%s", d)
	}
	managers := make([]string, 0, len(kept))
	for _, e := range kept {
		managers = append(managers, e.Manager)
		if e.Manager == "co-tenant" {
			var got map[string]any
			if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{"f:team": map[string]any{}}}}, got); d != "" {
				t.Errorf("co-tenant keeps its label and nothing of the template (-want +got):\n%s", d)
			}
		}
	}
	// The template-only entry is left with nothing and goes; the others stay.
	if d := cmp.Diff([]string{FieldManager, "co-tenant", "kube-controller-manager", "kubectl-label"}, managers); d != "" {
		t.Errorf("kept entries (-want +got):\n%s", d)
	}
}

func TestForeignTemplateEntry(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    metav1.ManagedFieldsEntry
		want bool
	}{
		{"another manager's template field", entry("x", metav1.ManagedFieldsOperationApply, "", implantFields), true},
		{"the operator's own", entry(FieldManager, metav1.ManagedFieldsOperationApply, "", oursFields), false},
		{"the operator's own update", entry(FieldManager, metav1.ManagedFieldsOperationUpdate, "", oursFields), false},
		{"status", entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", implantFields), false},
		{"the API server", entry("before-first-apply", metav1.ManagedFieldsOperationUpdate, "", implantFields), false},
		{"outside the template", entry("kubectl-label", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:suspend":{}}}`), false},
		{"not JSON", entry("x", metav1.ManagedFieldsOperationUpdate, "", `nope`), false},
	} {
		if got := foreignTemplateEntry(tc.e); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStripJob_KeepsTheTemplateHashAndOverwritesAForgedOne(t *testing.T) {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j",
			Labels: map[string]string{platformv1.ScheduleTaskLabel: "t", "noise": "x"},
			Annotations: map[string]string{
				provenance.SignatureAnnotation:    "v1.sig",
				provenance.TemplateHashAnnotation: "forged",
				"noise":                           "x",
			}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "task", Image: "busybox:1.36"}}}}},
	}
	hash := provenance.TemplateHash(&job.Spec.Template)
	got, err := stripJob(job)
	if err != nil {
		t.Fatal(err)
	}
	j := got.(*batchv1.Job)
	want := map[string]string{provenance.SignatureAnnotation: "v1.sig", provenance.TemplateHashAnnotation: hash}
	if d := cmp.Diff(want, j.Annotations); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	if len(j.Spec.Template.Spec.Containers) != 0 {
		t.Error("the template is still cached")
	}
}

func TestStripJob_KeepsTheRecordedLabelForTheEventOfLeavingTheCache(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "t-1", Labels: map[string]string{
		platformv1.ScheduleTaskLabel: "t", platformv1.RecordedLabel: "true", "other": "x"}}}
	got, err := stripJob(job)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{platformv1.ScheduleTaskLabel: "t", platformv1.RecordedLabel: "true"}
	if d := cmp.Diff(want, got.(*batchv1.Job).Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
}

func TestStripJob_KeepsTheStatusTheRunIsBuiltFrom(t *testing.T) {
	start, end := metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(1060, 0))
	failed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
		Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: end}
	job := &batchv1.Job{Status: batchv1.JobStatus{
		StartTime: &start, CompletionTime: &end, Active: 0, Succeeded: 1, Failed: 3, Ready: ptr.To[int32](0),
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
				Message: "Job has reached the specified backoff limit", LastTransitionTime: end},
			func() batchv1.JobCondition { c := failed; c.LastProbeTime = end; return c }(),
		},
	}}
	got, err := stripJob(job)
	if err != nil {
		t.Fatal(err)
	}
	want := batchv1.JobStatus{StartTime: &start, CompletionTime: &end, Succeeded: 1, Failed: 3,
		Conditions: []batchv1.JobCondition{failed}}
	if d := cmp.Diff(want, got.(*batchv1.Job).Status); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
	if finished, succeeded := jobutil.Finished(got.(*batchv1.Job)); !finished || succeeded {
		t.Errorf("the stripped Job reads finished=%v succeeded=%v, want a failed Job", finished, succeeded)
	}
}

func TestStripCronJob_KeepsWhatTheOperatorReads(t *testing.T) {
	now := metav1.Now()
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "t",
			Labels: map[string]string{platformv1.ScheduleTaskLabel: "t", platformv1.ManagedByLabel: platformv1.ManagedByValue, "big": "x"},
			Annotations: map[string]string{apply.AppliedHashAnnotation: "h", "big": "x",
				provenance.TemplateHashAnnotation: "forged"}},
		Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{provenance.SignatureAnnotation: "v1.sig"}},
			Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2), Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "task", Image: "busybox", Args: []string{"a", "b"}}}},
			}},
		}},
		Status: batchv1.CronJobStatus{LastScheduleTime: &now, LastSuccessfulTime: &now,
			Active: []corev1.ObjectReference{{Name: "t-1"}}},
	}
	own := func() map[string]string {
		return map[string]string{platformv1.ScheduleTaskLabel: "t", platformv1.ManagedByLabel: platformv1.ManagedByValue}
	}
	cj.Spec.JobTemplate.Labels, cj.Spec.JobTemplate.Spec.Template.Labels = own(), own()
	full := cj.DeepCopy()
	want := cj.DeepCopy()
	want.Labels = own()
	want.Annotations = map[string]string{apply.AppliedHashAnnotation: "h",
		provenance.TemplateHashAnnotation: provenance.TemplateHash(&full.Spec.JobTemplate.Spec.Template)}
	want.Spec.JobTemplate.Spec.Template = corev1.PodTemplateSpec{}
	want.Status.Active = nil
	got, err := stripCronJob(cj)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("cached CronJob (-want +got):\n%s", d)
	}
	kept := got.(*batchv1.CronJob)
	// The CronJob's and job template's equal label sets are one map in the cache.
	if reflect.ValueOf(kept.Spec.JobTemplate.Labels).UnsafePointer() != reflect.ValueOf(kept.Labels).UnsafePointer() {
		t.Error("the CronJob's and job template's equal labels are not one map")
	}
	// The hash read from the cached copy is the hash of the full template,
	// as read from the API server.
	if a, b := storedTemplateHash(kept), storedTemplateHash(full); a != b || a == "" {
		t.Errorf("stored template hash: cached copy %q, full object %q; want equal", a, b)
	}
	full.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "evil"
	if storedTemplateHash(full) == storedTemplateHash(kept) {
		t.Error("the stored template hash did not change with the template")
	}
}

// TestStrip_ASecondPassKeepsTheHashOfTheFullTemplate: with WatchList (the
// streaming initial list), client-go's reflector runs the informer's
// transform on each object in its temporary store and the store runs it
// again (kubernetes#131799), so a transform sees objects it already
// slimmed. The hash must still be the full template's: a second pass that
// hashed the empty template would leave every Job present at a manager's
// start unverifiable, and a Job that never changes again (one that ended
// while the manager was down) never recorded.
func TestStrip_ASecondPassKeepsTheHashOfTheFullTemplate(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "task", Image: "busybox:1.36"}}}}
	want := provenance.TemplateHash(&tmpl)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "t-1", Labels: map[string]string{platformv1.ScheduleTaskLabel: "t"}},
		Spec: batchv1.JobSpec{Template: *tmpl.DeepCopy()}}
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "t"},
		Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: *tmpl.DeepCopy()}}}}
	for range 2 {
		if _, err := stripJob(job); err != nil {
			t.Fatal(err)
		}
		if _, err := stripCronJob(cj); err != nil {
			t.Fatal(err)
		}
	}
	if got := job.Annotations[provenance.TemplateHashAnnotation]; got != want {
		t.Errorf("Job stripped twice: template hash %q, want the full template's %q", got, want)
	}
	if got := storedTemplateHash(cj); got != want {
		t.Errorf("CronJob stripped twice: template hash %q, want the full template's %q", got, want)
	}
}
