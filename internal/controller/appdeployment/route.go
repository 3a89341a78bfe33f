// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/httproute"
	"github.com/example/platform-operator/internal/release"
)

// The route is read past the cache and not watched: watching every
// HTTPRoute of the cluster to follow a few would cache what their owners
// chose to write. A pass that waits on a route asks for another after
// routePoll; a running weighted canary reads its route at least every
// routeRecheck, so that weights someone else changed are set back.
const (
	routePoll    = time.Second
	routeRecheck = 10 * time.Second
)

// DefaultRouteAcceptTimeout is how long a weighted canary waits for the
// gateways to accept the weights it wrote before it says so with the pause
// reason RouteNotAccepted (Reconciler.RouteAcceptTimeout). A gateway that
// refuses the route is said at once.
const DefaultRouteAcceptTimeout = 30 * time.Second

// routeObservation is the HTTPRoute of a weighted canary as a pass read it.
type routeObservation struct {
	// route is the HTTPRoute, read past the cache; nil when problem is set.
	route *gatewayv1.HTTPRoute
	// rules are the indexes of its targeted rules.
	rules []int
	// problem says why the route cannot carry the canary: it is missing, or
	// no rule sends to the stable Service, or the cluster has no HTTPRoute.
	problem string
	// backends are the application's Services the rules send to.
	backends httproute.Backends
	// weight is the canary's share the route carries; accepted and message
	// what its gateways say of its current generation.
	weight   int32
	accepted metav1.ConditionStatus
	message  string
}

// weightedSpec reports whether ad moves its canary's requests by weight on
// a route.
func weightedSpec(ad *platformv1.AppDeployment) bool {
	return ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute != ""
}

// backends are the application's two Services: the stable pods', and the
// canary's or a blue-green release's preview's.
func backends(ad *platformv1.AppDeployment) httproute.Backends {
	return httproute.Backends{Stable: ad.Name, Canary: ad.Name + release.Suffix(&ad.Spec.Strategy)}
}

// observeRoute reads the HTTPRoute a weighted canary moves, past the cache:
// routes belong to their owners, and caching every route of the cluster to
// read a few would cost what the owners chose.
func (r *Reconciler) observeRoute(ctx context.Context, ad *platformv1.AppDeployment, obs *observation) error {
	if !weightedSpec(ad) {
		return nil
	}
	g := ad.Spec.Strategy.TrafficRouting.GatewayAPI
	ro := &routeObservation{accepted: metav1.ConditionUnknown, backends: backends(ad)}
	obs.route = ro
	if !r.GatewayAPI {
		ro.problem = "the cluster serves no HTTPRoute (gateway.networking.k8s.io/v1): install the Gateway API CRDs, then restart the operator"
		return nil
	}
	route := &gatewayv1.HTTPRoute{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: g.HTTPRoute}, route)
	switch {
	case apierrors.IsNotFound(err):
		ro.problem = fmt.Sprintf("HTTPRoute %s not found in namespace %s", g.HTTPRoute, ad.Namespace)
		return nil
	case apierrors.IsForbidden(err):
		ro.problem = fmt.Sprintf("the operator may not read HTTPRoute %s: %v", g.HTTPRoute, err)
		return nil
	case err != nil:
		return fmt.Errorf("get HTTPRoute %s: %w", g.HTTPRoute, err)
	}
	rules, err := httproute.Targets(route, g.Rules, ro.backends)
	if err != nil {
		ro.problem = err.Error()
		return nil
	}
	ro.route, ro.rules = route, rules
	ro.note()
	return nil
}

// note reads the weight and the gateways' verdict off the route.
func (ro *routeObservation) note() {
	ro.weight = httproute.Weight(ro.route, ro.rules, ro.backends)
	ro.accepted, ro.message = httproute.Accepted(ro.route)
}

// weighted reports whether the pass moves the release's requests by weight
// on a route: a weighted canary's steps, or a blue-green release's switch
// (weights 0 and 100).
func (p *pass) weighted() bool { return p.progressive() && weightedSpec(p.ad) }

// weightedCanaryPods is the size of a weighted canary at a step: its
// canaryReplicas, else the weight's share of the replicas, at least one.
func (p *pass) weightedCanaryPods(step platformv1.CanaryStep) int32 {
	if step.CanaryReplicas > 0 {
		return step.CanaryReplicas
	}
	if p.replicas <= 0 {
		return 0
	}
	return max(int32(math.Ceil(float64(step.Weight)*float64(p.replicas)/100)), 1)
}

// routeCarries reports whether the route carries weight and the header
// rules of headers, accepted by its gateways.
func (p *pass) routeCarries(weight int32, headers []gatewayv1.HTTPHeaderMatch) bool {
	ro := p.obs.route
	return ro != nil && ro.problem == "" && ro.weight == weight && ro.accepted == metav1.ConditionTrue &&
		httproute.HasHeaderRules(ro.route, ro.rules, ro.backends, p.ad.Name, headers)
}

// stepCarried reports whether the route carries step i as the gateways
// accepted it.
func (p *pass) stepCarried(i int32) bool {
	return p.routeCarries(p.steps[i].Weight, stepHeaders(p.steps[i]))
}

// stepHeaders are a step's header matches in the Gateway API's shape.
func stepHeaders(step platformv1.CanaryStep) []gatewayv1.HTTPHeaderMatch {
	matches := step.HeaderRoute.Matches
	if len(matches) == 0 {
		return nil
	}
	out := make([]gatewayv1.HTTPHeaderMatch, 0, len(matches))
	for _, m := range matches {
		out = append(out, gatewayv1.HTTPHeaderMatch{
			Type: ptr.To(gatewayv1.HeaderMatchType(cmp.Or(m.Type, platformv1.HeaderMatchExact))),
			Name: gatewayv1.HTTPHeaderName(m.Name), Value: m.Value,
		})
	}
	return out
}

// routeAtZero reports whether the canary may go as far as the route is
// concerned: the route sends it nothing, as its gateways accepted, or there
// is no route to send it anything.
func (p *pass) routeAtZero() bool {
	ro := p.obs.route
	return ro == nil || ro.problem != "" || ro.weight == 0 && ro.accepted == metav1.ConditionTrue
}

// desiredRoute sets what the route's weights should be under the children
// c: the step's weight once the step's canary pods are ready, 0 when the
// canary is no longer wanted, and no canary backendRef once its Deployment
// is gone. A nil weight leaves the route as it is.
func (p *pass) desiredRoute(c *children, rec *record) {
	ro := p.obs.route
	if !p.weighted() || ro == nil || ro.problem != "" {
		return
	}
	switch {
	case p.running(rec) && c.canaryReplicas != nil:
		i := stepIndex(rec.canary)
		if i >= int32(len(p.steps)) {
			return // promoting: the canary keeps its share until it ends
		}
		if p.obs.ready(p.track(), p.revision) >= *c.canaryReplicas {
			c.routeWeight, c.headers = ptr.To(p.steps[i].Weight), stepHeaders(p.steps[i])
		}
	case p.obs.canary != nil:
		c.routeWeight = ptr.To[int32](0)
	case httproute.HasCanary(ro.route, ro.rules, ro.backends):
		c.routeWeight, c.dropCanaryRef = ptr.To[int32](0), true
	}
	switch {
	case c.routeWeight != nil && !p.routeCarries(*c.routeWeight, c.headers), c.dropCanaryRef:
		p.wakeAt(p.exact.Add(routePoll))
	case p.running(rec):
		p.wakeAt(p.exact.Add(routeRecheck))
	}
}

// noteRoute records in the canary's status the route as the pass read it
// and, while the step's pods are ready and the route does not carry the
// step's weight, since when the canary has waited for it.
func (p *pass) noteRoute(c *platformv1.CanaryStatus) {
	ro := p.obs.route
	if !p.running(&p.next) || ro == nil || c == nil {
		return
	}
	st := platformv1.RouteStatus{Name: p.ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute,
		Accepted: ro.accepted, Message: ro.message}
	if ro.problem != "" {
		st.Accepted, st.Message = metav1.ConditionFalse, ro.problem
	} else {
		st.Rules = httproute.RuleNames(ro.route, ro.rules)
	}
	if st.Accepted == metav1.ConditionTrue {
		st.Message = ""
	}
	if len(st.Message) > 1024 {
		st.Message = st.Message[:1021] + "..."
	}
	if p.waitingForRoute(c) {
		st.WaitingSince = c.Route.WaitingSince
		if st.WaitingSince == nil {
			now := p.now
			st.WaitingSince = &now
		}
	}
	c.Route = st
}

// waitingForRoute reports whether a weighted canary's step waits for the
// route alone: its pods are ready, the route does not carry its weight.
func (p *pass) waitingForRoute(c *platformv1.CanaryStatus) bool {
	i := stepIndex(c)
	return p.weighted() && c.Step != nil && c.Step.ReadyAt == nil && i < int32(len(p.steps)) &&
		!p.preflightPending(c) && p.obs.ready(p.track(), p.revision) >= p.canaryPods(i) &&
		!p.stepCarried(i)
}

// routePause says why a weighted canary's step cannot count as started:
// the route cannot carry it, a gateway refused it, or no gateway has
// accepted it within the timeout of the pods being ready.
func (p *pass) routePause(c *platformv1.CanaryStatus) string {
	ro := p.obs.route
	i := stepIndex(c)
	if !p.weighted() || ro == nil || c.Step == nil || c.Step.ReadyAt != nil || i >= int32(len(p.steps)) {
		return ""
	}
	switch {
	case ro.problem != "":
		return ro.problem
	case ro.accepted == metav1.ConditionFalse:
		return ro.message
	case !p.waitingForRoute(c):
		return ""
	}
	since := c.Route.WaitingSince
	timeout := cmp.Or(p.routeTimeout, DefaultRouteAcceptTimeout)
	if since != nil && p.now.Time.Before(since.Add(timeout)) {
		p.wakeAt(since.Add(timeout))
		return ""
	}
	if w := p.steps[i].Weight; ro.weight != w {
		return fmt.Sprintf("HTTPRoute %s gives the canary %d%%, not the step's %d%%", ro.route.Name, ro.weight, w)
	}
	if h := stepHeaders(p.steps[i]); !httproute.HasHeaderRules(ro.route, ro.rules, ro.backends, p.ad.Name, h) {
		return fmt.Sprintf("HTTPRoute %s lacks the step's header rules", ro.route.Name)
	}
	return fmt.Sprintf("%s (for %s)", ro.message, timeout)
}

// errRouteLimits is a route the operator will not write: it would exceed
// the Gateway API's limits, or the API server cannot keep what it needs.
type errRouteLimits struct{ error }

// reconcileRoute writes the weights the pass wants to the route: an update
// on the route's resourceVersion that changes only the targeted rules'
// backendRefs, read again and redone when someone else wrote the route in
// between.
func (r *Reconciler) reconcileRoute(ctx context.Context, ad *platformv1.AppDeployment, p *pass) error {
	ro, c := p.obs.route, &p.children
	if ro == nil || ro.route == nil || c.routeWeight == nil {
		return nil
	}
	b := backends(ad)
	route := ro.route.DeepCopy()
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(route), route); err != nil {
				return err
			}
		}
		first = false
		rules, err := httproute.Targets(route, ad.Spec.Strategy.TrafficRouting.GatewayAPI.Rules, b)
		if err != nil {
			return err
		}
		names := httproute.RuleNames(route, rules)
		weights := httproute.SetWeight(route, rules, b, *c.routeWeight, c.dropCanaryRef)
		headers := httproute.SetHeaderRules(route, rules, b, ad.Name, c.headers)
		if !weights && !headers {
			return nil
		}
		if err := httproute.CheckLimits(route); err != nil {
			return errRouteLimits{err}
		}
		if err := r.Update(ctx, route, client.FieldOwner(FieldManager)); err != nil {
			return err
		}
		if n := httproute.HeaderRules(route, ad.Name); len(c.headers) > 0 && n == 0 {
			// The API server dropped the rules' names: its HTTPRoute CRD
			// predates them (Gateway API v1.4), and header rules the
			// operator cannot find again would pile up.
			return errRouteLimits{fmt.Errorf("the installed HTTPRoute CRD drops rule names (Gateway API older than v1.4): " +
				"header routes need them; upgrade the Gateway API CRDs")}
		}
		ctrl.LoggerFrom(ctx).Info("Set the canary's weight on the HTTPRoute", "httproute", klog.KObj(route),
			"weight", *c.routeWeight, "rules", names, "headerRules", len(c.headers) > 0, "generation", route.Generation)
		return nil
	})
	var limits errRouteLimits
	switch {
	case errors.As(err, &limits):
		ro.problem = limits.Error()
		return nil
	case apierrors.IsForbidden(err):
		ro.problem = fmt.Sprintf("the operator may not update HTTPRoute %s: %v", route.Name, err)
		return nil
	case err != nil:
		return fmt.Errorf("set the weights of HTTPRoute %s: %w", route.Name, err)
	}
	ro.route = route
	ro.note()
	return nil
}
