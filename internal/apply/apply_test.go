// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package apply

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// parse decodes a JSON literal as encoding/json does for both sides of Contains.
func parse(t *testing.T, s string) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestContains(t *testing.T) {
	tests := []struct {
		name      string
		got, want string
		contains  bool
	}{
		{"equal", `{"a":1,"b":"x"}`, `{"a":1,"b":"x"}`, true},
		{"defaults and other managers' fields are ignored", `{"a":1,"b":"x","c":{"d":true}}`, `{"a":1}`, true},
		{"a changed value is seen", `{"a":2}`, `{"a":1}`, false},
		{"a missing value is seen", `{"b":1}`, `{"a":1}`, false},
		{"nested maps", `{"s":{"t":{"u":1,"v":2}}}`, `{"s":{"t":{"u":1}}}`, true},
		{"nested change", `{"s":{"t":{"u":3,"v":2}}}`, `{"s":{"t":{"u":1}}}`, false},
		{"list items compared in order, defaults inside ignored", `{"l":[{"n":"a","pull":"IfNotPresent"},{"n":"b"}]}`, `{"l":[{"n":"a"},{"n":"b"}]}`, true},
		{"an added list item is seen", `{"l":[{"n":"a"},{"n":"sidecar"}]}`, `{"l":[{"n":"a"}]}`, false},
		{"a reordered list is seen", `{"l":["b","a"]}`, `{"l":["a","b"]}`, false},
		{"false is a value", `{"suspend":true}`, `{"suspend":false}`, false},
		{"empty want map holds on a missing one", `{}`, `{"m":{}}`, true},
		{"type change is seen", `{"a":"1"}`, `{"a":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Contains(parse(t, tt.got), parse(t, tt.want)); got != tt.contains {
				t.Errorf("Contains(%s, %s) = %v, want %v", tt.got, tt.want, got, tt.contains)
			}
		})
	}
}

// withHash is the object an apply of desired sends, and its hash.
func withHash(desired runtime.ApplyConfiguration) (map[string]any, string, error) {
	cfg, err := encode(desired)
	if err != nil {
		return nil, "", err
	}
	want, err := cfg.object()
	return want, cfg.hash, err
}

func TestMetadataShows_SeesEachLabelAnnotationAndOwnerTheConfigurationSets(t *testing.T) {
	cfg, err := encode(corev1ac.ConfigMap("c", "ns").
		WithLabels(map[string]string{"app": "a"}).
		WithAnnotations(map[string]string{"note": "n"}).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("Owner").
			WithName("o").WithUID("u1").WithController(true)))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.head.Kind != "ConfigMap" || cfg.head.Metadata.Name != "c" || cfg.head.Metadata.Namespace != "ns" {
		t.Fatalf("head = %+v", cfg.head)
	}
	if got := cfg.controller(); got != "Owner o" {
		t.Errorf("controller() = %q, want %q", got, "Owner o")
	}
	live := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns",
			Labels:      map[string]string{"app": "a", "extra": "kept"},
			Annotations: map[string]string{"note": "n", AppliedHashAnnotation: cfg.hash},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Owner", Name: "o", UID: "u1",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false)}},
		}}
	}
	tests := []struct {
		name  string
		edit  func(*corev1.ConfigMap)
		shows bool
	}{
		{"as applied, with another manager's label and a defaulted field", func(*corev1.ConfigMap) {}, true},
		{"a label changed", func(c *corev1.ConfigMap) { c.Labels["app"] = "b" }, false},
		{"a label removed", func(c *corev1.ConfigMap) { delete(c.Labels, "app") }, false},
		{"an annotation removed", func(c *corev1.ConfigMap) { delete(c.Annotations, "note") }, false},
		{"the owner replaced", func(c *corev1.ConfigMap) { c.OwnerReferences[0].UID = "u2" }, false},
		{"an owner added", func(c *corev1.ConfigMap) {
			c.OwnerReferences = append(c.OwnerReferences, metav1.OwnerReference{Kind: "Other", Name: "x"})
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := live()
			tt.edit(obj)
			if got, err := metadataShows(obj, &cfg.head.Metadata); err != nil || got != tt.shows {
				t.Errorf("metadataShows() = %v, %v; want %v", got, err, tt.shows)
			}
		})
	}
}

func TestApplier_RemembersAVerifiedSpecPerChildGenerationAndHash(t *testing.T) {
	var a Applier
	obj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "u1", Generation: 3}}
	if a.specVerified(obj, "h1") {
		t.Fatal("verified before anything was remembered")
	}
	a.remember(obj, "h1")
	if !a.specVerified(obj, "h1") {
		t.Error("not verified at the remembered generation and hash")
	}
	if a.specVerified(obj, "h2") {
		t.Error("verified for another configuration")
	}
	edited := obj.DeepCopy()
	edited.Generation = 4
	if a.specVerified(edited, "h1") {
		t.Error("verified after the spec changed (a new generation)")
	}
	recreated := obj.DeepCopy()
	recreated.UID = "u2"
	if a.specVerified(recreated, "h1") {
		t.Error("verified for a new object of the same name")
	}
	a.Forget(client.ObjectKeyFromObject(obj))
	if a.specVerified(obj, "h1") {
		t.Error("verified after Forget")
	}
	noGeneration := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "u3"}}
	a.remember(noGeneration, "h1")
	if a.specVerified(noGeneration, "h1") {
		t.Error("verified an object without a generation, whose spec can change unseen")
	}
}

func TestApplier_NotOwnCreateDropsOnlyTheCreateEventOfWhatItCreated(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "ns", UID: "owner-uid"}}
	a := Applier{Client: fake.NewClientBuilder().Build(), FieldManager: "test"}
	p := a.NotOwnCreate()
	created := func(name string) bool {
		return p.Create(event.CreateEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}})
	}
	desired := corev1ac.ConfigMap("child", "ns").WithData(map[string]string{"k": "v"}).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").
			WithName(owner.Name).WithUID(owner.UID).WithController(true))
	res, err := a.Apply(t.Context(), owner, &corev1.ConfigMap{}, desired)
	if err != nil || res != Created {
		t.Fatalf("Apply() = %v, %v; want Created", res, err)
	}
	if !created("other") {
		t.Error("the create event of a child the applier did not create was dropped")
	}
	if created("child") {
		t.Error("the create event of the child the applier created passed")
	}
	if !created("child") {
		t.Error("a second create event of that name (the child made again by someone) was dropped")
	}
	desired.WithData(map[string]string{"k": "changed"})
	if res, err := a.Apply(t.Context(), owner, &corev1.ConfigMap{}, desired); err != nil || res != Updated {
		t.Fatalf("Apply() = %v, %v; want Updated", res, err)
	}
	if !p.Update(event.UpdateEvent{ObjectOld: &corev1.ConfigMap{}, ObjectNew: &corev1.ConfigMap{}}) {
		t.Error("an update event was dropped")
	}
}

// countingReader counts the reads that go past the cache.
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// hidingClient is a cache that does not show the objects named in hidden.
type hidingClient struct {
	client.Client
	hidden map[string]bool
}

func (h *hidingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if h.hidden[key.Name] {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	return h.Client.Get(ctx, key, obj, opts...)
}

func TestApplier_OthersSparesTheReadPastTheCacheOfANewChildOnly(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "ns", UID: "owner-uid"}}
	// Another tool's ConfigMap: the API server has it, the manager's cache
	// (which selects the operator's children) does not, the cache of
	// others does.
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: "ns"}}
	server := fake.NewClientBuilder().WithObjects(foreign).Build()
	others := fake.NewClientBuilder().WithObjects(foreign.DeepCopy()).Build()
	past := &countingReader{Reader: server}
	cached := &hidingClient{Client: server, hidden: map[string]bool{"taken": true}}
	a := Applier{Client: cached, APIReader: past, Others: others, FieldManager: "test"}
	desired := func(name string) *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap(name, "ns").WithData(map[string]string{"k": "v"}).
			WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").
				WithName(owner.Name).WithUID(owner.UID).WithController(true))
	}
	if res, err := a.Apply(t.Context(), owner, &corev1.ConfigMap{}, desired("new")); err != nil || res != Created {
		t.Fatalf("Apply(new) = %v, %v; want Created", res, err)
	}
	if past.gets != 0 {
		t.Errorf("a child neither cache shows was read past the cache %d times, want 0", past.gets)
	}
	_, err := a.Apply(t.Context(), owner, &corev1.ConfigMap{}, desired("taken"))
	var nc *NotControlledError
	if !errors.As(err, &nc) {
		t.Fatalf("Apply(taken) = %v; want a NotControlledError", err)
	}
	if past.gets != 1 {
		t.Errorf("a name the cache of others shows was read past the cache %d times, want 1", past.gets)
	}
	// Created by this applier, its create event not seen yet: the manager's
	// cache is behind, so the child is read past it, not created again.
	past.gets = 0
	cached.hidden["new"] = true
	a.creatingChildren().Remember(types.NamespacedName{Namespace: "ns", Name: "new"}, struct{}{})
	if res, err := a.Apply(t.Context(), owner, &corev1.ConfigMap{}, desired("new")); err != nil || res == Created {
		t.Fatalf("Apply(new) again = %v, %v; want it found, not created", res, err)
	}
	if past.gets != 1 {
		t.Errorf("a child being created was read past the cache %d times, want 1", past.gets)
	}
}

func TestWithHash_SameConfigurationSameHashAnyChangeAnother(t *testing.T) {
	cfg := func(image string) *corev1ac.PodApplyConfiguration {
		return corev1ac.Pod("p", "ns").WithLabels(map[string]string{"a": "b"}).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("c").WithImage(image)))
	}
	want1, h1, err := withHash(cfg("one"))
	if err != nil {
		t.Fatal(err)
	}
	_, h1again, _ := withHash(cfg("one"))
	_, h2, _ := withHash(cfg("two"))
	if h1 != h1again {
		t.Errorf("hash of the same configuration changed: %s, %s", h1, h1again)
	}
	if h1 == h2 {
		t.Errorf("hash did not change with the image")
	}
	meta := want1["metadata"].(map[string]any)
	if diff := cmp.Diff(map[string]any{AppliedHashAnnotation: h1}, meta["annotations"]); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"a": "b"}, meta["labels"]); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestShows_ToleratesDefaultsAndSeesHandEdits(t *testing.T) {
	desired := corev1ac.Pod("p", "ns").
		WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("c").WithImage("img").
			WithResources(corev1ac.ResourceRequirements().WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m")}))))
	want, _, err := withHash(desired)
	if err != nil {
		t.Fatal(err)
	}
	live := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: map[string]string{AppliedHashAnnotation: want["metadata"].(map[string]any)["annotations"].(map[string]any)[AppliedHashAnnotation].(string)}, ResourceVersion: "7"},
		Spec: corev1.PodSpec{
			DNSPolicy: corev1.DNSClusterFirst,
			Containers: []corev1.Container{{Name: "c", Image: "img", ImagePullPolicy: corev1.PullIfNotPresent,
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
		},
	}
	if ok, err := shows(live, want); err != nil || !ok {
		t.Errorf("shows() = %v, %v on an object with only defaults added; want true", ok, err)
	}
	live.Spec.Containers[0].Image = "evil"
	if ok, _ := shows(live, want); ok {
		t.Errorf("shows() = true after a hand edit of the image")
	}
}

func TestWithout_SkipsUncheckedFieldsAndLeavesTheConfigurationWhole(t *testing.T) {
	want := map[string]any{
		"kind": "CronJob",
		"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
			"spec":     map[string]any{"backoffLimit": float64(2), "template": map[string]any{"spec": "big"}},
		}},
	}
	before := runtime.DeepCopyJSON(want)
	got := without(want, [][]string{{"spec", "jobTemplate", "spec", "template"}, {"status", "absent"}})
	wantGot := map[string]any{
		"kind": "CronJob",
		"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
			"spec":     map[string]any{"backoffLimit": float64(2)},
		}},
	}
	if d := cmp.Diff(wantGot, got); d != "" {
		t.Errorf("without (-want +got):\n%s", d)
	}
	if d := cmp.Diff(before, want); d != "" {
		t.Errorf("without changed the configuration it was given (-before +after):\n%s", d)
	}
	// A hand edit outside the unchecked path is still seen.
	live := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "0 0 * * *"}}
	if ok, _ := shows(live, got); ok {
		t.Error("shows() = true for a CronJob whose schedule differs")
	}
	live.Spec.Schedule = "* * * * *"
	live.Spec.JobTemplate.Labels = map[string]string{"a": "b"}
	live.Spec.JobTemplate.Spec.BackoffLimit = ptr.To[int32](2)
	if ok, err := shows(live, got); err != nil || !ok {
		t.Errorf("shows() = %v, %v for a CronJob that holds all but the unchecked template; want true", ok, err)
	}
}

func TestApplyConfigurationOf_KeepsOnlyWhatTheValueSets(t *testing.T) {
	env := corev1.EnvVar{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}
	got, err := ConfigurationOf[corev1ac.EnvVarApplyConfiguration](&env)
	if err != nil {
		t.Fatal(err)
	}
	want := corev1ac.EnvVar().WithName("POD").
		WithValueFrom(corev1ac.EnvVarSource().WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name")))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStamp_TakesTheConfigurationsHashOnlyWhereTheUpdateIsTheOnlyDifference(t *testing.T) {
	held := corev1ac.ConfigMap("c", "ns").WithData(map[string]string{"k": "v", "held": "true"})
	unheld := corev1ac.ConfigMap("c", "ns").WithData(map[string]string{"k": "v", "held": "false"})
	heldHash, err := Hash(held)
	if err != nil {
		t.Fatal(err)
	}
	unheldHash, err := Hash(unheld)
	if err != nil {
		t.Fatal(err)
	}
	if heldHash == unheldHash {
		t.Fatal("two configurations share a hash")
	}
	for _, tc := range []struct {
		name, live string
		stamped    bool
	}{
		{"applied unheld: the update's own change", unheldHash, true},
		{"applied held already", heldHash, true},
		{"applied with another configuration: the owner changed", "0123456789abcdef", false},
		{"never applied", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns",
				Annotations: map[string]string{"other": "kept"}}}
			if tc.live != "" {
				obj.Annotations[AppliedHashAnnotation] = tc.live
			}
			ok, err := Stamp(obj, held, unheldHash)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.live
			if tc.stamped {
				want = heldHash
			}
			if ok != tc.stamped || obj.Annotations[AppliedHashAnnotation] != want || obj.Annotations["other"] != "kept" {
				t.Errorf("stamped %v, annotations %v; want stamped %v with hash %q", ok, obj.Annotations, tc.stamped, want)
			}
		})
	}
}
