// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/httproute"
)

// weightedApp is the canary of canaryApp moved by weight on the HTTPRoute
// front: 5 %, 25 % and 50 %, each for a second.
func weightedApp() *platformv1.AppDeployment {
	ad := canaryApp()
	ad.Spec.Port = 8080
	ad.Spec.Strategy.CanaryPercent = 0
	for _, w := range []int32{5, 25, 50} {
		ad.Spec.Strategy.Steps = append(ad.Spec.Strategy.Steps, platformv1.CanaryStep{Weight: w, PauseSeconds: ptr.To[int32](1)})
	}
	ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute = "front"
	return ad
}

// frontRoute is the route's owner's HTTPRoute: one rule to the stable
// Service, one to another application.
func frontRoute(ad *platformv1.AppDeployment) *gatewayv1.HTTPRoute {
	ref := func(name string) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(name), Port: ptr.To[gatewayv1.PortNumber](8080)}}}
	}
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ad.Namespace, Name: "front", Generation: 1},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Rules: []gatewayv1.HTTPRouteRule{
				{Name: ptr.To[gatewayv1.SectionName]("shop"), BackendRefs: []gatewayv1.HTTPBackendRef{ref(ad.Name)}},
				{Name: ptr.To[gatewayv1.SectionName]("search"), BackendRefs: []gatewayv1.HTTPBackendRef{ref("search")}},
			},
		},
	}
}

// routeObservation is what observeRoute would read of the world's route.
func (w *world) routeObservation() *routeObservation {
	if w.route == nil || !weightedSpec(w.ad) {
		return nil
	}
	ro := &routeObservation{route: w.route.DeepCopy(), backends: backends(w.ad)}
	rules, err := httproute.Targets(ro.route, w.ad.Spec.Strategy.TrafficRouting.GatewayAPI.Rules, ro.backends)
	if err != nil {
		return &routeObservation{problem: err.Error(), accepted: metav1.ConditionUnknown}
	}
	ro.rules = rules
	ro.note()
	return ro
}

// applyRoute writes the pass's weights to the world's route, checking that
// a canary gets requests only once its pods are ready and that its
// Deployment goes only once the route sends it nothing.
func (w *world) applyRoute(p *pass) {
	w.t.Helper()
	ro, c := p.obs.route, p.children
	if c.removeCanary && ro != nil && ro.problem == "" && (ro.weight != 0 || ro.accepted != metav1.ConditionTrue) {
		w.t.Fatalf("the canary Deployment removed while the route gives it %d%% (accepted %s)", ro.weight, ro.accepted)
	}
	if ro == nil || ro.route == nil || c.routeWeight == nil {
		return
	}
	if *c.routeWeight > 0 && p.obs.ready(p.track(), p.revision) == 0 {
		w.t.Fatalf("the route gives the canary %d%% before a canary pod is ready", *c.routeWeight)
	}
	weights := httproute.SetWeight(w.route, ro.rules, ro.backends, *c.routeWeight, c.dropCanaryRef)
	if httproute.SetHeaderRules(w.route, ro.rules, ro.backends, w.ad.Name, c.headers) || weights {
		w.route.Generation++
	}
}

// settleRoute lets the gateway accept the route's generation.
func (w *world) settleRoute() {
	if w.route == nil || !w.gatewayAccepts {
		return
	}
	cond := func(t string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, ObservedGeneration: w.route.Generation, Reason: t}
	}
	w.route.Status.Parents = []gatewayv1.RouteParentStatus{{ParentRef: gatewayv1.ParentReference{Name: "gw"},
		ControllerName: "example.com/gateway", Conditions: []metav1.Condition{cond("Accepted"), cond("ResolvedRefs")}}}
}

func TestWeightedCanary_StepsMoveTheRouteAndTheStableSizeStays(t *testing.T) {
	ad := weightedApp()
	w := newWorld(t, ad)
	w.route, w.gatewayAccepts = frontRoute(ad), true
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	untouched := frontRoute(ad)
	if httproute.HasCanary(w.route, []int{0}, backends(ad)) || w.route.Generation != untouched.Generation {
		t.Fatalf("the first release wrote the route: %+v", w.route.Spec.Rules)
	}

	w.setImage(image124)
	seen := map[int32]bool{}
	for range 60 {
		w.pass()
		w.check()
		if st := w.ad.Status; st.Canary != nil && stepIndex(st.Canary) < 3 {
			if n := ptr.Deref(w.deployments[platformv1.TrackStable].Spec.Replicas, 0); n != 3 {
				t.Fatalf("the stable Deployment has %d replicas during a weighted step, want 3", n)
			}
			seen[ptr.Deref(st.Canary.Weight.Actual, -1)] = true
		}
		w.settle()
		w.now = w.now.Add(time.Second)
		if w.ad.Status.Phase == platformv1.PhaseHealthy && w.ad.Status.StableVersion == v124 && w.deployments[platformv1.TrackCanary] == nil {
			break
		}
	}
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	for _, want := range []int32{5, 25, 50} {
		if !seen[want] {
			t.Errorf("status never showed the route at %d%% (saw %v)", want, seen)
		}
	}
	b := backends(ad)
	if httproute.HasCanary(w.route, []int{0}, b) || ptr.Deref(w.route.Spec.Rules[0].BackendRefs[0].Weight, 0) != 100 {
		t.Errorf("after the promotion the route is %+v, want the stable Service alone at 100", w.route.Spec.Rules[0].BackendRefs)
	}
	if len(w.route.Spec.Rules[1].BackendRefs) != 1 || w.route.Spec.Rules[1].BackendRefs[0].Weight != nil {
		t.Errorf("the rule of another application changed: %+v", w.route.Spec.Rules[1].BackendRefs)
	}
	w.expectEvents(EventStepCompleted, EventPromoted)
}

func TestWeightedCanary_ARouteNobodyAcceptsPausesTheStep(t *testing.T) {
	ad := weightedApp()
	w := newWorld(t, ad)
	w.route = frontRoute(ad)
	w.run()
	w.setImage(image124)
	for range 45 {
		w.pass()
		w.settle()
		w.now = w.now.Add(time.Second)
	}
	st := w.ad.Status
	if st.Phase != platformv1.PhasePaused || st.PauseReason != platformv1.PauseRouteNotAccepted {
		t.Fatalf("phase %s (%s), pause reason %q; want Paused RouteNotAccepted", st.Phase, st.Message, st.PauseReason)
	}
	if !strings.Contains(st.Message, "has not reported") && !strings.Contains(st.Message, "no gateway controller") {
		t.Errorf("message %q does not say the gateway has not accepted the route", st.Message)
	}
	if c := st.Canary; c == nil || c.Step.ReadyAt != nil || c.Route.Accepted != metav1.ConditionUnknown || c.Route.WaitingSince == nil {
		t.Fatalf("canary %+v: the step must not count as started", c)
	}

	// The gateway comes: the step starts and the canary goes on.
	w.gatewayAccepts = true
	w.settle()
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	if w.ad.Status.StableVersion != v124 {
		t.Fatalf("stable %s after the gateway accepted, want %s", w.ad.Status.StableVersion, v124)
	}
}

func TestWeightedCanary_AMissingRoutePausesAtOnceAndAnAbortStillEnds(t *testing.T) {
	ad := weightedApp()
	w := newWorld(t, ad)
	w.route, w.gatewayAccepts = frontRoute(ad), true
	w.run()
	w.route.Spec.Rules = w.route.Spec.Rules[1:] // the owner moved the shop elsewhere
	w.setImage(image124)
	w.run()
	st := w.ad.Status
	if st.PauseReason != platformv1.PauseRouteNotAccepted || !strings.Contains(st.Message, "no rule with a backendRef to Service order-service") {
		t.Fatalf("pause %q, message %q", st.PauseReason, st.Message)
	}
	w.request(platformv1.AbortAnnotation)
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonAborted)
	if w.deployments[platformv1.TrackCanary] != nil {
		t.Fatal("the canary stayed after the abort")
	}
}

func TestWeightedCanary_AStepsHeaderRouteLastsAsLongAsTheStep(t *testing.T) {
	ad := weightedApp()
	ad.Spec.Strategy.Steps[0].HeaderRoute = platformv1.HeaderRoute{Matches: []platformv1.HeaderMatch{{Name: "X-Canary", Value: "yes"}}}
	ad.Spec.Strategy.Steps[0].PauseSeconds = ptr.To[int32](5)
	w := newWorld(t, ad)
	w.route, w.gatewayAccepts = frontRoute(ad), true
	w.run()
	w.setImage(image124)
	sawHeaders, sawAfter := false, false
	for range 60 {
		w.pass()
		w.settle()
		w.now = w.now.Add(time.Second)
		n := httproute.HeaderRules(w.route, ad.Name)
		if c := w.ad.Status.Canary; c != nil && stepIndex(c) == 0 && c.Step.ReadyAt != nil {
			if n != 1 {
				t.Fatalf("step 1 started with %d header rules, want 1", n)
			}
			sawHeaders = true
		}
		if c := w.ad.Status.Canary; c != nil && stepIndex(c) == 1 && c.Step.ReadyAt != nil {
			if n != 0 {
				t.Fatalf("step 2 (no headerRoute) started with %d header rules", n)
			}
			sawAfter = true
		}
		if w.ad.Status.Phase == platformv1.PhaseHealthy && w.ad.Status.StableVersion == v124 && w.deployments[platformv1.TrackCanary] == nil {
			break
		}
	}
	if !sawHeaders || !sawAfter {
		t.Fatalf("saw the header rule in step 1: %v, its removal in step 2: %v", sawHeaders, sawAfter)
	}
	if n := httproute.HeaderRules(w.route, ad.Name); n != 0 || len(w.route.Spec.Rules) != 2 {
		t.Errorf("after the promotion the route has %d rules, %d of them header rules", len(w.route.Spec.Rules), n)
	}
}
