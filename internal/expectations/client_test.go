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
package expectations

import (
	"context"
	"errors"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestTrackWrites_RecordsEveryWriteOfTheKindAndNothingElse writes through
// the tracking client the ways a reconciler does and asks OwnWrites what it
// knows: a pure unit of the wrapper (the fake client stores what it is
// given; no API server behaviour is under test).
// failingName names the object whose write the test makes fail.
const failingName = "fails"

func TestTrackWrites_RecordsEveryWriteOfTheKindAndNothingElse(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	job := func(name string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other", UID: "uid-other"}}
	base := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&batchv1.Job{}).
		WithObjects(job("update"), job("patch"), job("status"), job(failingName), cm).Build()
	failing := interceptor.NewClient(base, interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if obj.GetName() == failingName {
				return errors.New("conflict")
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	var w OwnWrites
	c := TrackWrites(failing, &w, &batchv1.Job{})

	read := func(obj client.Object) string {
		t.Helper()
		if err := base.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		return obj.GetResourceVersion()
	}
	written := map[string]string{}
	for _, name := range []string{"update", "patch", "status", failingName} {
		j := job(name)
		written[name] = read(j)
		var err error
		switch name {
		case "update", failingName:
			j.Labels = map[string]string{"x": "y"}
			err = c.Update(ctx, j)
		case "patch":
			patch := client.MergeFromWithOptions(j.DeepCopy(), client.MergeFromWithOptimisticLock{})
			j.Labels = map[string]string{"x": "y"}
			err = c.Patch(ctx, j, patch)
		case "status":
			j.Status.Active = 1
			err = c.Status().Update(ctx, j)
		}
		if (err != nil) != (name == failingName) {
			t.Fatalf("%s: err = %v", name, err)
		}
	}
	otherRV := read(cm)
	cm.Data = map[string]string{"a": "b"}
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"update", "patch", "status"} {
		if !w.Stale("uid-"+name, written[name]) {
			t.Errorf("the version %s of Job %s replaced by its %s is not known as stale", written[name], name, name)
		}
	}
	if w.Stale("uid-fails", written[failingName]) {
		t.Errorf("a failed update is remembered")
	}
	if w.Stale("uid-other", otherRV) {
		t.Errorf("an update of another kind is remembered")
	}
}
