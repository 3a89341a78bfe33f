// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package trafficsim

import (
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// HeaderRate is how many requests per second the simulator sends that
// carry the headers of a rule with header matches (a tester's requests):
// they go by that rule, not by the weights of the others.
const HeaderRate = 1.0

// Routed traffic. Pods selected by a Service that a rule of a served
// HTTPRoute sends to get their requests through the route, as behind a real
// gateway, and no others:
//
//   - each rule without header matches gets rate × (the ready pods of its
//     backends) requests per second, the same total a pod would get
//     unrouted, and a rule with header matches HeaderRate;
//   - a rule's requests are split between its backendRefs by smooth
//     weighted round robin (nginx's: each request goes to the backend with
//     the highest running weight, which then loses the total), request by
//     request, so over 100 requests each backend is within one request of
//     its share; a backendRef without a weight weighs 1, of weight 0 gets
//     nothing;
//   - a Service's requests are shared among the ready pods it selects in
//     turn (by pod name), and counted in their groups.
//
// Requests are whole here, where the unrouted model counts fractions: a
// rule's fraction of a request waits for the next tick.

// routeRule is a rule of a served route, with its weighted round robin's
// state.
type routeRule struct {
	namespace string
	services  []string
	weights   []int64
	headers   bool
	current   []int64
	carry     float64
}

// SetRoute records the rules of an HTTPRoute that a served Gateway
// carries; served false forgets the route.
func (s *Simulator) SetRoute(route *gatewayv1.HTTPRoute, served bool) {
	key := types.NamespacedName{Namespace: route.Namespace, Name: route.Name}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !served {
		delete(s.routes, key)
		return
	}
	old := s.routes[key]
	rules := make([]*routeRule, 0, len(route.Spec.Rules))
	for i, r := range route.Spec.Rules {
		rr := &routeRule{namespace: route.Namespace}
		for _, m := range r.Matches {
			if len(m.Headers) > 0 {
				rr.headers = true
			}
		}
		for _, ref := range r.BackendRefs {
			o := ref.BackendObjectReference
			if ptr.Deref(o.Kind, "Service") != "Service" || ptr.Deref(o.Group, "") != "" ||
				string(ptr.Deref(o.Namespace, gatewayv1.Namespace(route.Namespace))) != route.Namespace {
				continue
			}
			rr.services = append(rr.services, string(o.Name))
			rr.weights = append(rr.weights, int64(ptr.Deref(ref.Weight, 1)))
		}
		rr.current = make([]int64, len(rr.services))
		// A rule that keeps its backends keeps its round robin's state.
		if i < len(old) && slices.Equal(old[i].services, rr.services) {
			rr.current, rr.carry = old[i].current, old[i].carry
		}
		rules = append(rules, rr)
	}
	s.routes[key] = rules
}

// SetService records the selector of a Service; nil forgets it.
func (s *Simulator) SetService(key types.NamespacedName, selector map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if selector == nil {
		delete(s.services, key)
		return
	}
	s.services[key] = labels.SelectorFromSet(selector)
}

// next picks the backend of the rule's next request by smooth weighted
// round robin, -1 when every weight is 0.
func (r *routeRule) next() int {
	var total int64
	best := -1
	for i, w := range r.weights {
		if w <= 0 {
			continue
		}
		total += w
		r.current[i] += w
		if best < 0 || r.current[i] > r.current[best] {
			best = i
		}
	}
	if best >= 0 {
		r.current[best] -= total
	}
	return best
}

// readyPodsOf returns the ready pods a Service selects, by name. The
// caller holds s.mu.
func (s *Simulator) readyPodsOf(namespace, service string) []types.NamespacedName {
	sel, ok := s.services[types.NamespacedName{Namespace: namespace, Name: service}]
	if !ok {
		return nil
	}
	var out []types.NamespacedName
	for key, rec := range s.pods {
		if key.Namespace == namespace && rec.ready && sel.Matches(labels.Set(s.podLabels[key])) {
			out = append(out, key)
		}
	}
	slices.SortFunc(out, func(a, b types.NamespacedName) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// routedRequests returns, for elapsed time, the whole requests the served
// routes send to each group, those of them that rules with header matches
// sent, and the groups behind a served route (which get no unrouted
// requests). The caller holds s.mu.
func (s *Simulator) routedRequests(elapsed float64) (counts, header map[Group]int, routed map[Group]bool) {
	counts, header, routed = map[Group]int{}, map[Group]int{}, map[Group]bool{}
	for _, rules := range s.routes {
		for _, r := range rules {
			pods := make([][]types.NamespacedName, len(r.services))
			ready := map[types.NamespacedName]bool{}
			for i, svc := range r.services {
				pods[i] = s.readyPodsOf(r.namespace, svc)
				for _, p := range pods[i] {
					ready[p] = true
					routed[s.pods[p].group] = true
				}
			}
			rate := HeaderRate
			if !r.headers {
				rate = s.rate * float64(len(ready))
			}
			r.carry += rate * elapsed
			whole := int(math.Floor(r.carry + 1e-9))
			r.carry = max(r.carry-float64(whole), 0)
			for range whole {
				b := r.next()
				if b < 0 || len(pods[b]) == 0 {
					continue // no backend, or no ready pod behind it: a 503 nobody measures
				}
				key := s.turn(r.namespace, r.services[b], pods[b])
				counts[s.pods[key].group]++
				if r.headers {
					header[s.pods[key].group]++
				}
			}
		}
	}
	return counts, header, routed
}

// turn picks the pod of a Service's next request in turn. The caller holds
// s.mu.
func (s *Simulator) turn(namespace, service string, pods []types.NamespacedName) types.NamespacedName {
	key := types.NamespacedName{Namespace: namespace, Name: service}
	i := s.turns[key] % len(pods)
	s.turns[key] = i + 1
	return pods[i]
}
