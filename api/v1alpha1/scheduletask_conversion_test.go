// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1alpha1

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
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
	// The annotation, which anyone who may update the task can write,
	// carries spec fields only: status converts field by field.
	var saved map[string]json.RawMessage
	if err := json.Unmarshal([]byte(spoke.Annotations[HubDataAnnotation]), &saved); err != nil {
		return fmt.Errorf("annotation %s: %w", HubDataAnnotation, err)
	}
	if _, ok := saved["status"]; ok || len(saved) != 1 {
		return fmt.Errorf("annotation %s holds more than spec fields: %s", HubDataAnnotation, spoke.Annotations[HubDataAnnotation])
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

// operatorStatus is a status as the operator writes it, for the tests that
// check nothing else can change it.
func operatorStatus() platformv1.ScheduleTaskStatus {
	return platformv1.ScheduleTaskStatus{
		TriggerCount:          3,
		MissedRuns:            2,
		MissedRunsCheckedTime: &metav1.Time{Time: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)},
		LastResult:            platformv1.RunSucceeded,
		EffectiveSchedule:     "7 * * * *",
		ObservedGeneration:    4,
	}
}

func TestConversion_StatusIsNeverRestoredFromTheAnnotation(t *testing.T) {
	hub := &platformv1.ScheduleTask{
		Spec:   platformv1.ScheduleTaskSpec{Schedule: "@daily", Image: "busybox:1.36", TimeZone: ptr.To("Europe/Berlin")},
		Status: operatorStatus(),
	}
	var spoke ScheduleTask
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	// A tenant writes status into the annotation, in the form the annotation
	// had before the upgrade (the whole spec and status), and as a member of
	// today's.
	for name, forged := range map[string]string{
		"annotation from before the upgrade": `{"spec":{"schedule":"@daily","image":"busybox:1.36","timeZone":"Europe/Berlin"},` +
			`"status":{"missedRuns":999999,"triggerCount":123456,"missedRunsCheckedTime":"2020-01-01T00:00:00Z"}}`,
		"status member added to today's annotation": strings.TrimSuffix(spoke.Annotations[HubDataAnnotation], "}") +
			`,"status":{"missedRuns":999999,"triggerCount":123456,"missedRunsCheckedTime":"2020-01-01T00:00:00Z"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			edited := spoke.DeepCopy()
			edited.Annotations[HubDataAnnotation] = forged
			var back platformv1.ScheduleTask
			if err := edited.ConvertTo(&back); err != nil {
				t.Fatal(err)
			}
			if delta := cmp.Diff(operatorStatus(), back.Status); delta != "" {
				t.Errorf("status after a forged annotation (-operator's +got):\n%s", delta)
			}
			if got := ptr.Deref(back.Spec.TimeZone, ""); got != "Europe/Berlin" {
				t.Errorf("timeZone %q, want the saved Europe/Berlin", got)
			}
		})
	}
}

func TestConversion_AnnotationCarriesOnlyTheSpecFieldsV1alpha1Lacks(t *testing.T) {
	hub := &platformv1.ScheduleTask{
		Spec: platformv1.ScheduleTaskSpec{
			Schedule:              "@daily",
			Image:                 "busybox:1.36",
			BackoffLimit:          ptr.To[int32](1),
			Suspend:               ptr.To(true),
			ActiveDeadlineSeconds: ptr.To[int64](60),
			TimeZone:              ptr.To("UTC"),
			ConcurrencyPolicy:     platformv1.ForbidConcurrent,
			ContainerFields:       platformv1.ContainerFields{Command: []string{"sh"}, Args: []string{"-c", "true"}},
		},
		Status: operatorStatus(),
	}
	var spoke ScheduleTask
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal([]byte(spoke.Annotations[HubDataAnnotation]), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{"spec": {
		"timeZone": "UTC", "args": []any{"-c", "true"}, "concurrencyPolicy": "Forbid",
	}}
	if delta := cmp.Diff(want, got); delta != "" {
		t.Errorf("annotation (-want +got):\n%s", delta)
	}
}

func TestConversion_AnnotationIsNotHTMLEscaped(t *testing.T) {
	hub := &platformv1.ScheduleTask{Spec: platformv1.ScheduleTaskSpec{
		Schedule:        "@daily",
		Image:           "busybox:1.36",
		ContainerFields: platformv1.ContainerFields{Args: []string{"<a & b>"}},
	}}
	var spoke ScheduleTask
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	const want = `{"spec":{"args":["<a & b>"]}}`
	if got := spoke.Annotations[HubDataAnnotation]; got != want {
		t.Errorf("annotation %s, want %s", got, want)
	}
}

// bigTask is a v1 task with two arguments of 16 KiB of '<' (the most
// command, args and env may hold together) and an annotation of its own of
// the given size.
func bigTask(own int) *platformv1.ScheduleTask {
	lt := strings.Repeat("<", platformv1.MaxArgumentLength)
	return &platformv1.ScheduleTask{
		ObjectMeta: metav1.ObjectMeta{Name: "big", Annotations: map[string]string{"example.com/own": strings.Repeat("x", own)}},
		Spec: platformv1.ScheduleTaskSpec{
			Schedule:        "@daily",
			Image:           "busybox:1.36",
			TimeZone:        ptr.To("UTC"),
			ContainerFields: platformv1.ContainerFields{Args: []string{lt, lt}},
		},
		Status: operatorStatus(),
	}
}

func TestConversion_TaskThatFitsOnlyUnescapedKeepsAllItsFields(t *testing.T) {
	// 32 KiB of '<' would be 192 KiB as \u003c escapes: with 70 KB of the
	// task's own annotation, over the API server's 256 KiB.
	hub := bigTask(70000)
	var spoke ScheduleTask
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	if errs := apivalidation.ValidateAnnotations(spoke.Annotations, field.NewPath("metadata", "annotations")); len(errs) > 0 {
		t.Fatalf("the API server would refuse the converted annotations: %v", errs)
	}
	var back platformv1.ScheduleTask
	if err := spoke.ConvertTo(&back); err != nil {
		t.Fatal(err)
	}
	want := hub.DeepCopy()
	want.Spec.ConcurrencyPolicy = platformv1.AllowConcurrent
	if delta := cmp.Diff(want, &back); delta != "" {
		t.Errorf("v1 -> v1alpha1 -> v1 (-want +got):\n%s", delta)
	}
}

func TestConversion_OversizedTaskLeavesOutItsLargestFieldsInsteadOfFailing(t *testing.T) {
	// The task's own annotations leave less room than its args need.
	hub := bigTask(240000)
	var spoke ScheduleTask
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatalf("conversion failed, and with it every list of tasks in v1alpha1: %v", err)
	}
	if errs := apivalidation.ValidateAnnotations(spoke.Annotations, field.NewPath("metadata", "annotations")); len(errs) > 0 {
		t.Fatalf("the API server would refuse the converted annotations: %v", errs)
	}
	var back platformv1.ScheduleTask
	if err := spoke.ConvertTo(&back); err != nil {
		t.Fatal(err)
	}
	if back.Spec.Args != nil {
		t.Errorf("args %d bytes came back; they cannot have fit", len(strings.Join(back.Spec.Args, "")))
	}
	if got := ptr.Deref(back.Spec.TimeZone, ""); got != "UTC" {
		t.Errorf("timeZone %q, want UTC: only what does not fit is left out", got)
	}
	if got := back.Annotations[OmittedAnnotation]; got != "args" {
		t.Errorf("%s = %q, want args: the webhook refuses to store a task that lost them", OmittedAnnotation, got)
	}
	if delta := cmp.Diff(operatorStatus(), back.Status); delta != "" {
		t.Errorf("status (-want +got):\n%s", delta)
	}
}

func TestConversion_TaskWithNoRoomForTheAnnotationStillConverts(t *testing.T) {
	hub := bigTask(apivalidation.TotalAnnotationSizeLimitB - len("example.com/own") - 10)
	var spoke ScheduleTask
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatalf("conversion failed: %v", err)
	}
	if errs := apivalidation.ValidateAnnotations(spoke.Annotations, field.NewPath("metadata", "annotations")); len(errs) > 0 {
		t.Fatalf("the API server would refuse the converted annotations: %v", errs)
	}
	omitted, noRoom, err := V1alpha1Omits(hub)
	if err != nil || !noRoom {
		t.Errorf("V1alpha1Omits = %v, %v, %v; want no room", omitted, noRoom, err)
	}
}

func TestConversion_V1alpha1OmitsNothingOfATaskThatFits(t *testing.T) {
	omitted, noRoom, err := V1alpha1Omits(bigTask(70000))
	if err != nil || noRoom || len(omitted) > 0 {
		t.Errorf("V1alpha1Omits = %v, %v, %v; want nothing omitted", omitted, noRoom, err)
	}
	omitted, noRoom, err = V1alpha1Omits(bigTask(240000))
	if err != nil || noRoom || !slices.Equal(omitted, []string{"args"}) {
		t.Errorf("V1alpha1Omits = %v, %v, %v; want [args]", omitted, noRoom, err)
	}
}
