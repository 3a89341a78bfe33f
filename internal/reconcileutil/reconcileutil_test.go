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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	platformv1 "github.com/example/platform-operator/api/v1"
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
	if err != nil || res != ApplyCreated {
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
	if res, err := a.Apply(t.Context(), owner, &corev1.ConfigMap{}, desired); err != nil || res != ApplyUpdated {
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
	if res, err := a.Apply(t.Context(), owner, &corev1.ConfigMap{}, desired("new")); err != nil || res != ApplyCreated {
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
	if res, err := a.Apply(t.Context(), owner, &corev1.ConfigMap{}, desired("new")); err != nil || res == ApplyCreated {
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
	got, err := ApplyConfigurationOf[corev1ac.EnvVarApplyConfiguration](&env)
	if err != nil {
		t.Fatal(err)
	}
	want := corev1ac.EnvVar().WithName("POD").
		WithValueFrom(corev1ac.EnvVarSource().WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name")))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestExpectations_RemembersPerKeyUntilTheTTL(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := Expectations[string, int]{TTL: time.Minute, Clock: clock}
	e.Remember("a", 1)
	if !e.Has("a", 1) || e.Has("a", 2) || e.Has("b", 1) {
		t.Fatalf("Has answers for values not remembered, or not for one that was")
	}
	clock.SetTime(clock.Now().Add(2 * time.Minute))
	if e.Has("a", 1) {
		t.Errorf("a value is remembered past its TTL")
	}
	e.Remember("b", 1) // expires a's old value
	if e.Len() != 1 {
		t.Errorf("%d keys remembered, want 1 once expired values are dropped", e.Len())
	}
	e.Forget("b")
	if e.Has("b", 1) || e.Len() != 0 {
		t.Errorf("Forget left something behind")
	}
}

func TestExpectations_HoldsAtMostOneAndAHalfTTLsOfValues(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := Expectations[int, int]{TTL: time.Minute, Clock: clock}
	// One value a second for ten minutes: a store that never expired would
	// hold 600 keys; one scanned on every Remember, 60.
	for i := range 600 {
		e.Remember(i, i)
		clock.SetTime(clock.Now().Add(time.Second))
		if n := e.Len(); n > 91 {
			t.Fatalf("%d keys after %d s, want at most 90 (1.5 TTL)", n, i+1)
		}
		if i >= 60 && e.Has(i-61, i-61) {
			t.Fatalf("value %d reported past its TTL", i-61)
		}
	}
}

// at is an object at version rv.
func at(uid, rv string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), ResourceVersion: rv}}
}

// write records a successful update of the object "uid" from version before.
func write(w *OwnWrites, before string) { w.Writing(at("uid", before))(nil) }

func TestOwnWrites_AVersionReplacedByOwnWriteIsStaleUntilTheCacheCatchesUp(t *testing.T) {
	var w OwnWrites
	write(&w, "10")
	write(&w, "11")
	if !w.Stale("uid", "10") || !w.Stale("uid", "11") {
		t.Fatalf("versions our writes replaced are not stale")
	}
	if w.Stale("uid", "12") {
		t.Fatalf("a version we did not replace is stale")
	}
	if w.Stale("uid", "10") {
		t.Errorf("after the cache showed a newer version, the old record should be gone")
	}
	if w.Stale("other", "10") {
		t.Errorf("another object's version is stale")
	}
	w.Writing(at("uid", "20"))(errors.New("conflict"))
	if w.Stale("uid", "20") {
		t.Errorf("a failed write made the version it did not replace stale")
	}
}

func TestOwnWrites_NotOwnEchoDropsTheEchoOfOwnWritesOnly(t *testing.T) {
	var w OwnWrites
	p := w.NotOwnEcho()
	update := func(old, rv string) bool {
		return p.Update(event.UpdateEvent{ObjectOld: at("uid", old), ObjectNew: at("uid", rv)})
	}
	// The echo may arrive before the write's answer.
	done := w.Writing(at("uid", "10"))
	if update("10", "11") {
		t.Errorf("the echo of our own write, arriving before its answer, passed")
	}
	done(nil)
	if !update("11", "12") {
		t.Errorf("someone else's write was dropped")
	}
	if !update("10", "11") {
		t.Errorf("an echo dropped once is dropped again (a resync repeats a version)")
	}

	// A failed write has no echo: the next version is someone else's.
	w.Writing(at("uid", "12"))(errors.New("conflict"))
	if !update("12", "13") {
		t.Errorf("after our write failed, someone else's write was dropped")
	}

	// A pass skipped as stale waits for the echo: it must pass.
	write(&w, "13")
	if !w.Stale("uid", "13") {
		t.Fatalf("the replaced version is not stale")
	}
	if !update("13", "14") {
		t.Errorf("the echo a skipped pass waits for was dropped")
	}
	write(&w, "14")
	if update("14", "15") {
		t.Errorf("the wait was not used up by the echo it waited for")
	}

	write(&w, "15")
	w.Forget("uid")
	if !update("15", "16") {
		t.Errorf("Forget left an expected echo behind")
	}
	if !p.Create(event.CreateEvent{Object: at("uid", "1")}) {
		t.Errorf("a create was dropped")
	}
}

func TestOwnWrites_WaitedForIsUsedByTheNextEventOnly(t *testing.T) {
	var w OwnWrites
	p := w.NotOwnEcho()
	write(&w, "10")
	write(&w, "11")
	if !w.Stale("uid", "10") {
		t.Fatalf("the replaced version is not stale")
	}
	// The echo of the first write arrives: the skipped pass waited for it.
	if !p.Update(event.UpdateEvent{ObjectOld: at("uid", "10"), ObjectNew: at("uid", "11")}) {
		t.Errorf("the event the skipped pass waits for was dropped")
	}
	if p.Update(event.UpdateEvent{ObjectOld: at("uid", "11"), ObjectNew: at("uid", "12")}) {
		t.Errorf("the second echo passed although nothing waits for it")
	}
}

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
	sel, err := ChildSelector()
	if err != nil {
		t.Fatal(err)
	}
	if sel.Matches(labels.Set(recorded.Labels)) {
		t.Error("the child selector still selects the recorded Job whose leaving the predicate drops")
	}
}

func TestOwnWrites_NothingIsHeldOnceTheEchoArrived(t *testing.T) {
	var w OwnWrites
	p := w.NotOwnEcho()
	for i := range 100 {
		uid, before := fmt.Sprintf("uid-%d", i), fmt.Sprint(i)
		w.Writing(at(uid, before))(nil)
		if p.Update(event.UpdateEvent{ObjectOld: at(uid, before), ObjectNew: at(uid, before+"-next")}) {
			t.Fatalf("the echo of write %d passed", i)
		}
		if w.Stale(uid, before) {
			t.Fatalf("the version write %d replaced is stale after its echo: the cache holds the new one", i)
		}
	}
	if n, m := w.replaced.Len(), w.echoes.Len(); n != 0 || m != 0 {
		t.Errorf("after every echo arrived, %d replaced versions and %d echoes are held, want none", n, m)
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
	j := at(name, rv)
	j.Name = name
	return j
}

func TestCacheOptions_EachKindTransformsOnlyItsOwnChildren(t *testing.T) {
	stripSpec := func(obj any) (any, error) {
		obj.(*batchv1.Job).Spec = batchv1.JobSpec{}
		return obj, nil
	}
	opts, err := CacheOptions(
		CacheBlock{KindLabel: "kind-a", Children: mapOf(&batchv1.Job{}, stripSpec)},
		CacheBlock{KindLabel: "kind-b", Children: mapOf(&batchv1.Job{}, nil)},
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
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{label: "x"},
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

	if _, err := CacheOptions(CacheBlock{KindLabel: "k", Children: mapOf(&batchv1.Job{}, nil)},
		CacheBlock{KindLabel: "k", Children: mapOf(&batchv1.Job{}, nil)}); err == nil {
		t.Errorf("two blocks for the same type and label were accepted")
	}
}

// operatorController is a controller reference to one of the operator's
// kinds, which keeps a child whole in the cache.
var operatorController = metav1.OwnerReference{APIVersion: platformv1.GroupVersion.String(), Kind: "ScheduleTask",
	Name: "owner", UID: "owner-uid", Controller: ptr.To(true)}

// mapOf is a Children map of one entry.
func mapOf(obj client.Object, t toolscache.TransformFunc) map[client.Object]toolscache.TransformFunc {
	return map[client.Object]toolscache.TransformFunc{obj: t}
}

// informerGetter records the informers asked for.
type informerGetter struct{ asked []string }

func (g *informerGetter) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	g.asked = append(g.asked, fmt.Sprintf("%T", obj))
	return nil, nil
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
