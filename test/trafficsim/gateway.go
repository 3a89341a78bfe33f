// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package trafficsim

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The simulator plays the gateway, as kwok plays the kubelets: it is the
// controller of every GatewayClass whose controllerName is ControllerName
// (make run installs one, GatewayClassName), and writes the status a gateway
// would on those classes, their Gateways and the HTTPRoutes attached to
// them. Of the Gateway API it follows exactly this (each with a test):
//
//   - a GatewayClass of ControllerName gets Accepted=True;
//   - a Gateway of such a class gets Accepted=True and Programmed=True;
//   - an HTTPRoute gets, for each parentRef naming such a Gateway (kind
//     Gateway, the route's namespace unless one is given), a status.parents
//     entry with controllerName ControllerName and the conditions Accepted
//     (True) and ResolvedRefs (True when every backendRef of every rule names
//     a Service that exists in the route's namespace, else False with reason
//     BackendNotFound), each with observedGeneration the route's generation;
//     entries of other controllers are kept;
//   - nothing else: no listeners, hostnames, addresses, ReferenceGrants or
//     attachment limits are checked, and status is written only when it
//     changes.
const (
	// ControllerName is the GatewayClass controllerName the simulator
	// serves.
	ControllerName = "platform.example.com/trafficsim"
	// GatewayClassName is the class make run installs.
	GatewayClassName = "platform-sim"
)

// GatewayScheme registers the kinds the simulator reads and writes as a
// gateway.
func GatewayScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := gatewayv1.Install(s); err != nil {
		return nil, err
	}
	return s, nil
}

// RouteParents returns the status.parents of route as the simulator writes
// them: the entries of other controllers as they are, and one for each
// parentRef that names a Gateway of a served class (served reports whether
// the Gateway namespace/name is one), judged by services (whether a Service
// of that name exists in the route's namespace). now stamps a condition
// that changes.
func RouteParents(route *gatewayv1.HTTPRoute, served func(namespace, name string) bool,
	services func(name string) bool, now metav1.Time) []gatewayv1.RouteParentStatus {
	out := make([]gatewayv1.RouteParentStatus, 0, len(route.Status.Parents)+len(route.Spec.ParentRefs))
	for _, p := range route.Status.Parents {
		if p.ControllerName != ControllerName {
			out = append(out, p)
		}
	}
	resolved, reason, msg := metav1.ConditionTrue, string(gatewayv1.RouteReasonResolvedRefs), "every backendRef resolves"
	for _, rule := range route.Spec.Rules {
		for _, ref := range rule.BackendRefs {
			o := ref.BackendObjectReference
			if ptr.Deref(o.Kind, "Service") != "Service" || ptr.Deref(o.Group, "") != "" ||
				string(ptr.Deref(o.Namespace, gatewayv1.Namespace(route.Namespace))) != route.Namespace ||
				!services(string(o.Name)) {
				resolved, reason = metav1.ConditionFalse, string(gatewayv1.RouteReasonBackendNotFound)
				msg = fmt.Sprintf("backendRef %s: no Service of that name in namespace %s", o.Name, route.Namespace)
			}
		}
	}
	for _, ref := range route.Spec.ParentRefs {
		ns := string(ptr.Deref(ref.Namespace, gatewayv1.Namespace(route.Namespace)))
		if ptr.Deref(ref.Group, gatewayv1.GroupName) != gatewayv1.GroupName || ptr.Deref(ref.Kind, "Gateway") != "Gateway" ||
			!served(ns, string(ref.Name)) {
			continue
		}
		var old []metav1.Condition
		for _, p := range route.Status.Parents {
			if p.ControllerName == ControllerName && equality.Semantic.DeepEqual(p.ParentRef, ref) {
				old = p.Conditions
			}
		}
		conds := append([]metav1.Condition(nil), old...)
		meta.SetStatusCondition(&conds, metav1.Condition{Type: string(gatewayv1.RouteConditionAccepted),
			Status: metav1.ConditionTrue, Reason: string(gatewayv1.RouteReasonAccepted),
			Message: "accepted by the traffic simulator", ObservedGeneration: route.Generation, LastTransitionTime: now})
		meta.SetStatusCondition(&conds, metav1.Condition{Type: string(gatewayv1.RouteConditionResolvedRefs), Status: resolved,
			Reason: reason, Message: msg, ObservedGeneration: route.Generation, LastTransitionTime: now})
		out = append(out, gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: ControllerName, Conditions: conds})
	}
	return out
}

// gatewayConditions sets the conditions the simulator writes on a served
// object: each of kinds True with its own name as reason.
func gatewayConditions(conds []metav1.Condition, gen int64, now metav1.Time, kinds ...string) []metav1.Condition {
	out := append([]metav1.Condition(nil), conds...)
	for _, t := range kinds {
		meta.SetStatusCondition(&out, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t,
			Message: "the traffic simulator plays this gateway", ObservedGeneration: gen, LastTransitionTime: now})
	}
	return out
}

// gatewayPass writes, once, the status of every served GatewayClass and
// Gateway and of every HTTPRoute attached to one, where it differs from
// what the simulator would write, and returns those routes. c reads through
// the simulator's cache and writes to the API server.
func gatewayPass(ctx context.Context, c client.Client) ([]gatewayv1.HTTPRoute, error) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	var classes gatewayv1.GatewayClassList
	if err := c.List(ctx, &classes); err != nil {
		return nil, err
	}
	servedClass := map[string]bool{}
	for i := range classes.Items {
		gc := &classes.Items[i]
		if gc.Spec.ControllerName != ControllerName {
			continue
		}
		servedClass[gc.Name] = true
		conds := gatewayConditions(gc.Status.Conditions, gc.Generation, now,
			string(gatewayv1.GatewayClassConditionStatusAccepted))
		if !equality.Semantic.DeepEqual(conds, gc.Status.Conditions) {
			gc.Status.Conditions = conds
			if err := c.Status().Update(ctx, gc); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
				return nil, err
			}
		}
	}
	var gateways gatewayv1.GatewayList
	if err := c.List(ctx, &gateways); err != nil {
		return nil, err
	}
	servedGateway := map[string]bool{}
	for i := range gateways.Items {
		gw := &gateways.Items[i]
		if !servedClass[string(gw.Spec.GatewayClassName)] {
			continue
		}
		servedGateway[gw.Namespace+"/"+gw.Name] = true
		conds := gatewayConditions(gw.Status.Conditions, gw.Generation, now,
			string(gatewayv1.GatewayConditionAccepted), string(gatewayv1.GatewayConditionProgrammed))
		if !equality.Semantic.DeepEqual(conds, gw.Status.Conditions) {
			gw.Status.Conditions = conds
			if err := c.Status().Update(ctx, gw); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
				return nil, err
			}
		}
	}
	var routes gatewayv1.HTTPRouteList
	if err := c.List(ctx, &routes); err != nil {
		return nil, err
	}
	var served []gatewayv1.HTTPRoute
	for i := range routes.Items {
		r := &routes.Items[i]
		for _, p := range r.Spec.ParentRefs {
			ns := string(ptr.Deref(p.Namespace, gatewayv1.Namespace(r.Namespace)))
			if servedGateway[ns+"/"+string(p.Name)] {
				served = append(served, *r)
				break
			}
		}
		parents := RouteParents(r, func(ns, name string) bool { return servedGateway[ns+"/"+name] },
			func(name string) bool {
				err := c.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, &corev1.Service{})
				return err == nil
			}, now)
		if equality.Semantic.DeepEqual(parents, r.Status.Parents) {
			continue
		}
		r.Status.Parents = parents
		if err := c.Status().Update(ctx, r); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return nil, err
		}
	}
	return served, nil
}

// syncRouting gives the simulator the served routes and the Services'
// selectors, for the routed traffic.
func (s *Simulator) syncRouting(ctx context.Context, c client.Client, served []gatewayv1.HTTPRoute) error {
	var services corev1.ServiceList
	if err := c.List(ctx, &services); err != nil {
		return err
	}
	selectors := make(map[types.NamespacedName]labels.Selector, len(services.Items))
	for i := range services.Items {
		svc := &services.Items[i]
		if len(svc.Spec.Selector) > 0 {
			selectors[types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}] = labels.SelectorFromSet(svc.Spec.Selector)
		}
	}
	s.mu.Lock()
	known := maps.Clone(s.routes)
	s.services = selectors
	s.mu.Unlock()
	for i := range served {
		s.SetRoute(&served[i], true)
		delete(known, types.NamespacedName{Namespace: served[i].Namespace, Name: served[i].Name})
	}
	for key := range known {
		s.SetRoute(&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}, false)
	}
	return nil
}

// gatewayPoll is how often the simulator writes the gateways' status.
const gatewayPoll = 250 * time.Millisecond

// servesGateways reports whether the cluster serves the Gateway API's
// HTTPRoute; without it the simulator plays no gateway.
func servesGateways(cfg *rest.Config) (bool, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return false, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return false, err
	}
	httpRoute := schema.GroupKind{Group: gatewayv1.GroupName, Kind: "HTTPRoute"}
	_, err = mapper.RESTMapping(httpRoute, gatewayv1.GroupVersion.Version)
	switch {
	case meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// playGateways writes the gateways' status every gatewayPoll until ctx
// ends, reading through a cache of its own; it returns at once when the
// cluster serves no HTTPRoute.
func (s *Simulator) playGateways(ctx context.Context, cfg *rest.Config) error {
	ok, err := servesGateways(cfg)
	if err != nil || !ok {
		return err
	}
	scheme, err := GatewayScheme()
	if err != nil {
		return err
	}
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return fmt.Errorf("create the gateway cache: %w", err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme, Cache: &client.CacheOptions{Reader: c}})
	if err != nil {
		return err
	}
	watched := []client.Object{&gatewayv1.GatewayClass{}, &gatewayv1.Gateway{}, &gatewayv1.HTTPRoute{}, &corev1.Service{}}
	for _, obj := range watched {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("watch %T: %w", obj, err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil
	}
	s.log.Info("Playing the gateways of class controller " + ControllerName)
	t := time.NewTicker(gatewayPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			served, err := gatewayPass(ctx, cl)
			if err == nil {
				err = s.syncRouting(ctx, cl, served)
			}
			if err != nil && ctx.Err() == nil {
				s.log.Info("Playing the gateways failed; trying again", "error", err.Error())
			}
		}
	}
}
