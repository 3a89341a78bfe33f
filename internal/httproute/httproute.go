// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package httproute

import (
	"fmt"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Backends names the application's two Services, which a targeted rule
// sends to.
type Backends struct {
	// Stable selects the stable pods, Canary the canary's.
	Stable, Canary string
}

// Targets returns the indexes of the rules whose weights a canary moves:
// the rules named, or, when names is empty, every rule with a backendRef to
// the stable Service. Each targeted rule may send only to the application's
// Services: the canary's share is a share of the whole rule, which another
// backend would make a share of something else.
func Targets(r *gatewayv1.HTTPRoute, names []string, b Backends) ([]int, error) {
	var out []int
	if len(names) == 0 {
		for i := range r.Spec.Rules {
			if slices.ContainsFunc(r.Spec.Rules[i].BackendRefs, func(ref gatewayv1.HTTPBackendRef) bool {
				return isService(r, ref, b.Stable)
			}) {
				out = append(out, i)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("HTTPRoute %s has no rule with a backendRef to Service %s", r.Name, b.Stable)
		}
	} else {
		for _, name := range names {
			i := slices.IndexFunc(r.Spec.Rules, func(rule gatewayv1.HTTPRouteRule) bool {
				return rule.Name != nil && string(*rule.Name) == name
			})
			if i < 0 {
				return nil, fmt.Errorf("HTTPRoute %s has no rule named %q", r.Name, name)
			}
			out = append(out, i)
		}
	}
	for _, i := range out {
		for _, ref := range r.Spec.Rules[i].BackendRefs {
			if !isService(r, ref, b.Stable) && !isService(r, ref, b.Canary) {
				return nil, fmt.Errorf("rule %s of HTTPRoute %s sends to %s besides Service %s: "+
					"a canary moves rules whose backends are the application's Services only",
					RuleName(r, i), r.Name, describeRef(ref), b.Stable)
			}
		}
		if !slices.ContainsFunc(r.Spec.Rules[i].BackendRefs, func(ref gatewayv1.HTTPBackendRef) bool {
			return isService(r, ref, b.Stable)
		}) {
			return nil, fmt.Errorf("rule %s of HTTPRoute %s has no backendRef to Service %s", RuleName(r, i), r.Name, b.Stable)
		}
	}
	return out, nil
}

// RuleName names rule i of r for people: its name, or rules[i].
func RuleName(r *gatewayv1.HTTPRoute, i int) string {
	if n := r.Spec.Rules[i].Name; n != nil && *n != "" {
		return string(*n)
	}
	return fmt.Sprintf("rules[%d]", i)
}

// RuleNames names the rules at indexes for people.
func RuleNames(r *gatewayv1.HTTPRoute, indexes []int) []string {
	out := make([]string, 0, len(indexes))
	for _, i := range indexes {
		out = append(out, RuleName(r, i))
	}
	return out
}

// Weight is the canary's share of the targeted rules' requests, in percent
// rounded down: of the first rule where the two differ, the least. A rule
// without a backendRef to the canary gives it 0.
func Weight(r *gatewayv1.HTTPRoute, rules []int, b Backends) int32 {
	share := int32(100)
	for _, i := range rules {
		var stable, canary int64
		for _, ref := range r.Spec.Rules[i].BackendRefs {
			w := int64(ptr.Deref(ref.Weight, 1))
			switch {
			case isService(r, ref, b.Canary):
				canary += w
			case isService(r, ref, b.Stable):
				stable += w
			}
		}
		s := int32(0)
		if stable+canary > 0 {
			s = int32(canary * 100 / (stable + canary))
		}
		share = min(share, s)
	}
	if len(rules) == 0 {
		return 0
	}
	return share
}

// SetWeight makes the canary's share of each targeted rule weight percent:
// the stable Service's backendRef weighs 100-weight and the canary's weight,
// a canary backendRef being added (with the stable one's port) when the rule
// has none. With dropCanary, the canary's backendRef goes and the stable one
// weighs 100. It reports whether r changed; nothing outside the targeted
// rules' backendRefs is touched.
func SetWeight(r *gatewayv1.HTTPRoute, rules []int, b Backends, weight int32, dropCanary bool) bool {
	changed := false
	for _, i := range rules {
		rule := &r.Spec.Rules[i]
		stableRef := -1
		hasCanary := false
		refs := rule.BackendRefs[:0:0]
		for _, ref := range rule.BackendRefs {
			switch {
			case isService(r, ref, b.Canary):
				if dropCanary || hasCanary {
					changed = true
					continue // one canary backendRef, or none
				}
				hasCanary = true
				changed = setWeight(&ref, weight) || changed
			case isService(r, ref, b.Stable):
				want := 100 - weight
				if dropCanary {
					want = 100
				}
				changed = setWeight(&ref, want) || changed
			}
			if isService(r, ref, b.Stable) && stableRef < 0 {
				stableRef = len(refs)
			}
			refs = append(refs, ref)
		}
		if !hasCanary && !dropCanary && stableRef >= 0 {
			canary := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: gatewayv1.ObjectName(b.Canary), Port: refs[stableRef].Port,
				},
				Weight: ptr.To(weight),
			}}
			refs = append(refs, canary)
			changed = true
		}
		rule.BackendRefs = refs
	}
	return changed
}

// HasCanary reports whether a targeted rule still has a backendRef to the
// canary Service.
func HasCanary(r *gatewayv1.HTTPRoute, rules []int, b Backends) bool {
	for _, i := range rules {
		if slices.ContainsFunc(r.Spec.Rules[i].BackendRefs, func(ref gatewayv1.HTTPBackendRef) bool {
			return isService(r, ref, b.Canary)
		}) {
			return true
		}
	}
	return false
}

// setWeight sets ref's weight to w and reports whether it changed.
func setWeight(ref *gatewayv1.HTTPBackendRef, w int32) bool {
	if ref.Weight != nil && *ref.Weight == w {
		return false
	}
	ref.Weight = ptr.To(w)
	return true
}

// isService reports whether ref names the Service name in the route's
// namespace.
func isService(r *gatewayv1.HTTPRoute, ref gatewayv1.HTTPBackendRef, name string) bool {
	o := ref.BackendObjectReference
	return string(o.Name) == name &&
		ptr.Deref(o.Group, "") == "" && ptr.Deref(o.Kind, "Service") == "Service" &&
		string(ptr.Deref(o.Namespace, gatewayv1.Namespace(r.Namespace))) == r.Namespace
}

// describeRef names a backendRef for people.
func describeRef(ref gatewayv1.HTTPBackendRef) string {
	o := ref.BackendObjectReference
	var b strings.Builder
	b.WriteString(string(ptr.Deref(o.Kind, "Service")))
	if g := ptr.Deref(o.Group, ""); g != "" {
		b.WriteString("." + string(g))
	}
	b.WriteString(" ")
	if ns := ptr.Deref(o.Namespace, ""); ns != "" {
		b.WriteString(string(ns) + "/")
	}
	b.WriteString(string(o.Name))
	return b.String()
}

// Accepted says whether every parent (gateway) the route names has accepted
// its current generation with its references resolved: True; False when one
// has refused it (the message says which and what it said); Unknown while
// one has not yet written its status for that generation.
func Accepted(r *gatewayv1.HTTPRoute) (metav1.ConditionStatus, string) {
	if len(r.Spec.ParentRefs) == 0 {
		return metav1.ConditionFalse, fmt.Sprintf("HTTPRoute %s has no parentRefs: no gateway serves it", r.Name)
	}
	for _, parent := range r.Spec.ParentRefs {
		st := parentStatus(r, parent)
		if st == nil {
			return metav1.ConditionUnknown, fmt.Sprintf("no gateway controller has reported on HTTPRoute %s for %s yet",
				r.Name, describeParent(r, parent))
		}
		for _, t := range []gatewayv1.RouteConditionType{gatewayv1.RouteConditionAccepted, gatewayv1.RouteConditionResolvedRefs} {
			c := findCondition(st.Conditions, string(t))
			switch {
			case c == nil || c.ObservedGeneration < r.Generation:
				return metav1.ConditionUnknown, fmt.Sprintf("%s has not reported %s for generation %d of HTTPRoute %s yet",
					st.ControllerName, t, r.Generation, r.Name)
			case c.Status != metav1.ConditionTrue:
				return metav1.ConditionFalse, fmt.Sprintf("%s reports %s %s for %s: %s: %s", st.ControllerName, t, c.Status,
					describeParent(r, parent), c.Reason, c.Message)
			}
		}
	}
	return metav1.ConditionTrue, ""
}

// parentStatus is the status the route's gateways report for parent, or nil.
func parentStatus(r *gatewayv1.HTTPRoute, parent gatewayv1.ParentReference) *gatewayv1.RouteParentStatus {
	want := normalize(r, parent)
	for i := range r.Status.Parents {
		if normalize(r, r.Status.Parents[i].ParentRef) == want {
			return &r.Status.Parents[i]
		}
	}
	return nil
}

// parentKey is a parentRef with its defaults filled in, comparable.
type parentKey struct {
	group, kind, namespace, name, section string
	port                                  int32
}

func normalize(r *gatewayv1.HTTPRoute, p gatewayv1.ParentReference) parentKey {
	return parentKey{
		group:     string(ptr.Deref(p.Group, gatewayv1.GroupName)),
		kind:      string(ptr.Deref(p.Kind, "Gateway")),
		namespace: string(ptr.Deref(p.Namespace, gatewayv1.Namespace(r.Namespace))),
		name:      string(p.Name),
		section:   string(ptr.Deref(p.SectionName, "")),
		port:      ptr.Deref(p.Port, 0),
	}
}

// describeParent names a parentRef for people.
func describeParent(r *gatewayv1.HTTPRoute, p gatewayv1.ParentReference) string {
	k := normalize(r, p)
	s := fmt.Sprintf("%s %s/%s", k.kind, k.namespace, k.name)
	if k.section != "" {
		s += " section " + k.section
	}
	return s
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// HeaderRuleName is the name of the rule a canary adds beside targeted
// rule i of an application's route to send the requests carrying a step's
// headers to the canary alone: the rule's own name, or its index, and the
// application's, so that the operator finds its rules again and touches no
// other.
func HeaderRuleName(r *gatewayv1.HTTPRoute, i int, app string) string {
	if n := r.Spec.Rules[i].Name; n != nil && *n != "" {
		return string(*n) + "-" + app + "-canary-headers"
	}
	// Counted without the header rules, whose insertion moves the rules
	// after them: the name stays the same from pass to pass.
	own := 0
	for _, rule := range r.Spec.Rules[:i] {
		if !isHeaderRule(rule, app) {
			own++
		}
	}
	return fmt.Sprintf("rule-%d-%s-canary-headers", own, app)
}

// isHeaderRule reports whether rule is a header rule of the application.
func isHeaderRule(rule gatewayv1.HTTPRouteRule, app string) bool {
	return rule.Name != nil && strings.HasSuffix(string(*rule.Name), "-"+app+"-canary-headers")
}

// HeaderRules is how many rules of r are the application's header rules.
func HeaderRules(r *gatewayv1.HTTPRoute, app string) int {
	n := 0
	for _, rule := range r.Spec.Rules {
		if isHeaderRule(rule, app) {
			n++
		}
	}
	return n
}

// SetHeaderRules makes r carry, after each targeted rule, a rule that sends
// the requests of that rule which also carry headers to the canary Service
// alone: a copy of the rule with the headers added to each of its matches
// (Gateway API precedence prefers the rule with more header matches) and
// the canary as its only backend. With no headers, the application's
// header rules go. It reports whether r changed. rules must not include
// header rules themselves (Targets never returns them: they send to the
// canary only).
func SetHeaderRules(r *gatewayv1.HTTPRoute, rules []int, b Backends, app string, headers []gatewayv1.HTTPHeaderMatch) bool {
	want := map[int]gatewayv1.HTTPRouteRule{}
	if len(headers) > 0 {
		for _, i := range rules {
			want[i] = headerRule(r, i, b, app, headers)
		}
	}
	out := make([]gatewayv1.HTTPRouteRule, 0, len(r.Spec.Rules)+len(want))
	for i, rule := range r.Spec.Rules {
		if isHeaderRule(rule, app) {
			continue
		}
		out = append(out, rule)
		if h, ok := want[i]; ok {
			out = append(out, h)
		}
	}
	if sameRules(out, r.Spec.Rules) {
		return false
	}
	r.Spec.Rules = out
	return true
}

// headerRule is the header rule of targeted rule i.
func headerRule(r *gatewayv1.HTTPRoute, i int, b Backends, app string, headers []gatewayv1.HTTPHeaderMatch) gatewayv1.HTTPRouteRule {
	rule := *r.Spec.Rules[i].DeepCopy()
	rule.Name = ptr.To(gatewayv1.SectionName(HeaderRuleName(r, i, app)))
	matches := rule.Matches
	if len(matches) == 0 {
		// A rule without matches matches every request (a path prefix of /).
		matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
			Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/")}}}
	}
	for k := range matches {
		matches[k].Headers = append(matches[k].Headers, headers...)
	}
	rule.Matches = matches
	var port *gatewayv1.PortNumber
	for _, ref := range r.Spec.Rules[i].BackendRefs {
		if isService(r, ref, b.Stable) {
			port = ref.Port
			break
		}
	}
	// The fields the CRD defaults are set as it would, so that the rule
	// read back is the rule written, and HasHeaderRules sees it carried.
	rule.BackendRefs = []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{
			Group: ptr.To[gatewayv1.Group](""), Kind: ptr.To[gatewayv1.Kind]("Service"),
			Name: gatewayv1.ObjectName(b.Canary), Port: port,
		},
		Weight: ptr.To[int32](1),
	}}}
	return rule
}

// HasHeaderRules reports whether r carries the application's header rules
// with exactly headers, for every targeted rule.
func HasHeaderRules(r *gatewayv1.HTTPRoute, rules []int, b Backends, app string, headers []gatewayv1.HTTPHeaderMatch) bool {
	c := r.DeepCopy()
	return !SetHeaderRules(c, rules, b, app, headers)
}

// sameRules reports whether two rule lists are the same.
func sameRules(a, b []gatewayv1.HTTPRouteRule) bool {
	return apiequality.Semantic.DeepEqual(a, b)
}

// Limits of an HTTPRoute, as the Gateway API's CRD checks them: rules per
// route, and matches in all its rules.
const (
	MaxRules        = 16
	MaxTotalMatches = 128
)

// CheckLimits says which of the Gateway API's limits r would exceed.
func CheckLimits(r *gatewayv1.HTTPRoute) error {
	if n := len(r.Spec.Rules); n > MaxRules {
		return fmt.Errorf("HTTPRoute %s would have %d rules, more than the Gateway API's %d", r.Name, n, MaxRules)
	}
	total := 0
	for _, rule := range r.Spec.Rules {
		total += max(len(rule.Matches), 1)
	}
	if total >= MaxTotalMatches {
		return fmt.Errorf("HTTPRoute %s would have %d matches in all its rules, not fewer than the Gateway API's %d",
			r.Name, total, MaxTotalMatches)
	}
	return nil
}
