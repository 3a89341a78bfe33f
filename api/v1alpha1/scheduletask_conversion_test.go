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

package v1alpha1

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/randfill"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// rounds is how many random objects each direction converts.
const rounds = 10000

// filler makes random objects whose values survive JSON, from a seed.
func filler(seed int64) *randfill.Filler {
	return jsonSafe(randfill.NewWithSeed(seed))
}

// jsonSafe makes f fill objects whose values survive JSON, as every stored
// object does: times in whole seconds, quantities in canonical form.
func jsonSafe(f *randfill.Filler) *randfill.Filler {
	return f.NilChance(0.2).NumElements(0, 3).Funcs(
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.NewTime(time.Unix(c.Int63n(4e9), 0).UTC())
		},
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1e6), resource.DecimalSI)
		},
		func(tm *metav1.TypeMeta, _ randfill.Continue) { *tm = metav1.TypeMeta{} },
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			c.FillNoCustom(m)
			// Managed fields hold raw JSON and times of their own; the
			// conversion copies them as they are, so they add nothing here.
			m.ManagedFields = nil
			m.CreationTimestamp = metav1.NewTime(time.Unix(c.Int63n(4e9), 0).UTC())
			m.DeletionTimestamp = nil
		},
	)
}

func TestConversion_HubSpokeHubIsLossless(t *testing.T) {
	f := filler(1)
	for i := range rounds {
		var hub platformv1.ScheduleTask
		f.Fill(&hub)
		if err := hubSpokeHub(&hub); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}

func TestConversion_SpokeHubSpokeIsLossless(t *testing.T) {
	f := filler(2)
	for i := range rounds {
		var spoke ScheduleTask
		f.Fill(&spoke)
		if err := spokeHubSpoke(&spoke); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}

// hubSpokeHub converts a v1 task to v1alpha1 and back, and says how the
// result differs from the task, beyond the default policy conversion gives.
func hubSpokeHub(hub *platformv1.ScheduleTask) error {
	in := hub.DeepCopy()
	var spoke ScheduleTask
	if err := spoke.ConvertFrom(in); err != nil {
		return fmt.Errorf("ConvertFrom: %w", err)
	}
	var back platformv1.ScheduleTask
	if err := spoke.ConvertTo(&back); err != nil {
		return fmt.Errorf("ConvertTo: %w", err)
	}
	want := hub.DeepCopy()
	if want.Spec.ConcurrencyPolicy == "" {
		// Conversion gives an unset policy v1's default.
		want.Spec.ConcurrencyPolicy = platformv1.AllowConcurrent
	}
	if !equality.Semantic.DeepEqual(want, &back) {
		return fmt.Errorf("v1 -> v1alpha1 -> v1 changed the object:\n%s", diff.Diff(want, &back))
	}
	return nil
}

// spokeHubSpoke converts a v1alpha1 task to v1 and back, and says how the
// result differs from the task, beyond the annotation that saves v1's fields.
// The task's own copy of that annotation, if any, is removed first.
func spokeHubSpoke(spoke *ScheduleTask) error {
	delete(spoke.Annotations, HubDataAnnotation)
	in := spoke.DeepCopy()

	var hub platformv1.ScheduleTask
	if err := in.ConvertTo(&hub); err != nil {
		return fmt.Errorf("ConvertTo: %w", err)
	}
	if hub.Spec.ConcurrencyPolicy != platformv1.AllowConcurrent {
		return fmt.Errorf("converted task has concurrencyPolicy %q, want the default Allow", hub.Spec.ConcurrencyPolicy)
	}
	var back ScheduleTask
	if err := back.ConvertFrom(&hub); err != nil {
		return fmt.Errorf("ConvertFrom: %w", err)
	}
	// The saved v1 fields are the one addition a round trip makes.
	if _, ok := back.Annotations[HubDataAnnotation]; !ok {
		return fmt.Errorf("no %s annotation", HubDataAnnotation)
	}
	delete(back.Annotations, HubDataAnnotation)
	if !equality.Semantic.DeepEqual(spoke, &back) {
		return fmt.Errorf("v1alpha1 -> v1 -> v1alpha1 changed the object:\n%s", diff.Diff(spoke, &back))
	}
	return nil
}

func TestConversion_V1alpha1EditsWinOverSavedFields(t *testing.T) {
	hub := &platformv1.ScheduleTask{Spec: platformv1.ScheduleTaskSpec{
		Schedule: "@daily", Image: "old:1", ConcurrencyPolicy: platformv1.ForbidConcurrent,
	}}
	var spoke ScheduleTask
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	spoke.Spec.Image = "new:2"
	var back platformv1.ScheduleTask
	if err := spoke.ConvertTo(&back); err != nil {
		t.Fatal(err)
	}
	// The edit, and the policy v1alpha1 cannot hold, saved; nothing else.
	want := platformv1.ScheduleTask{Spec: platformv1.ScheduleTaskSpec{
		Schedule: "@daily", Image: "new:2", ConcurrencyPolicy: platformv1.ForbidConcurrent,
	}}
	if delta := cmp.Diff(want, back, cmpopts.EquateEmpty()); delta != "" {
		t.Errorf("v1 task after an edit in v1alpha1 (-want +got):\n%s", delta)
	}
}
