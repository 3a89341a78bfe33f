// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// TestRetainedBytes_CountsWhatTheCacheKeepsAfterItsTransform measures Jobs
// as the API server sends them, kept whole and kept through the manager's
// own transform: both at least the Go struct, the transformed ones smaller.
func TestRetainedBytes_CountsWhatTheCacheKeepsAfterItsTransform(t *testing.T) {
	scheme := testenv.Scheme()
	codec := protobuf.NewSerializer(scheme, scheme)
	encoded := make([][]byte, 2000)
	for i := range encoded {
		job := &batchv1.Job{
			TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("data-%08d", i),
				UID: "3f6d2c1e-0000-4000-8000-000000000001",
				// A CronJob's, as a task's Jobs are: others are kept as stubs.
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "data",
					UID: "3f6d2c1e-0000-4000-8000-000000000002", Controller: ptr.To(true)}},
				Labels: map[string]string{platformv1.ScheduleTaskLabel: "data",
					platformv1.ManagedByLabel: platformv1.ManagedByValue, "batch.kubernetes.io/job-name": "x"}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "main", Image: "registry.example.com/data:v1", Command: []string{"/bin/run", "--all", "--verbose"},
				Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}},
			}}}}},
		}
		var err error
		if encoded[i], err = k8sruntime.Encode(codec, job); err != nil {
			t.Fatal(err)
		}
	}
	opts, err := controller.CacheOptions()
	if err != nil {
		t.Fatal(err)
	}
	transform, _ := cachingOf(opts, &batchv1.Job{})
	// The heap is the process's: what an earlier test left running (an
	// informer, a manager winding down) allocates and frees between the
	// two readings too. The median of a few alternated measurements is
	// what the objects keep.
	wholes, slims := make([]float64, 0, 5), make([]float64, 0, 5)
	for range 5 {
		whole, err := retainedBytes(encoded, codec, nil)
		if err != nil {
			t.Fatal(err)
		}
		slim, err := retainedBytes(encoded, codec, transform)
		if err != nil {
			t.Fatal(err)
		}
		wholes, slims = append(wholes, whole), append(slims, slim)
	}
	slices.Sort(wholes)
	slices.Sort(slims)
	whole, slim := wholes[len(wholes)/2], slims[len(slims)/2]
	size := float64(unsafe.Sizeof(batchv1.Job{}))
	t.Logf("a Job kept whole: %.0f B; through the transform: %.0f B; the struct: %.0f B", whole, slim, size)
	if slim < size || whole <= slim {
		t.Errorf("a Job kept whole: %.0f B, through the cache's transform: %.0f B; want the struct's %.0f B <= slim < whole",
			whole, slim, size)
	}
}
