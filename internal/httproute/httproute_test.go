// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package httproute

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

var web = Backends{Stable: "web", Canary: "web-canary"}

func backend(name string, weight *int32) gatewayv1.HTTPBackendRef {
	return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To[gatewayv1.PortNumber](80)},
		Weight:                 weight,
	}}
}

func rule(name string, refs ...gatewayv1.HTTPBackendRef) gatewayv1.HTTPRouteRule {
	r := gatewayv1.HTTPRouteRule{BackendRefs: refs,
		Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Value: ptr.To("/" + name)}}}}
	if name != "" {
		r.Name = ptr.To(gatewayv1.SectionName(name))
	}
	return r
}

func route(rules ...gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "front", Generation: 3},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"shop.example.com"},
			Rules:           rules,
		},
	}
}

func TestTargets(t *testing.T) {
	other := backend("search", nil)
	elsewhere := backend("web", nil)
	elsewhere.Namespace = ptr.To[gatewayv1.Namespace]("other")
	cases := []struct {
		name    string
		route   *gatewayv1.HTTPRoute
		names   []string
		want    []int
		wantErr string
	}{
		{name: "every rule to the stable Service", route: route(rule("a", backend("web", nil)), rule("b", other), rule("", backend("web", nil))),
			wantErr: "rule b", names: []string{"a", "b"}},
		{name: "default skips rules of other Services", route: route(rule("a", backend("web", nil)), rule("b", other), rule("", backend("web", nil))),
			want: []int{0, 2}},
		{name: "named", route: route(rule("a", backend("web", nil)), rule("c", backend("web", nil))), names: []string{"c"}, want: []int{1}},
		{name: "missing name", route: route(rule("a", backend("web", nil))), names: []string{"x"}, wantErr: `no rule named "x"`},
		{name: "none to the stable Service", route: route(rule("b", other)), wantErr: "no rule with a backendRef to Service web"},
		{name: "a Service of another namespace is not the stable one", route: route(rule("a", elsewhere)),
			wantErr: "no rule with a backendRef to Service web"},
		{name: "a third backend is refused", route: route(rule("a", backend("web", nil), other)), wantErr: "sends to Service search"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Targets(tc.route, tc.names, web)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Targets() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !equality.Semantic.DeepEqual(got, tc.want) {
				t.Fatalf("Targets() = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestSetWeightChangesOnlyTheTargetedWeights(t *testing.T) {
	r := route(rule("a", backend("web", nil)), rule("b", backend("web", nil)))
	before := r.DeepCopy()
	if !SetWeight(r, []int{0}, web, 5, false) {
		t.Fatal("SetWeight reported no change")
	}
	if got := Weight(r, []int{0}, web); got != 5 {
		t.Errorf("Weight() = %d after setting 5", got)
	}
	refs := r.Spec.Rules[0].BackendRefs
	if len(refs) != 2 || ptr.Deref(refs[0].Weight, -1) != 95 || ptr.Deref(refs[1].Weight, -1) != 5 ||
		string(refs[1].Name) != "web-canary" || ptr.Deref(refs[1].Port, 0) != 80 {
		t.Errorf("rule a's backendRefs = %+v, want web 95 and web-canary:80 5", refs)
	}
	if !equality.Semantic.DeepEqual(r.Spec.Rules[1], before.Spec.Rules[1]) {
		t.Errorf("an untargeted rule changed: %+v", r.Spec.Rules[1])
	}
	if !equality.Semantic.DeepEqual(r.Spec.Rules[0].Matches, before.Spec.Rules[0].Matches) ||
		!equality.Semantic.DeepEqual(r.Spec.Hostnames, before.Spec.Hostnames) ||
		!equality.Semantic.DeepEqual(r.Spec.ParentRefs, before.Spec.ParentRefs) {
		t.Error("SetWeight changed a field other than the weights")
	}
	if SetWeight(r, []int{0}, web, 5, false) {
		t.Error("setting the same weight again reported a change")
	}
	if !SetWeight(r, []int{0}, web, 50, false) || Weight(r, []int{0}, web) != 50 || len(r.Spec.Rules[0].BackendRefs) != 2 {
		t.Errorf("50%%: %+v", r.Spec.Rules[0].BackendRefs)
	}
	if !SetWeight(r, []int{0}, web, 0, true) || HasCanary(r, []int{0}, web) {
		t.Errorf("dropping the canary: %+v", r.Spec.Rules[0].BackendRefs)
	}
	if refs := r.Spec.Rules[0].BackendRefs; len(refs) != 1 || ptr.Deref(refs[0].Weight, -1) != 100 {
		t.Errorf("after the canary: %+v, want web alone at 100", refs)
	}
}

func TestWeightIsTheLeastShareOfTheRules(t *testing.T) {
	r := route(rule("a", backend("web", ptr.To[int32](3)), backend("web-canary", ptr.To[int32](1))),
		rule("b", backend("web", ptr.To[int32](90)), backend("web-canary", ptr.To[int32](10))),
		rule("c", backend("web", nil)))
	for _, tc := range []struct {
		rules []int
		want  int32
	}{{[]int{0}, 25}, {[]int{0, 1}, 10}, {[]int{2}, 0}, {nil, 0}} {
		if got := Weight(r, tc.rules, web); got != tc.want {
			t.Errorf("Weight(%v) = %d, want %d", tc.rules, got, tc.want)
		}
	}
}

func TestAccepted(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, ObservedGeneration: gen, Reason: "R", Message: "m"}
	}
	parent := func(conds ...metav1.Condition) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{ParentRef: gatewayv1.ParentReference{Name: "gw",
			Namespace: ptr.To[gatewayv1.Namespace]("shop"), Kind: ptr.To[gatewayv1.Kind]("Gateway")},
			ControllerName: "example.com/gw", Conditions: conds}
	}
	cases := []struct {
		name    string
		parents []gatewayv1.RouteParentStatus
		want    metav1.ConditionStatus
		msg     string
	}{
		{name: "no status", want: metav1.ConditionUnknown, msg: "no gateway controller has reported"},
		{name: "accepted at this generation", want: metav1.ConditionTrue,
			parents: []gatewayv1.RouteParentStatus{parent(cond("Accepted", "True", 3), cond("ResolvedRefs", "True", 3))}},
		{name: "accepted at an older generation", want: metav1.ConditionUnknown, msg: "generation 3",
			parents: []gatewayv1.RouteParentStatus{parent(cond("Accepted", "True", 2), cond("ResolvedRefs", "True", 2))}},
		{name: "refs not resolved", want: metav1.ConditionFalse, msg: "ResolvedRefs False",
			parents: []gatewayv1.RouteParentStatus{parent(cond("Accepted", "True", 3), cond("ResolvedRefs", "False", 3))}},
		{name: "not accepted", want: metav1.ConditionFalse, msg: "Accepted False",
			parents: []gatewayv1.RouteParentStatus{parent(cond("Accepted", "False", 3), cond("ResolvedRefs", "True", 3))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := route(rule("a", backend("web", nil)))
			r.Status.Parents = tc.parents
			got, msg := Accepted(r)
			if got != tc.want || !strings.Contains(msg, tc.msg) {
				t.Errorf("Accepted() = %s, %q; want %s with %q", got, msg, tc.want, tc.msg)
			}
		})
	}
	noParents := route()
	noParents.Spec.ParentRefs = nil
	if got, _ := Accepted(noParents); got != metav1.ConditionFalse {
		t.Errorf("a route without parents: %s, want False", got)
	}
}

func TestSetHeaderRulesAddsACanaryRuleBesideEachTargetedRule(t *testing.T) {
	r := route(rule("", backend("web", nil)), rule("search", backend("search", nil)), rule("", backend("web", nil)))
	r.Spec.Rules[2].Matches = nil // matches every request
	tester := []gatewayv1.HTTPHeaderMatch{{Name: "X-Canary", Value: "always"}}
	before := r.DeepCopy()
	targets := []int{0, 2}
	if !SetHeaderRules(r, targets, web, "web", tester) {
		t.Fatal("no change reported")
	}
	if len(r.Spec.Rules) != 5 {
		t.Fatalf("%d rules, want 5: %+v", len(r.Spec.Rules), r.Spec.Rules)
	}
	for k, want := range []string{"rule-0-web-canary-headers", "rule-2-web-canary-headers"} {
		h := r.Spec.Rules[[]int{1, 4}[k]]
		if h.Name == nil || string(*h.Name) != want {
			t.Fatalf("header rule %d named %v, want %s", k, h.Name, want)
		}
		if len(h.BackendRefs) != 1 || string(h.BackendRefs[0].Name) != "web-canary" || ptr.Deref(h.BackendRefs[0].Port, 0) != 80 {
			t.Errorf("header rule %s sends to %+v, want web-canary:80 alone", want, h.BackendRefs)
		}
		for _, m := range h.Matches {
			if len(m.Headers) != 1 || m.Headers[0].Name != "X-Canary" {
				t.Errorf("header rule %s matches %+v, want the tester's header", want, m)
			}
		}
	}
	if p := r.Spec.Rules[4].Matches[0].Path; p == nil || ptr.Deref(p.Value, "") != "/" {
		t.Errorf("the header rule of a rule without matches: %+v, want a path prefix of /", r.Spec.Rules[4].Matches)
	}
	if !equality.Semantic.DeepEqual(r.Spec.Rules[0].Matches, before.Spec.Rules[0].Matches) {
		t.Error("the original rule's matches changed")
	}
	// Targets on the route as it now is: the header rules send to the
	// canary alone and are not targets; their names stay from pass to pass.
	again, err := Targets(r, nil, web)
	if err != nil || !equality.Semantic.DeepEqual(again, []int{0, 3}) {
		t.Fatalf("Targets after the header rules = %v, %v; want [0 3]", again, err)
	}
	if SetHeaderRules(r, again, web, "web", tester) || !HasHeaderRules(r, again, web, "web", tester) {
		t.Error("setting the same header rules again changed the route")
	}
	if HeaderRules(r, "web") != 2 || HeaderRules(r, "other") != 0 {
		t.Errorf("HeaderRules = %d for web", HeaderRules(r, "web"))
	}
	if !SetHeaderRules(r, again, web, "web", nil) || !equality.Semantic.DeepEqual(r.Spec.Rules, before.Spec.Rules) {
		t.Errorf("after removing the header rules: %+v, want the owner's rules", r.Spec.Rules)
	}
}

func TestCheckLimits(t *testing.T) {
	r := route()
	for range 16 {
		r.Spec.Rules = append(r.Spec.Rules, rule("", backend("web", nil)))
	}
	if err := CheckLimits(r); err != nil {
		t.Errorf("16 rules: %v", err)
	}
	r.Spec.Rules = append(r.Spec.Rules, rule("", backend("web", nil)))
	if err := CheckLimits(r); err == nil || !strings.Contains(err.Error(), "17 rules") {
		t.Errorf("17 rules: %v", err)
	}
	r.Spec.Rules = r.Spec.Rules[:2]
	r.Spec.Rules[0].Matches = make([]gatewayv1.HTTPRouteMatch, 64)
	r.Spec.Rules[1].Matches = make([]gatewayv1.HTTPRouteMatch, 64)
	if err := CheckLimits(r); err == nil || !strings.Contains(err.Error(), "128 matches") {
		t.Errorf("128 matches: %v", err)
	}
}
