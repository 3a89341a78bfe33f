// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package trafficsim

import (
	"fmt"
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routedWeb is the simulator with web's three stable pods and one canary
// pod behind the Services web and web-canary.
func routedWeb(t *testing.T) *Simulator {
	t.Helper()
	s, err := New(Options{Rate: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s.SetPod(pod(fmt.Sprintf("stable-%d", i), "stable", "r1", "example.com/web:v1", true))
	}
	s.SetPod(pod("canary-0", "canary", "r2", "example.com/web:v2", true))
	s.SetService(types.NamespacedName{Namespace: "shop", Name: "web"},
		map[string]string{"app.kubernetes.io/name": "web", "platform.example.com/track": "stable"})
	s.SetService(types.NamespacedName{Namespace: "shop", Name: "web-canary"},
		map[string]string{"app.kubernetes.io/name": "web", "platform.example.com/track": "canary"})
	return s
}

// weightedRule is a rule sending to web and web-canary by weight.
func weightedRule(stable, canary int32) gatewayv1.HTTPRouteRule {
	ref := func(name string, w int32) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{Weight: ptr.To(w),
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name)}}}
	}
	return gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", stable), ref("web-canary", canary)}}
}

// total is a group's requests, both codes.
func total(got map[string]float64, track, revision string) float64 {
	var n float64
	for k := range requests(track, revision, 0, 0) {
		n += got[k]
	}
	return n
}

func TestRouting_ARulesRequestsSplitByWeight(t *testing.T) {
	for _, w := range []int32{5, 25, 50, 0} {
		t.Run(fmt.Sprintf("%d%%", w), func(t *testing.T) {
			s := routedWeb(t)
			s.SetRoute(&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "front"},
				Spec: gatewayv1.HTTPRouteSpec{Rules: []gatewayv1.HTTPRouteRule{weightedRule(100-w, w)}}}, true)
			for range 100 {
				s.Tick(time.Second)
			}
			got := series(t, s)
			stable, canary := total(got, "stable", "r1"), total(got, "canary", "r2")
			// 4 ready pods behind the rule at 10 requests per second each.
			if all := stable + canary; math.Abs(all-4000) > 1 {
				t.Fatalf("%v requests in 100 s, want 4000: the route's total is its pods' rate", all)
			}
			if share := canary / (stable + canary) * 100; math.Abs(share-float64(w)) > 1 {
				t.Errorf("the canary had %.2f%% of the requests, want %d%% ± 1", share, w)
			}
		})
	}
}

func TestRouting_HeaderRequestsGoByTheHeaderRule(t *testing.T) {
	s := routedWeb(t)
	header := gatewayv1.HTTPRouteRule{
		Matches: []gatewayv1.HTTPRouteMatch{{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-Canary", Value: "always"}}}},
		BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web-canary"}}}},
	}
	s.SetRoute(&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "front"},
		Spec: gatewayv1.HTTPRouteSpec{Rules: []gatewayv1.HTTPRouteRule{weightedRule(100, 0), header}}}, true)
	for range 60 {
		s.Tick(time.Second)
	}
	got := series(t, s)
	if c := total(got, "canary", "r2"); math.Abs(c-60*HeaderRate) > 1 {
		t.Errorf("the canary got %v requests, want the testers' %v alone", c, 60*HeaderRate)
	}
	if st := total(got, "stable", "r1"); math.Abs(st-2400) > 1 {
		t.Errorf("the stable pods got %v requests, want the weighted rule's 2400", st)
	}
	// The testers' requests are counted apart, on the canary alone.
	if h := got[HeaderRequestsMetric+"{revision=r2,track=canary}"]; math.Abs(h-60*HeaderRate) > 1 {
		t.Errorf("the canary's header requests: %v, want %v", h, 60*HeaderRate)
	}
	if h, ok := got[HeaderRequestsMetric+"{revision=r1,track=stable}"]; ok {
		t.Errorf("the stable pods got %v header requests, want none", h)
	}
}

func TestRouting_PodsBehindNoServedRouteKeepTheirRate(t *testing.T) {
	s := routedWeb(t)
	s.SetRoute(&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "front"},
		Spec: gatewayv1.HTTPRouteSpec{Rules: []gatewayv1.HTTPRouteRule{weightedRule(100, 0)}}}, true)
	s.SetRoute(&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "front"}}, false)
	for range 10 {
		s.Tick(time.Second)
	}
	got := series(t, s)
	if c := total(got, "canary", "r2"); math.Abs(c-100) > 0.01 {
		t.Errorf("the canary pod got %v requests once the route was gone, want its own 100", c)
	}
}
