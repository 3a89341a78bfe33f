// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package trafficsim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// edge is the served Gateway of the tests.
const edge = "edge"

func simRoute(backends ...string) *gatewayv1.HTTPRoute {
	refs := make([]gatewayv1.HTTPBackendRef, 0, len(backends))
	for _, b := range backends {
		refs = append(refs, gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(b), Port: ptr.To[gatewayv1.PortNumber](80)}}})
	}
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "front", Generation: 7},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{
				ParentRefs: []gatewayv1.ParentReference{{Name: edge}, {Name: "elsewhere"}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: refs}},
		},
	}
}

func TestRouteParents(t *testing.T) {
	served := func(ns, name string) bool { return ns == "shop" && name == edge }
	services := func(name string) bool { return name == "web" || name == "web-canary" }
	now := metav1.Now()
	cases := []struct {
		name     string
		route    *gatewayv1.HTTPRoute
		resolved metav1.ConditionStatus
	}{
		{"every backend exists", simRoute("web", "web-canary"), metav1.ConditionTrue},
		{"a backend is missing", simRoute("web", "gone"), metav1.ConditionFalse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			other := gatewayv1.RouteParentStatus{ParentRef: gatewayv1.ParentReference{Name: "elsewhere"},
				ControllerName: "example.com/other"}
			tc.route.Status.Parents = []gatewayv1.RouteParentStatus{other}
			got := RouteParents(tc.route, served, services, now)
			if len(got) != 2 || got[0].ControllerName != "example.com/other" {
				t.Fatalf("parents %+v: want the other controller's entry kept and one of ours", got)
			}
			ours := got[1]
			if ours.ControllerName != ControllerName || ours.ParentRef.Name != edge {
				t.Fatalf("our entry %+v, want for Gateway edge only (elsewhere is not a served Gateway)", ours)
			}
			accepted := meta.FindStatusCondition(ours.Conditions, "Accepted")
			resolved := meta.FindStatusCondition(ours.Conditions, "ResolvedRefs")
			if accepted == nil || accepted.Status != metav1.ConditionTrue || accepted.ObservedGeneration != 7 {
				t.Errorf("Accepted %+v, want True at generation 7", accepted)
			}
			if resolved == nil || resolved.Status != tc.resolved || resolved.ObservedGeneration != 7 {
				t.Errorf("ResolvedRefs %+v, want %s at generation 7", resolved, tc.resolved)
			}
			if tc.resolved == metav1.ConditionFalse && resolved.Reason != "BackendNotFound" {
				t.Errorf("ResolvedRefs reason %s, want BackendNotFound", resolved.Reason)
			}
		})
	}
}

// TestGatewayPass_WritesTheStatusOfServedObjectsOnly runs one pass over a
// served and an unserved class, a Gateway of each and a route on each.
func TestGatewayPass_WritesTheStatusOfServedObjectsOnly(t *testing.T) {
	scheme, err := GatewayScheme()
	if err != nil {
		t.Fatal(err)
	}
	class := func(name, controller string) *gatewayv1.GatewayClass {
		return &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayv1.GatewayController(controller)}}
	}
	gateway := func(name, class string) *gatewayv1.Gateway {
		return &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class)}}
	}
	objs := []client.Object{
		class(GatewayClassName, ControllerName), class("real", "example.com/real"),
		gateway(edge, GatewayClassName), gateway("elsewhere", "real"),
		simRoute("web"),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&gatewayv1.GatewayClass{}, &gatewayv1.Gateway{}, &gatewayv1.HTTPRoute{}).Build()
	ctx := context.Background()
	served, err := gatewayPass(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(served) != 1 || served[0].Name != "front" {
		t.Errorf("served routes %v, want front", served)
	}
	var gc, other gatewayv1.GatewayClass
	_ = c.Get(ctx, client.ObjectKey{Name: GatewayClassName}, &gc)
	_ = c.Get(ctx, client.ObjectKey{Name: "real"}, &other)
	if !meta.IsStatusConditionTrue(gc.Status.Conditions, "Accepted") || len(other.Status.Conditions) != 0 {
		t.Errorf("classes: ours %+v, other %+v", gc.Status.Conditions, other.Status.Conditions)
	}
	var gw gatewayv1.Gateway
	_ = c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: edge}, &gw)
	if !meta.IsStatusConditionTrue(gw.Status.Conditions, "Accepted") ||
		!meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") {
		t.Errorf("gateway edge: %+v", gw.Status.Conditions)
	}
	var r gatewayv1.HTTPRoute
	_ = c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "front"}, &r)
	if len(r.Status.Parents) != 1 || r.Status.Parents[0].ParentRef.Name != edge {
		t.Fatalf("route parents %+v, want one for edge", r.Status.Parents)
	}
	rv := r.ResourceVersion
	if _, err := gatewayPass(ctx, c); err != nil {
		t.Fatal(err)
	}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "front"}, &r)
	if r.ResourceVersion != rv {
		t.Error("a second pass rewrote an unchanged route's status")
	}
}
