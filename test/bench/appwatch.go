// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/httproute"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// appWatch watches AppDeployments and Deployments from the benchmark's side
// and notes when it first saw each thing happen, as the Observer does for
// tasks: every AppDeployment figure is a difference of two such notes, or of
// a note and a time the operator wrote in status where no watch can see the
// moment (when a measurement was taken).
type appWatch struct {
	mu sync.Mutex
	// ready is when each AppDeployment was first seen Ready=True with its
	// generation observed, by generation.
	ready map[types.NamespacedName]map[int64]time.Time
	// promoted is when each AppDeployment was first seen with the outcome
	// Promoted for a version, by version.
	promoted map[types.NamespacedName]map[string]time.Time
	// template is when each Deployment was first seen with an image in its
	// pod template, and rolledOut when first seen rolled out with it at
	// the application's full size, replicas (every pod updated and
	// available, none of the old left): a promotion that rolls the new
	// template at a smaller size first has not rolled out until it grew.
	template, rolledOut map[types.NamespacedName]map[string]time.Time
	replicas            int32
	// stepReady is when a canary step's pods were ready, as recorded in
	// status, by application, revision and step.
	stepReady map[stepKey]time.Time
	// last is the last measurement seen of each AppDeployment.
	last map[types.NamespacedName]*measurementNote
	// measurements are every step measurement seen, in the order seen.
	measurements []*measurementNote
	// stepSeen is when a canary was first seen at a step, and stepWant
	// the most canary pods it showed at it; canaryReady is when each canary
	// Deployment was first seen with a number of pods of an image ready,
	// by "image/ready"; routes when each HTTPRoute was first seen carrying
	// a canary weight, accepted by its gateway for that generation.
	stepSeen    map[stepKey]time.Time
	stepWant    map[stepKey]int32
	canaryReady map[types.NamespacedName]map[string]time.Time
	routes      map[types.NamespacedName]map[int32]time.Time
}

// stepKey names one step of one canary of an application.
type stepKey struct {
	app      types.NamespacedName
	revision string
	step     int32
}

// measurementNote is one measurement of a canary step's criteria: when the
// operator says it took it (status, whole seconds), when it was due by the
// operator's rule, and when the watch first saw it recorded.
type measurementNote struct {
	step stepKey
	// version is the canary's version.
	version string
	// taken is the status's measuredAt; due is the previous measurement's
	// measuredAt (or the step's readyAt) plus the interval; zero when the
	// watch did not see what it follows.
	taken, due time.Time
	// seen is when the watch first saw it in status.
	seen time.Time
	// passes counts the step's Passes of the first criterion with it.
	passes int32
	// last says the step was the canary's last and the same status write
	// recorded it completed: the promotion was decided on this measurement.
	last bool
	// interval is the analysis interval.
	interval time.Duration
}

// startAppWatch starts informers on AppDeployments and Deployments and
// returns once they have synced; they stop with ctx.
func startAppWatch(ctx context.Context, cfg *rest.Config, replicas int32) (*appWatch, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:           testenv.Scheme(),
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	w := &appWatch{
		ready:     map[types.NamespacedName]map[int64]time.Time{},
		promoted:  map[types.NamespacedName]map[string]time.Time{},
		template:  map[types.NamespacedName]map[string]time.Time{},
		rolledOut: map[types.NamespacedName]map[string]time.Time{},
		replicas:  replicas,
		stepReady: map[stepKey]time.Time{},
		last:      map[types.NamespacedName]*measurementNote{},

		stepSeen:    map[stepKey]time.Time{},
		stepWant:    map[stepKey]int32{},
		canaryReady: map[types.NamespacedName]map[string]time.Time{},
		routes:      map[types.NamespacedName]map[int32]time.Time{},
	}
	handlers := []struct {
		obj client.Object
		on  func(obj any)
	}{
		{&platformv1.AppDeployment{}, w.onApp},
		{&appsv1.Deployment{}, w.onDeployment},
		{&gatewayv1.HTTPRoute{}, w.onRoute},
	}
	for _, h := range handlers {
		inf, err := c.GetInformer(ctx, h.obj)
		if err != nil {
			return nil, err
		}
		on := h.on
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    on,
			UpdateFunc: func(_, obj any) { on(obj) },
		}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.New("the benchmark's AppDeployment informers did not sync")
	}
	return w, nil
}

// firstSeen notes now under m[key][sub] unless a time is there already.
func firstSeen[K comparable](m map[types.NamespacedName]map[K]time.Time, key types.NamespacedName, sub K,
	now time.Time) {
	if m[key] == nil {
		m[key] = map[K]time.Time{}
	}
	if _, ok := m[key][sub]; !ok {
		m[key][sub] = now
	}
}

func (w *appWatch) onApp(obj any) {
	ad, ok := obj.(*platformv1.AppDeployment)
	if !ok {
		return
	}
	now := time.Now()
	key := client.ObjectKeyFromObject(ad)
	w.mu.Lock()
	defer w.mu.Unlock()
	st := &ad.Status
	if c := meta.FindStatusCondition(st.Conditions, platformv1.ConditionReady); c != nil &&
		c.Status == metav1.ConditionTrue && c.ObservedGeneration == ad.Generation && st.ObservedGeneration == ad.Generation {
		firstSeen(w.ready, key, ad.Generation, now)
	}
	if o := st.LastOutcome; o.Result == platformv1.OutcomePromoted && o.Version != "" {
		firstSeen(w.promoted, key, o.Version, now)
	}
	c := st.Canary
	if c == nil || c.Step == nil {
		return
	}
	if seen := (stepKey{app: key, revision: c.Revision, step: ptr.Deref(c.Step.Index, 0)}); c.Replicas != nil {
		if _, ok := w.stepSeen[seen]; !ok {
			w.stepSeen[seen] = now
		}
		// The status that first shows a step may still count the pods of
		// the one before: the step wants the most it shows.
		w.stepWant[seen] = max(w.stepWant[seen], *c.Replicas)
	}
	if c.Step.ReadyAt != nil {
		k := stepKey{app: key, revision: c.Revision, step: ptr.Deref(c.Step.Index, 0)}
		if _, ok := w.stepReady[k]; !ok {
			w.stepReady[k] = c.Step.ReadyAt.Time
		}
	}
	a := c.Analysis
	if a == nil || a.Step == nil || a.MeasuredAt == nil {
		return // no step measured yet (a preflight's answers count for no step)
	}
	k := stepKey{app: key, revision: c.Revision, step: *a.Step}
	prev := w.last[key]
	if prev != nil && prev.step == k && prev.taken.Equal(a.MeasuredAt.Time) {
		return // seen already
	}
	interval := time.Duration(ad.Spec.Strategy.Analysis.IntervalSeconds) * time.Second
	if interval == 0 {
		interval = time.Duration(platformv1.DefaultAnalysisIntervalSeconds) * time.Second
	}
	n := &measurementNote{step: k, version: c.Version, taken: a.MeasuredAt.Time, seen: now, interval: interval}
	if len(a.Criteria) > 0 {
		n.passes = ptr.Deref(a.Criteria[0].Passes, 0)
	}
	switch ready, ok := w.stepReady[k]; {
	case prev != nil && prev.step == k:
		n.due = prev.taken.Add(interval)
	case ok:
		n.due = ready.Add(interval)
	}
	n.last = *a.Step == c.Step.Total-1 && ptr.Deref(c.Step.Index, 0) == c.Step.Total
	w.last[key] = n
	w.measurements = append(w.measurements, n)
}

func (w *appWatch) onDeployment(obj any) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok || len(d.Spec.Template.Spec.Containers) == 0 {
		return
	}
	now := time.Now()
	key := client.ObjectKeyFromObject(d)
	image := d.Spec.Template.Spec.Containers[0].Image
	want := w.replicas
	w.mu.Lock()
	defer w.mu.Unlock()
	firstSeen(w.template, key, image, now)
	s := d.Status
	if strings.HasSuffix(d.Name, platformv1.CanarySuffix) && s.ObservedGeneration >= d.Generation {
		firstSeen(w.canaryReady, key, fmt.Sprintf("%s/%d", image, min(s.ReadyReplicas, s.UpdatedReplicas)), now)
	}
	if ptr.Deref(d.Spec.Replicas, 1) == want && s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want &&
		s.AvailableReplicas == want && s.Replicas == want {
		firstSeen(w.rolledOut, key, image, now)
	}
}

func (w *appWatch) onRoute(obj any) {
	r, ok := obj.(*gatewayv1.HTTPRoute)
	if !ok || len(r.Spec.Rules) == 0 {
		return
	}
	if accepted, _ := httproute.Accepted(r); accepted != metav1.ConditionTrue {
		return
	}
	// The canary's share of the first rule: the backendRefs to a Service
	// named *-canary over all of them, as the gateway splits requests.
	var canary, all int64
	for _, ref := range r.Spec.Rules[0].BackendRefs {
		wt := int64(ptr.Deref(ref.Weight, 1))
		all += wt
		if strings.HasSuffix(string(ref.Name), platformv1.CanarySuffix) {
			canary += wt
		}
	}
	share := int32(0)
	if all > 0 {
		share = int32(canary * 100 / all)
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	firstSeen(w.routes, client.ObjectKeyFromObject(r), share, now)
}

// routedStepStart is when step of the canary of app at image started as far
// as the route is concerned: the canary seen at the step with as many pods
// of image ready as the step wants, whichever was seen last.
func (w *appWatch) routedStepStart(app types.NamespacedName, step int32, image string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, seen := range w.stepSeen {
		if k.app != app || k.step != step {
			continue
		}
		want := w.stepWant[k]
		deploy := types.NamespacedName{Namespace: app.Namespace, Name: app.Name + platformv1.CanarySuffix}
		var ready time.Time
		for sub, t := range w.canaryReady[deploy] {
			at := strings.LastIndex(sub, "/")
			if at < 0 || sub[:at] != image {
				continue
			}
			n := sub[at+1:]
			if count, err := strconv.Atoi(n); err == nil && int32(count) >= want && (ready.IsZero() || t.Before(ready)) {
				ready = t
			}
		}
		if ready.IsZero() {
			return time.Time{}, false
		}
		if ready.After(seen) {
			return ready, true
		}
		return seen, true
	}
	return time.Time{}, false
}

// routedNotes says what the watch saw of app's steps and canary pods, for
// a step it could not place.
func (w *appWatch) routedNotes(app types.NamespacedName) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for k, t := range w.stepSeen {
		if k.app == app {
			fmt.Fprintf(&b, "step %d seen %s wanting %d pods; ", k.step, t.Format(time.StampMilli), w.stepWant[k])
		}
	}
	deploy := types.NamespacedName{Namespace: app.Namespace, Name: app.Name + platformv1.CanarySuffix}
	for sub, t := range w.canaryReady[deploy] {
		fmt.Fprintf(&b, "pods %s ready %s; ", sub, t.Format(time.StampMilli))
	}
	return b.String()
}

// routeAt is when the HTTPRoute was first seen carrying the canary weight,
// accepted.
func (w *appWatch) routeAt(key types.NamespacedName, weight int32) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.routes[key][weight]
	return t, ok
}

// promotedAt is when the AppDeployment was first seen with version promoted.
//
//nolint:unparam // each figure names the version it waits for
func (w *appWatch) promotedAt(key types.NamespacedName, version string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.promoted[key][version]
	return t, ok
}

// countPromoted counts the AppDeployments of names seen with version
// promoted.
func (w *appWatch) countPromoted(names []types.NamespacedName, version string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, key := range names {
		if _, ok := w.promoted[key][version]; ok {
			n++
		}
	}
	return n
}

// templateAt is when the Deployment was first seen with image.
func (w *appWatch) templateAt(key types.NamespacedName, image string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.template[key][image]
	return t, ok
}

// rolledOutAt is when the Deployment was first seen rolled out with image.
func (w *appWatch) rolledOutAt(key types.NamespacedName, image string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.rolledOut[key][image]
	return t, ok
}

// measurementsOf returns the step measurements seen of the canaries of
// version in namespace.
func (w *appWatch) measurementsOf(namespace, version string) []measurementNote {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []measurementNote
	for _, m := range w.measurements {
		if m.step.app.Namespace == namespace && m.version == version {
			out = append(out, *m)
		}
	}
	return out
}

// countReady counts the AppDeployments of names seen Ready at generation
// gen, and returns when the last of them became so.
func (w *appWatch) countReady(names []types.NamespacedName, gen int64) (int, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	n := 0
	for _, key := range names {
		if t, ok := w.ready[key][gen]; ok {
			n++
			if t.After(last) {
				last = t
			}
		}
	}
	return n, last
}

// countRolledOut counts the Deployments of names seen rolled out with image,
// and returns when the last of them was.
func (w *appWatch) countRolledOut(names []types.NamespacedName, image string) (int, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	n := 0
	for _, key := range names {
		if t, ok := w.rolledOut[key][image]; ok {
			n++
			if t.After(last) {
				last = t
			}
		}
	}
	return n, last
}
