// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package cacheblock

import (
	"context"
	"fmt"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

func TestCacheOptions_EachKindTransformsOnlyItsOwnChildren(t *testing.T) {
	stripSpec := func(obj any) (any, error) {
		obj.(*batchv1.Job).Spec = batchv1.JobSpec{}
		return obj, nil
	}
	opts, err := Options(
		Block{KindLabel: "kind-a", Children: []Child{{Object: &batchv1.Job{}, Transform: stripSpec, Owners: ownedByTheTask()}}},
		Block{KindLabel: "kind-b", Children: []Child{{Object: &batchv1.Job{}}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.ByObject) != 1 {
		t.Fatalf("%d cache entries, want one for Jobs", len(opts.ByObject))
	}
	if !opts.ReaderFailOnMissingInformer {
		t.Error("a read of a kind without an informer would start one instead of failing")
	}
	var transform func(any) (any, error)
	for obj, by := range opts.ByObject {
		if _, ok := obj.(*batchv1.Job); !ok {
			t.Fatalf("entry for %T", obj)
		}
		managed := labels.Set{platformv1.ManagedByLabel: platformv1.ManagedByValue}
		recorded := labels.Set{platformv1.ManagedByLabel: platformv1.ManagedByValue, platformv1.RecordedLabel: "true"}
		if !by.Label.Matches(managed) || by.Label.Matches(recorded) || by.Label.Matches(labels.Set{}) {
			t.Errorf("selector %q, want the children with the managed-by label and without the recorded one", by.Label)
		}
		transform = by.Transform
	}
	job := func(label string) *batchv1.Job {
		return &batchv1.Job{
			// Controlled by one of the operator's kinds: kept whole, so
			// transformed by its kind's block.
			ObjectMeta: metav1.ObjectMeta{Name: operatorController.Name, Labels: map[string]string{label: "x"},
				OwnerReferences: []metav1.OwnerReference{operatorController},
				ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "m"}}},
			Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1)},
		}
	}
	a, _ := transform(job("kind-a"))
	b, _ := transform(job("kind-b"))
	if a.(*batchv1.Job).Spec.Parallelism != nil {
		t.Errorf("kind-a's transform did not run on its Job")
	}
	if b.(*batchv1.Job).Spec.Parallelism == nil {
		t.Errorf("kind-a's transform ran on kind-b's Job")
	}
	if a.(*batchv1.Job).ManagedFields != nil || b.(*batchv1.Job).ManagedFields != nil {
		t.Errorf("managedFields kept")
	}

	jobs := []Child{{Object: &batchv1.Job{}}}
	if _, err := Options(Block{KindLabel: "k", Children: jobs}, Block{KindLabel: "k", Children: jobs}); err == nil {
		t.Errorf("two blocks for the same type and label were accepted")
	}
	if _, err := Options(Block{KindLabel: "k", Children: append(jobs, jobs...)}); err == nil {
		t.Errorf("a block listing one type twice was accepted")
	}
	if _, err := Options(Block{KindLabel: "k", Children: []Child{{Object: &batchv1.Job{},
		Owners: []Owner{{GroupKind: schema.GroupKind{Group: "batch", Kind: "CronJob"}}}}}}); err == nil {
		t.Errorf("an owner without a name rule was accepted")
	}
}

func TestWarmInformers_AsksForEveryKind(t *testing.T) {
	g := &informerGetter{}
	if err := WarmInformers(g, &batchv1.Job{}, &batchv1.CronJob{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"*v1.Job", "*v1.CronJob"}; !slices.Equal(g.asked, want) {
		t.Errorf("asked for %v, want %v", g.asked, want)
	}
}

// operatorController is a controller reference to one of the operator's
// kinds, which keeps a child of its name whole in the cache (see
// ownedByTheTask).
var operatorController = metav1.OwnerReference{APIVersion: platformv1.GroupVersion.String(), Kind: "ScheduleTask",
	Name: "owner", UID: "owner-uid", Controller: ptr.To(true)}

// ownedByTheTask trusts operatorController's kind as the owner of objs'
// types, for a child of its own name.
func ownedByTheTask() []Owner {
	return []Owner{{GroupKind: schema.GroupKind{Group: platformv1.GroupVersion.Group, Kind: "ScheduleTask"},
		Names: SameName()}}
}

// informerGetter records the informers asked for.
type informerGetter struct{ asked []string }

func (g *informerGetter) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	g.asked = append(g.asked, fmt.Sprintf("%T", obj))
	return nil, nil
}
