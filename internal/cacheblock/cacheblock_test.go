// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package cacheblock

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCacheOptions_KeepsOnlyTheManagedFieldsABlockReads(t *testing.T) {
	keepOthers := func(e metav1.ManagedFieldsEntry) bool { return e.Manager != "operator" }
	opts, err := Options(
		Block{KindLabel: "kind-a", Children: []Child{{Object: &batchv1.CronJob{}, Owners: ownedByTheTask(),
			ManagedFields: keepOthers}}},
		Block{KindLabel: "kind-b", Children: []Child{{Object: &batchv1.CronJob{}}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	var transform func(any) (any, error)
	for _, by := range opts.ByObject {
		transform = by.Transform
	}
	cronJob := func(label string) *batchv1.CronJob {
		return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: operatorController.Name, Labels: map[string]string{label: "x"},
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

}
