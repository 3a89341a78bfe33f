// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/httproute"
)

// shopRoute is a platform team's HTTPRoute: the rule checkout sends to the
// application's Service behind a header filter, the rule search to another
// application.
func shopRoute(ns, name string) *gatewayv1.HTTPRoute {
	ref := func(svc string) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](8080)}}}
	}
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}}},
			Hostnames:       []gatewayv1.Hostname{"shop.example.com"},
			Rules: []gatewayv1.HTTPRouteRule{
				{
					Name: ptr.To[gatewayv1.SectionName]("checkout"),
					Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
						Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/checkout")}}},
					Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
						RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Shop", Value: "1"}}}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{ref("order-service")},
				},
				{Name: ptr.To[gatewayv1.SectionName]("search"), BackendRefs: []gatewayv1.HTTPBackendRef{ref("search")}},
			},
		},
	}
}

// weightedApp is the design documents' application released by weight on
// the HTTPRoute route: 5 % then 50 %, each step waiting for promote.
func weightedApp(t *testing.T, ns, route string) *platformv1.AppDeployment {
	ad := sampleApp(t, ns)
	ad.Spec.Port = 8080
	ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyCanary,
		Steps:          []platformv1.CanaryStep{{Weight: 5}, {Weight: 50}},
		TrafficRouting: platformv1.TrafficRouting{GatewayAPI: platformv1.GatewayAPIRouting{HTTPRoute: route}}}
	return ad
}

// TestAppDeployment_TrafficRoutingNeedsTheRightToUpdateTheRoute plays a
// tenant who may write AppDeployments and read HTTPRoutes in a namespace,
// but update only a route of their own: naming the platform's route would
// have the operator rewrite its weights for them.
func TestAppDeployment_TrafficRoutingNeedsTheRightToUpdateTheRoute(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8sClient.Create(ctx, shopRoute(ns, "shop"))).To(Succeed())
	readRoutes := rbacv1.PolicyRule{APIGroups: []string{gatewayv1.GroupName}, Resources: []string{"httproutes"},
		Verbs: []string{"get", "list", "watch"}}
	ownRoute := rbacv1.PolicyRule{APIGroups: []string{gatewayv1.GroupName}, Resources: []string{"httproutes"},
		Verbs: []string{"update", "patch"}, ResourceNames: []string{"mine"}}
	mallory := userClient(t, ns, "mallory", []rbacv1.PolicyRule{appRule, deploymentRule, readRoutes, ownRoute})

	err := mallory.Create(ctx, weightedApp(t, ns, "shop"))
	g.Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(),
		"create naming the platform's route: %v", err)
	g.Expect(err.Error()).To(And(ContainSubstring("spec.strategy.trafficRouting.gatewayAPI.httpRoute"),
		ContainSubstring("update httproutes")))
	t.Logf("create refused: %v", err)

	g.Expect(k8sClient.Create(ctx, shopRoute(ns, "mine"))).To(Succeed())
	own := weightedApp(t, ns, "mine")
	g.Expect(mallory.Create(ctx, own)).To(Succeed())
	g.Eventually(func() error {
		cur := &platformv1.AppDeployment{}
		if err := mallory.Get(ctx, client.ObjectKeyFromObject(own), cur); err != nil {
			return err
		}
		cur.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute = "shop"
		err := mallory.Update(ctx, cur)
		if apierrors.IsConflict(err) {
			return err
		}
		if err == nil || !strings.Contains(err.Error(), "spec.strategy.trafficRouting.gatewayAPI.httpRoute") {
			t.Errorf("changing the route to one mallory may not update: %v", err)
		}
		return nil
	}, timeout, poll).Should(Succeed())
}

// TestAppDeployment_AWeightedCanaryWritesOnlyTheWeightsOfItsRule releases a
// canary by weight on a route whose owner keeps writing it: the operator
// sets the weights of the rule that sends to the application's Service once
// the canary's pod is ready, leaves every other field and rule as the owner
// wrote them, survives the owner's concurrent writes, and counts the step as
// started only once the gateway has accepted the route's generation.
func TestAppDeployment_AWeightedCanaryWritesOnlyTheWeightsOfItsRule(t *testing.T) {
	t.Parallel() // waits in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	route := shopRoute(ns, "shop")
	g.Expect(k8sClient.Create(ctx, route)).To(Succeed())
	ad := weightedApp(t, ns, "shop")
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	g.Eventually(func(g Gomega) { rollOut(g, getDeployment(g, ns, "order-service")) }, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Status.Phase).To(Equal(platformv1.PhaseHealthy))
		stable := &corev1.Service{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "order-service"}, stable)).To(Succeed())
		g.Expect(stable.Spec.Selector).To(HaveKeyWithValue(platformv1.TrackLabel, platformv1.TrackStable))
		canarySvc := &corev1.Service{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "order-service-canary"}, canarySvc)).To(Succeed())
		g.Expect(canarySvc.Spec.Selector).To(HaveKeyWithValue(platformv1.TrackLabel, platformv1.TrackCanary))
	}, timeout, poll).Should(Succeed())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(route), route)).To(Succeed())
	g.Expect(route.Generation).To(Equal(int64(1)), "the first release wrote the route")

	g.Eventually(func() error {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		got.Spec.Image = canaryImage
		return k8sClient.Update(ctx, got)
	}, timeout, poll).Should(Succeed())
	var canary *appsv1.Deployment
	g.Eventually(func(g Gomega) {
		canary = getDeployment(g, ns, "order-service-canary")
		g.Expect(canary.Spec.Replicas).To(HaveValue(Equal(int32(1))), "5%% of 3 is one pod, at least one")
		g.Expect(getDeployment(g, ns, "order-service").Spec.Replicas).To(HaveValue(Equal(int32(3))),
			"the stable Deployment keeps its size during a weighted step")
	}, timeout, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		cur := &gatewayv1.HTTPRoute{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(route), cur)).To(Succeed())
		g.Expect(cur.Generation).To(Equal(int64(1)), "the route changed before a canary pod was ready")
	}, 2*time.Second, poll).Should(Succeed())

	// The route's owner keeps editing it while the canary's pod turns ready.
	stopOwner := make(chan struct{})
	ownerDone := make(chan int)
	go func() {
		edits := 0
		defer func() { ownerDone <- edits }()
		for {
			select {
			case <-stopOwner:
				return
			case <-time.After(20 * time.Millisecond):
			}
			cur := &gatewayv1.HTTPRoute{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(route), cur); err != nil {
				continue
			}
			edit := gatewayv1.Hostname("edit-" + time.Now().Format("150405.000") + ".example.com")
			cur.Spec.Hostnames = []gatewayv1.Hostname{"shop.example.com", edit}
			if k8sClient.Update(ctx, cur) == nil {
				edits++
			}
		}
	}()
	rs := replicaSet(ns, "order-service-canary-7c9b6d8f5", canary.Spec.Template.Labels, canary)
	g.Expect(k8sClient.Create(ctx, rs)).To(Succeed())
	createPodWithStatus(g, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns,
		Name:   "order-service-canary-7c9b6d8f5-a1b2c",
		Labels: maps.Clone(rs.Labels), OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs,
			appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}}}, true, "")

	cur := &gatewayv1.HTTPRoute{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(route), cur)).To(Succeed())
		refs := cur.Spec.Rules[0].BackendRefs
		g.Expect(refs).To(HaveLen(2))
		g.Expect(string(refs[0].Name)).To(Equal("order-service"))
		g.Expect(refs[0].Weight).To(HaveValue(Equal(int32(95))))
		g.Expect(string(refs[1].Name)).To(Equal("order-service-canary"))
		g.Expect(refs[1].Weight).To(HaveValue(Equal(int32(5))))
		g.Expect(refs[1].Port).To(HaveValue(Equal(gatewayv1.PortNumber(8080))))
	}, timeout, poll).Should(Succeed())
	close(stopOwner)
	edits := <-ownerDone
	t.Logf("the owner wrote the route %d times meanwhile", edits)
	g.Expect(edits).To(BeNumerically(">", 0))
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(route), cur)).To(Succeed())
	g.Expect(cur.Spec.Hostnames).To(HaveLen(2), "the owner's last hostnames were lost")
	g.Expect(cur.Spec.Rules[0].Filters).To(Equal(route.Spec.Rules[0].Filters), "the rule's filters changed")
	g.Expect(cur.Spec.Rules[0].Matches).To(Equal(route.Spec.Rules[0].Matches), "the rule's matches changed")
	g.Expect(cur.Spec.Rules[1]).To(Equal(route.Spec.Rules[1]), "the rule of another application changed")

	// No gateway has said anything: the step has not started.
	got := getApp(g, client.ObjectKeyFromObject(ad))
	g.Expect(got.Status.Canary).NotTo(BeNil())
	g.Expect(got.Status.Canary.Step.ReadyAt).To(BeNil(), "the step started before the gateway accepted the route")
	g.Expect(got.Status.Canary.Weight.Actual).To(HaveValue(Equal(int32(5))), "the weight read back from the route")
	g.Expect(got.Status.Canary.Route.Name).To(Equal("shop"))
	g.Expect(got.Status.Canary.Route.Rules).To(Equal([]string{"checkout"}))

	// The gateway accepts the route as it now is: the step starts (and,
	// needing approval, waits for promote).
	g.Eventually(func() error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(route), cur); err != nil {
			return err
		}
		cond := func(typ string) metav1.Condition {
			return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ, ObservedGeneration: cur.Generation,
				LastTransitionTime: metav1.Now()}
		}
		cur.Status.Parents = []gatewayv1.RouteParentStatus{{ParentRef: gatewayv1.ParentReference{Name: "edge"},
			ControllerName: "example.com/edge", Conditions: []metav1.Condition{cond("Accepted"), cond("ResolvedRefs")}}}
		return k8sClient.Status().Update(ctx, cur)
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Canary).NotTo(BeNil())
		g.Expect(got.Status.Canary.Step.ReadyAt).NotTo(BeNil(), got.Status.Message)
		g.Expect(got.Status.Canary.Route.Accepted).To(Equal(metav1.ConditionTrue))
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseApproval), got.Status.Message)
	}, timeout, poll).Should(Succeed())
}

// TestAppDeployment_AHeaderRouteThatWouldOverflowTheRouteIsRefused names a
// route with nine rules to the application: a header route would add nine
// more, past the Gateway API's sixteen, which admission refuses naming the
// step.
func TestAppDeployment_AHeaderRouteThatWouldOverflowTheRouteIsRefused(t *testing.T) {
	t.Parallel() // a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	route := shopRoute(ns, "shop")
	route.Spec.Rules = route.Spec.Rules[:1]
	for i := range 8 {
		r := *route.Spec.Rules[0].DeepCopy()
		r.Name = ptr.To(gatewayv1.SectionName("checkout-" + string(rune('a'+i))))
		route.Spec.Rules = append(route.Spec.Rules, r)
	}
	g.Expect(k8sClient.Create(ctx, route)).To(Succeed())
	ad := weightedApp(t, ns, "shop")
	ad.Spec.Strategy.Steps[1].HeaderRoute = platformv1.HeaderRoute{
		Matches: []platformv1.HeaderMatch{{Name: "X-Canary", Value: "always"}}}
	err := k8sClient.Create(ctx, ad)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "create: %v", err)
	g.Expect(err.Error()).To(And(ContainSubstring("spec.strategy.steps[1].headerRoute"),
		ContainSubstring("18 rules, more than the Gateway API's 16")))
	t.Logf("refused: %v", err)

	// Naming four of the rules, the header rules fit.
	ad.Spec.Strategy.TrafficRouting.GatewayAPI.Rules = []string{"checkout", "checkout-a", "checkout-b", "checkout-c"}
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
}

// TestHTTPRoute_HeaderRulesReadBackAsWritten writes the header rules of a
// step to a route, as the operator does, and reads the route back: the
// API server defaults the CRD's fields (a backendRef's group, kind and
// weight), and the rules must still be the step's, or the operator would
// rewrite them on every pass and never start the step.
func TestHTTPRoute_HeaderRulesReadBackAsWritten(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	route := shopRoute(ns, "shop")
	g.Expect(k8sClient.Create(ctx, route)).To(Succeed())
	b := httproute.Backends{Stable: "order-service", Canary: "order-service-canary"}
	rules, err := httproute.Targets(route, nil, b)
	g.Expect(err).NotTo(HaveOccurred())
	headers := []gatewayv1.HTTPHeaderMatch{{Type: ptr.To(gatewayv1.HeaderMatchExact), Name: "X-Canary", Value: "always"}}

	g.Expect(httproute.SetHeaderRules(route, rules, b, "order-service", headers)).To(BeTrue())
	g.Expect(k8sClient.Update(ctx, route)).To(Succeed())
	stored := &gatewayv1.HTTPRoute{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(route), stored)).To(Succeed())
	g.Expect(stored.Spec.Rules).To(HaveLen(3), "checkout, its header rule, search")
	g.Expect(httproute.HasHeaderRules(stored, rules, b, "order-service", headers)).To(BeTrue(),
		"the header rule as stored: %+v", stored.Spec.Rules[1])

	// Without headers they go, and the route is its owner's again.
	g.Expect(httproute.SetHeaderRules(stored, rules, b, "order-service", nil)).To(BeTrue())
	g.Expect(k8sClient.Update(ctx, stored)).To(Succeed())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(route), stored)).To(Succeed())
	g.Expect(stored.Spec.Rules).To(HaveLen(2))
	g.Expect(httproute.HeaderRules(stored, "order-service")).To(BeZero())
}
