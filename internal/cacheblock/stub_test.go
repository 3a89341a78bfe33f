// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package cacheblock

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// stubMeta is the metadata a stub of an object made by meta keeps, written
// out by hand: the oracle of the table below.
func stubMeta(owners ...metav1.OwnerReference) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "attacker", Name: "big", UID: "u-1", ResourceVersion: "42",
		OwnerReferences: owners,
		Labels: map[string]string{platformv1.ManagedByLabel: platformv1.ManagedByValue,
			"app.kubernetes.io/name": "order-service", "platform.example.com/track": "canary"}}
}

// fullMeta is the metadata of a labelled object a tenant could make: the
// operator's labels, others, annotations, managedFields.
func fullMeta(owners ...metav1.OwnerReference) metav1.ObjectMeta {
	m := stubMeta(owners...)
	m.Labels["team"] = "red"
	m.Labels["example.com/huge"] = strings.Repeat("x", 60)
	// Labels under the operator's prefixes that the operator never sets:
	// an object may carry thousands.
	for i := range 100 {
		m.Labels[fmt.Sprintf("app.kubernetes.io/x-%d", i)] = strings.Repeat("x", 60)
		m.Labels[fmt.Sprintf("platform.example.com/x-%d", i)] = strings.Repeat("x", 60)
	}
	m.Annotations = map[string]string{"payload": strings.Repeat("y", 4096)}
	m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	m.Generation = 3
	m.CreationTimestamp = metav1.Unix(1700000000, 0)
	return m
}

func controller(apiVersion, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "owner", UID: "owner-uid",
		Controller: ptr.To(true)}
}

func TestCacheOptions_KeepsWholeOnlyWhatTheOperatorsKindsControl(t *testing.T) {
	platformOwner := controller(platformv1.GroupVersion.String(), "AppDeployment")
	taskOwner := controller(platformv1.GroupVersion.String(), "ScheduleTask")
	rsOwner := controller("apps/v1", "ReplicaSet")
	jobOwner := controller("batch/v1", "Job")
	cronJobOwner := controller("batch/v1", "CronJob")
	notController := metav1.OwnerReference{APIVersion: platformv1.GroupVersion.String(), Kind: "AppDeployment",
		Name: "owner", UID: "owner-uid"}
	lookalike := controller("platform.example.com.evil.io/v1", "AppDeployment")
	hugeRef := controller(platformv1.GroupVersion.String(), strings.Repeat("K", 100_000))
	foreignRS := controller("example.com/v1", "ReplicaSet")

	deployment := func(m metav1.ObjectMeta) client.Object {
		return &appsv1.Deployment{ObjectMeta: m, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(0)),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
				Env: []corev1.EnvVar{{Name: "PAD", Value: strings.Repeat("z", 8192)}}}}}}},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 3}}
	}
	pod := func(m metav1.ObjectMeta) client.Object {
		return &corev1.Pod{ObjectMeta: m, Spec: corev1.PodSpec{NodeName: "n"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	job := func(m metav1.ObjectMeta) client.Object {
		return &batchv1.Job{ObjectMeta: m, Spec: batchv1.JobSpec{Parallelism: ptr.To(int32(1))},
			Status: batchv1.JobStatus{Active: 1}}
	}
	cronJob := func(m metav1.ObjectMeta) client.Object {
		return &batchv1.CronJob{ObjectMeta: m, Spec: batchv1.CronJobSpec{Schedule: "* * * * *"}}
	}
	service := func(m metav1.ObjectMeta) client.Object {
		return &corev1.Service{ObjectMeta: m, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}}
	}
	replicaSet := func(m metav1.ObjectMeta) client.Object {
		return &appsv1.ReplicaSet{ObjectMeta: m, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(1))}}
	}
	// Owner references have no limit but the object's size: thousands of
	// them, the controller among them, weigh as much as the payload.
	manyOwners := make([]metav1.OwnerReference, 0, 3001)
	for i := range 3000 {
		manyOwners = append(manyOwners, metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Ballast",
			Name: fmt.Sprintf("ballast-%04d-%s", i, strings.Repeat("b", 200)), UID: "b"})
	}
	manyOwners = append(manyOwners, rsOwner)

	tests := []struct {
		name  string
		obj   client.Object
		whole bool
		// stub is what a stubbed object must be, written out by hand.
		stub client.Object
	}{
		{name: "Deployment controlled by an AppDeployment, of its name, is whole",
			obj: named(deployment(fullMeta(platformOwner)), "owner"), whole: true},
		{name: "canary Deployment controlled by an AppDeployment is whole",
			obj: named(deployment(fullMeta(platformOwner)), "owner-canary"), whole: true},
		{name: "Service controlled by an AppDeployment, of its name, is whole",
			obj: named(service(fullMeta(platformOwner)), "owner"), whole: true},
		{name: "CronJob controlled by a ScheduleTask, of its name, is whole",
			obj: named(cronJob(fullMeta(taskOwner)), "owner"), whole: true},
		{name: "Pod of a ReplicaSet, of a name it generates, is whole",
			obj: named(pod(fullMeta(rsOwner)), "owner-x7k2p"), whole: true},
		{name: "Pod of a Job, of a name it generates, is whole",
			obj: named(pod(fullMeta(jobOwner)), "owner-b4z9q"), whole: true},
		{name: "Job of a CronJob for a fire time is whole",
			obj: named(job(fullMeta(cronJobOwner)), "owner-29934076"), whole: true},
		{name: "Job of a CronJob for a manual run is whole",
			obj: named(job(fullMeta(cronJobOwner)), "nightly-now-m0a1b2c3d"), whole: true},
		// A tenant may name its own AppDeployment (its real UID) as the
		// controller of anything it creates: only the names the operator
		// gives are kept whole.
		{name: "Deployment claiming an AppDeployment under another name is a stub",
			obj: deployment(fullMeta(platformOwner)), stub: &appsv1.Deployment{ObjectMeta: stubMeta(platformOwner)}},
		{name: "Service claiming an AppDeployment under another name is a stub",
			obj: service(fullMeta(platformOwner)), stub: &corev1.Service{ObjectMeta: stubMeta(platformOwner)}},
		{name: "CronJob claiming a ScheduleTask under another name is a stub",
			obj: cronJob(fullMeta(taskOwner)), stub: &batchv1.CronJob{ObjectMeta: stubMeta(taskOwner)}},
		{name: "Pod claiming a ReplicaSet under a name it does not generate is a stub",
			obj: pod(fullMeta(rsOwner)), stub: &corev1.Pod{ObjectMeta: stubMeta(rsOwner)}},
		// kubectl create job --from=cronjob/... names a Job as its user says.
		{name: "Job of a CronJob under any name is whole", obj: job(fullMeta(cronJobOwner)), whole: true},
		{name: "Deployment controlled by a ScheduleTask is a stub",
			obj: named(deployment(fullMeta(taskOwner)), "owner"), stub: named(&appsv1.Deployment{ObjectMeta: stubMeta(taskOwner)}, "owner")},
		{name: "a stub drops a controller reference longer than any real one",
			obj: deployment(fullMeta(hugeRef)), stub: &appsv1.Deployment{ObjectMeta: stubMeta()}},
		{name: "labelled ownerless Deployment is a stub", obj: deployment(fullMeta()),
			stub: &appsv1.Deployment{ObjectMeta: stubMeta()}},
		{name: "labelled Deployment owned but not controlled by an AppDeployment is a stub",
			obj:  deployment(fullMeta(notController)),
			stub: &appsv1.Deployment{ObjectMeta: stubMeta()}},
		{name: "a stub keeps the controller alone of thousands of owners",
			obj:  deployment(fullMeta(manyOwners...)),
			stub: &appsv1.Deployment{ObjectMeta: stubMeta(rsOwner)}},
		{name: "Deployment controlled by a group that merely starts like the operator's is a stub",
			obj:  named(deployment(fullMeta(lookalike)), "owner"),
			stub: named(&appsv1.Deployment{ObjectMeta: stubMeta(lookalike)}, "owner")},
		{name: "Deployment controlled by a ReplicaSet is a stub", obj: deployment(fullMeta(rsOwner)),
			stub: &appsv1.Deployment{ObjectMeta: stubMeta(rsOwner)}},
		{name: "labelled ownerless Service is a stub", obj: service(fullMeta()),
			stub: &corev1.Service{ObjectMeta: stubMeta()}},
		{name: "labelled ownerless CronJob is a stub", obj: cronJob(fullMeta()),
			stub: &batchv1.CronJob{ObjectMeta: stubMeta()}},
		{name: "labelled ownerless Pod is a stub", obj: pod(fullMeta()), stub: &corev1.Pod{ObjectMeta: stubMeta()}},
		{name: "Pod controlled by another group's ReplicaSet is a stub", obj: pod(fullMeta(foreignRS)),
			stub: &corev1.Pod{ObjectMeta: stubMeta(foreignRS)}},
		{name: "Pod controlled by a CronJob is a stub", obj: pod(fullMeta(cronJobOwner)),
			stub: &corev1.Pod{ObjectMeta: stubMeta(cronJobOwner)}},
		{name: "labelled ownerless Job is a stub", obj: job(fullMeta()), stub: &batchv1.Job{ObjectMeta: stubMeta()}},
		{name: "Job controlled by a ReplicaSet is a stub", obj: job(fullMeta(rsOwner)),
			stub: &batchv1.Job{ObjectMeta: stubMeta(rsOwner)}},
		{name: "CronJob controlled by a CronJob is a stub", obj: cronJob(fullMeta(cronJobOwner)),
			stub: &batchv1.CronJob{ObjectMeta: stubMeta(cronJobOwner)}},
		{name: "ReplicaSet controlled by a Deployment is a stub", obj: replicaSet(fullMeta(controller("apps/v1", "Deployment"))),
			stub: &appsv1.ReplicaSet{ObjectMeta: stubMeta(controller("apps/v1", "Deployment"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := Options(stubTestBlocks()...)
			if err != nil {
				t.Fatal(err)
			}
			var transform func(any) (any, error)
			for obj, by := range opts.ByObject {
				if reflect.TypeOf(obj) == reflect.TypeOf(tt.obj) {
					transform = by.Transform
				}
			}
			if transform == nil {
				t.Fatalf("no transform for %T", tt.obj)
			}
			in := tt.obj.DeepCopyObject().(client.Object)
			got, err := transform(in)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.stub
			if tt.whole {
				// Whole: everything but managedFields, which no block here
				// asks for.
				want = tt.obj.DeepCopyObject().(client.Object)
				want.SetManagedFields(nil)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("the cache keeps (-want +got):\n%s", d)
			}
		})
	}
}

// named sets obj's name and returns it.
func named(obj client.Object, name string) client.Object {
	obj.SetName(name)
	return obj
}

// stubTestBlocks are blocks shaped like the operator's: their transforms
// keep what they are given, so the table sees the ownership rule alone.
func stubTestBlocks() []Block {
	app := schema.GroupKind{Group: platformv1.GroupVersion.Group, Kind: "AppDeployment"}
	task := schema.GroupKind{Group: platformv1.GroupVersion.Group, Kind: "ScheduleTask"}
	anyName := func(string, string) bool { return true }
	return []Block{
		{KindLabel: "platform.example.com/scheduletask", Children: []Child{
			{Object: &batchv1.CronJob{}, Owners: []Owner{{GroupKind: task, Names: SameName()}}},
			{Object: &batchv1.Job{}, Owners: []Owner{{GroupKind: schema.GroupKind{Group: "batch", Kind: "CronJob"}, Names: anyName}}}}},
		{KindLabel: "platform.example.com/taskrun", Children: []Child{
			{Object: &corev1.Pod{}, Owners: []Owner{{GroupKind: schema.GroupKind{Group: "batch", Kind: "Job"}, Names: Generated}}}}},
		{KindLabel: platformv1.AppNameLabel, Children: []Child{
			{Object: &appsv1.Deployment{}, Owners: []Owner{{GroupKind: app, Names: SameName("", "-canary")}}},
			{Object: &corev1.Service{}, Owners: []Owner{{GroupKind: app, Names: SameName("", "-canary")}}},
			{Object: &corev1.Pod{}, Owners: []Owner{{GroupKind: schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, Names: Generated}}},
			{Object: &appsv1.ReplicaSet{}, Transform: StubTransform}}},
	}
}

func TestNameRules(t *testing.T) {
	long := strings.Repeat("a", 60)
	for _, c := range []struct {
		rule         func(owner, child string) bool
		owner, child string
		want         bool
	}{
		{SameName(), "shop", "shop", true},
		{SameName(), "shop", "shop-canary", false},
		{SameName("", "-canary"), "shop", "shop-canary", true},
		{SameName("", "-canary"), "shop", "shop-junk", false},
		{Generated, "shop-7d9f", "shop-7d9f-x7k2p", true},
		{Generated, "shop-7d9f", "shop-7d9f-x7k2", false},
		{Generated, "shop-7d9f", "shop-7d9f-x7k2pq", false},
		{Generated, "shop-7d9f", "other-7d9f-x7k2p", false},
		// The API server cuts a base longer than 58 characters.
		{Generated, long, long[:58] + "x7k2p", true},
		{Generated, long, long + "-x7k2p", false},
	} {
		if got := c.rule(c.owner, c.child); got != c.want {
			t.Errorf("rule(%q, %q) = %t, want %t", c.owner, c.child, got, c.want)
		}
	}
}

func TestKeepKeys_LeavesOutValuesNoOperatorWouldSet(t *testing.T) {
	got := KeepKeys(map[string]string{"a": "1", "b": strings.Repeat("x", 200_000), "c": "3"}, "a", "b")
	if d := cmp.Diff(map[string]string{"a": "1"}, got); d != "" {
		t.Errorf("KeepKeys (-want +got):\n%s", d)
	}
}
