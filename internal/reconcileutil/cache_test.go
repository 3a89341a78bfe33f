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

package reconcileutil

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestCacheOptions_KeepsOnlyTheManagedFieldsABlockReads(t *testing.T) {
	keepOthers := func(e metav1.ManagedFieldsEntry) bool { return e.Manager != "operator" }
	opts, err := CacheOptions(
		CacheBlock{KindLabel: "kind-a", Children: mapOf(&batchv1.CronJob{}, nil),
			ManagedFields: map[client.Object]func(metav1.ManagedFieldsEntry) bool{&batchv1.CronJob{}: keepOthers}},
		CacheBlock{KindLabel: "kind-b", Children: mapOf(&batchv1.CronJob{}, nil)},
	)
	if err != nil {
		t.Fatal(err)
	}
	var transform func(any) (any, error)
	for _, by := range opts.ByObject {
		transform = by.Transform
	}
	cronJob := func(label string) *batchv1.CronJob {
		return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{label: "x"},
			OwnerReferences: []metav1.OwnerReference{operatorController},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "operator"}, {Manager: "co-tenant"}}}}
	}
	a, _ := transform(cronJob("kind-a"))
	b, _ := transform(cronJob("kind-b"))
	if d := cmp.Diff([]metav1.ManagedFieldsEntry{{Manager: "co-tenant"}}, a.(*batchv1.CronJob).ManagedFields); d != "" {
		t.Errorf("kind-a's CronJob keeps (-want +got):\n%s", d)
	}
	if b.(*batchv1.CronJob).ManagedFields != nil {
		t.Errorf("kind-b's CronJob keeps managedFields it did not ask for")
	}

	if _, err := CacheOptions(CacheBlock{KindLabel: "k", Children: mapOf(&batchv1.Job{}, nil),
		ManagedFields: map[client.Object]func(metav1.ManagedFieldsEntry) bool{&batchv1.CronJob{}: keepOthers}}); err == nil {
		t.Errorf("a block keeping managedFields of a type it does not cache was accepted")
	}
}
