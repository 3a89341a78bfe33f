// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package controller

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/testutil"
)

// cacheSamples are full objects of each kind the manager caches, as the
// API server sends them: labelled and controlled as the operator's
// children are, so each meets the transform that slims it.
func cacheSamples() map[reflect.Type][]client.Object {
	task := testutil.NewScheduleTask("ns", "t")
	task.UID = "task-uid"
	taskLabels := map[string]string{platformv1.ScheduleTaskLabel: "t", platformv1.ManagedByLabel: platformv1.ManagedByValue}
	container := corev1.Container{Name: platformv1.TaskContainerName, Image: "busybox:1.36", Args: []string{"a"}}
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t", UID: "cj-uid", Labels: taskLabels,
			Annotations:     map[string]string{"other": "x"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(task, platformv1.GroupVersion.WithKind("ScheduleTask"))}},
		Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: taskLabels,
				Annotations: map[string]string{provenance.SignatureAnnotation: "v1.sig"}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: taskLabels},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{container}}}}}},
	}
	job := testutil.JobFromCronJob(cj, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	job.UID = "job-uid"
	testutil.CompleteJob(job, time.Date(2026, 12, 1, 12, 0, 1, 0, time.UTC), time.Date(2026, 12, 1, 12, 0, 9, 0, time.UTC))
	runPod := testutil.PodForJob(job, "t-1-abcde", corev1.PodSucceeded, 0)
	run := &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t-1", Labels: taskLabels,
			Annotations: map[string]string{platformv1.RunNumberAnnotation: "1"}},
		Spec: platformv1.TaskRunSpec{ScheduleTaskName: "t", Trigger: platformv1.TriggerScheduled,
			JobRef: &platformv1.JobRef{Name: job.Name, UID: job.UID}},
		Status: platformv1.TaskRunStatus{Phase: platformv1.TaskRunSucceeded, RunNumber: 1, Message: "done"},
	}
	ad := &platformv1.AppDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "ad-uid"}}
	appLabels := map[string]string{platformv1.AppNameLabel: "web", platformv1.TrackLabel: platformv1.TrackStable,
		platformv1.ManagedByLabel: platformv1.ManagedByValue}
	owned := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Labels: appLabels,
			Annotations:     map[string]string{"other": "x"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ad, platformv1.GroupVersion.WithKind("AppDeployment"))}}
	}
	appTemplate := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: appLabels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
	deploy := &appsv1.Deployment{ObjectMeta: owned("web"), Spec: appsv1.DeploymentSpec{Template: appTemplate}}
	rs := &appsv1.ReplicaSet{ObjectMeta: owned("web-abc"), Spec: appsv1.ReplicaSetSpec{Template: appTemplate}}
	rs.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(deploy, appsv1.SchemeGroupVersion.WithKind("Deployment"))}
	appPod := &corev1.Pod{ObjectMeta: owned("web-abc-12345"), Spec: appTemplate.Spec,
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	appPod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	svc := &corev1.Service{ObjectMeta: owned("web"), Spec: corev1.ServiceSpec{Selector: appLabels}}
	revision := &appsv1.ControllerRevision{ObjectMeta: owned("web-0123456789"), Revision: 1,
		Data: runtime.RawExtension{Raw: []byte(`{"spec":{"image":"web:1"}}`)}}
	return map[reflect.Type][]client.Object{
		reflect.TypeFor[*batchv1.CronJob]():           {cj},
		reflect.TypeFor[*batchv1.Job]():               {job},
		reflect.TypeFor[*corev1.Pod]():                {runPod, appPod},
		reflect.TypeFor[*platformv1.TaskRun]():        {run},
		reflect.TypeFor[*appsv1.Deployment]():         {deploy},
		reflect.TypeFor[*appsv1.ReplicaSet]():         {rs},
		reflect.TypeFor[*corev1.Service]():            {svc},
		reflect.TypeFor[*appsv1.ControllerRevision](): {revision},
		reflect.TypeFor[*platformv1.ScheduleTask]():   {task},
		reflect.TypeFor[*platformv1.AppDeployment]():  {ad},
	}
}

// TestCacheOptions_EveryTransformLeavesItsOwnOutputAsItIs: client-go may
// run a cache transform on an object it already transformed (with the
// streaming initial list, the reflector's temporary store runs it and the
// informer's store runs it again, kubernetes#131799). A transform that
// computed something from what it drops (a template's hash) would then
// compute it from nothing: the run on its own output must change nothing.
func TestCacheOptions_EveryTransformLeavesItsOwnOutputAsItIs(t *testing.T) {
	opts, err := CacheOptions()
	if err != nil {
		t.Fatal(err)
	}
	samples := cacheSamples()
	for obj, by := range opts.ByObject {
		transform := by.Transform
		if transform == nil {
			transform = opts.DefaultTransform
		}
		objs := samples[reflect.TypeOf(obj)]
		if len(objs) == 0 {
			t.Errorf("no sample of %T, which the cache transforms", obj)
			continue
		}
		for _, sample := range objs {
			once, err := transform(sample.DeepCopyObject())
			if err != nil {
				t.Fatalf("%T %s: %v", obj, sample.GetName(), err)
			}
			twice, err := transform(once.(runtime.Object).DeepCopyObject())
			if err != nil {
				t.Fatalf("%T %s, second run: %v", obj, sample.GetName(), err)
			}
			if d := cmp.Diff(once, twice); d != "" {
				t.Errorf("%T %s: a second run of the transform changed it (-once +twice):\n%s", obj, sample.GetName(), d)
			}
		}
	}
}
