// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package predicates

import (
	"context"
	"fmt"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cacheblock"
)

func TestNotLeavingTheCache_DropsOnlyTheDeleteOfARecordedChild(t *testing.T) {
	p := NotLeavingTheCache()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Labels: map[string]string{"a": "b"}}}
	if !p.Delete(event.DeleteEvent{Object: job}) {
		t.Error("the deletion of a Job the operator is not done with was dropped")
	}
	if !p.Create(event.CreateEvent{Object: job}) || !p.Update(event.UpdateEvent{ObjectOld: job, ObjectNew: job}) {
		t.Error("a create or an update was dropped")
	}
	recorded := job.DeepCopy()
	recorded.Labels[platformv1.RecordedLabel] = "true"
	if p.Delete(event.DeleteEvent{Object: recorded}) {
		t.Error("a Job leaving the cache with the recorded label wakes its owner")
	}
	sel, err := cacheblock.ChildSelector()
	if err != nil {
		t.Fatal(err)
	}
	if sel.Matches(labels.Set(recorded.Labels)) {
		t.Error("the child selector still selects the recorded Job whose leaving the predicate drops")
	}
}

func TestSpecOrMetadataChanged_DropsStatusOnlyUpdates(t *testing.T) {
	base := func() *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Generation: 1, ResourceVersion: "1",
			Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"},
			OwnerReferences: []metav1.OwnerReference{{Name: "o", UID: "u"}}, Finalizers: []string{"f"}}}
	}
	now := metav1.Now()
	cases := map[string]struct {
		change func(*batchv1.Job)
		want   bool
	}{
		"status only":        {func(j *batchv1.Job) { j.Status.Active = 1; j.ResourceVersion = "2" }, false},
		"generation":         {func(j *batchv1.Job) { j.Generation = 2 }, true},
		"label":              {func(j *batchv1.Job) { j.Labels["a"] = "x" }, true},
		"annotation removed": {func(j *batchv1.Job) { j.Annotations = nil }, true},
		"owner reference":    {func(j *batchv1.Job) { j.OwnerReferences[0].UID = "v" }, true},
		"finalizer":          {func(j *batchv1.Job) { j.Finalizers = nil }, true},
		"deletion":           {func(j *batchv1.Job) { j.DeletionTimestamp = &now }, true},
	}
	p := SpecOrMetadataChanged()
	for name, tc := range cases {
		n := base()
		tc.change(n)
		if got := p.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: n}); got != tc.want {
			t.Errorf("%s: passed = %v, want %v", name, got, tc.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: base()}) || !p.Delete(event.DeleteEvent{Object: base()}) {
		t.Errorf("creates and deletes must pass")
	}
}

func TestUrgentOnCreate_ANewObjectGoesAheadOfTheQueue(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("urgent-test")
	defer q.ShutDown()
	toParent := func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "parent-of-" + o.GetName()}}}
	}
	h := UrgentOnCreate(toParent)
	ctx := context.Background()
	h.Update(ctx, event.UpdateEvent{ObjectOld: named("a", "1"), ObjectNew: named("a", "2")}, q)
	h.Create(ctx, event.CreateEvent{Object: named("b", "1"), IsInInitialList: true}, q)
	h.Create(ctx, event.CreateEvent{Object: named("c", "1")}, q)

	order := make([]string, 0, 3)
	for range 3 {
		req, prio, _ := q.GetWithPriority()
		order = append(order, fmt.Sprintf("%s@%d", req.Name, prio))
		q.Done(req)
	}
	want := []string{"parent-of-c@100", "parent-of-a@0", "parent-of-b@-100"}
	if !slices.Equal(order, want) {
		t.Errorf("queue order = %v, want %v (new object first, initial list last)", order, want)
	}
}

// named is a Job with a name at version rv.
func named(name, rv string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), ResourceVersion: rv}}
}
