// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/appdeployment"
	"github.com/example/platform-operator/test/trafficsim"
)

// routedTimeout bounds a weighted release judged by the analysis: three
// steps of three measurements 5 s apart, and the rollouts around them.
const routedTimeout = 5 * time.Minute

// gatewayFor makes, in namespace ns, the Gateway edge of the traffic
// simulator's class (made once for the cluster) and the HTTPRoute shop
// whose rule web sends to the Service order-service.
func gatewayFor(t *testing.T, ns string) *gatewayv1.HTTPRoute {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: trafficsim.GatewayClassName},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: trafficsim.ControllerName}}
	if err := cluster.Client.Create(ctx, class); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: trafficsim.GatewayClassName,
			Listeners: []gatewayv1.Listener{{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80}}}}
	g.Expect(cluster.Client.Create(ctx, gw)).To(Succeed())
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}}},
			Rules: []gatewayv1.HTTPRouteRule{{Name: ptr.To[gatewayv1.SectionName]("web"),
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{
						Name: "order-service", Port: ptr.To[gatewayv1.PortNumber](8080)}}}}}},
		}}
	g.Expect(cluster.Client.Create(ctx, route)).To(Succeed())
	return route
}

// weightedAnalysedApp is the design documents' manifest moved by weight on
// the HTTPRoute shop: 5 %, 25 % and 50 %, each judged by the analysis.
func weightedAnalysedApp(ns string) *platformv1.AppDeployment {
	return analysedApp(ns, func(ad *platformv1.AppDeployment) {
		ad.Spec.Port = 8080
		ad.Spec.Strategy.CanaryPercent = 0
		ad.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 5}, {Weight: 25}, {Weight: 50}}
		ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute = "shop"
	})
}

// TestTrafficRouting_AWeightedCanaryIsPromotedOnEvidence releases a canary
// at 5 %, 25 % and 50 % of the requests on three replicas, through the
// route the traffic simulator serves as a gateway: the route carries each
// step's weight exactly (one canary pod at 5 %), the stable Deployment
// keeps its three pods, the analysis measures the canary's own requests,
// and the promotion leaves the route as its owner wrote it but for the
// stable weight.
func TestTrafficRouting_AWeightedCanaryIsPromotedOnEvidence(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	ns := newNamespace(t)
	route := gatewayFor(t, ns)
	ad := weightedAnalysedApp(ns)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })

	seen := map[int32]bool{}
	got := &platformv1.AppDeployment{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(cluster.Client.Get(t.Context(), keyOf(ad), got)).To(Succeed())
		if c := got.Status.Canary; c != nil && c.Step != nil && c.Step.ReadyAt != nil && c.Weight != nil {
			// A started step: the route carries its weight, accepted.
			g.Expect(c.Route.Accepted).To(Equal(metav1.ConditionTrue))
			seen[ptr.Deref(c.Weight.Actual, -1)] = true
			if ptr.Deref(c.Weight.Desired, 0) == 5 {
				g.Expect(c.Replicas).To(HaveValue(Equal(int32(1))), "5% of 3 replicas is one canary pod")
				g.Expect(deployment(g, t, ns, "order-service").Spec.Replicas).To(HaveValue(Equal(int32(3))),
					"the stable Deployment keeps its size during a weighted step")
			}
		}
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
	}).WithTimeout(routedTimeout).WithPolling(250 * time.Millisecond).Should(Succeed())
	for _, w := range []int32{5, 25, 50} {
		if !seen[w] {
			t.Errorf("no started step showed the route at %d%% (saw %v)", w, seen)
		}
	}
	if o := got.Status.LastOutcome; o.Result != platformv1.OutcomePromoted {
		t.Fatalf("outcome %+v", o)
	}
	expectOnlyStableBackend(t, route)
}

// expectOnlyStableBackend waits until the route's rule sends every request
// to the stable Service alone: the canary's backendRef is gone with the
// canary, and everything else is as the route's owner wrote it.
func expectOnlyStableBackend(t *testing.T, route *gatewayv1.HTTPRoute) {
	t.Helper()
	cur := &gatewayv1.HTTPRoute{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(cluster.Client.Get(t.Context(), client.ObjectKeyFromObject(route), cur)).To(Succeed())
		refs := cur.Spec.Rules[0].BackendRefs
		g.Expect(refs).To(HaveLen(1), "the canary's backendRef goes with the canary")
		g.Expect(string(refs[0].Name)).To(Equal("order-service"))
		g.Expect(refs[0].Weight).To(HaveValue(Equal(int32(100))))
	}).WithTimeout(settleTimeout).Should(Succeed())
}

// TestTrafficRouting_ABadCanaryIsRolledBackAtItsFirstWeight releases a
// canary whose version fails a tenth of its requests: measured on the
// requests the route sends it at 5 %, it is rolled back there, never
// given more, and the route sends everything to the stable pods again.
func TestTrafficRouting_ABadCanaryIsRolledBackAtItsFirstWeight(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	ns := newNamespace(t)
	route := gatewayFor(t, ns)
	ad := weightedAnalysedApp(ns)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) {
		got.Spec.Image = imageBad
	})

	desired := map[int32]bool{}
	var samples []string
	got := &platformv1.AppDeployment{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(cluster.Client.Get(t.Context(), keyOf(ad), got)).To(Succeed())
		if c := got.Status.Canary; c != nil && c.Weight != nil {
			desired[ptr.Deref(c.Weight.Desired, -1)] = true
			if a := c.Analysis; a != nil {
				for _, cs := range a.Criteria {
					if cs.LastResult == platformv1.MeasurementFail {
						samples = append(samples, cs.Message)
					}
				}
			}
		}
		g.Expect(got.Status.LastOutcome.Result).To(Equal(platformv1.OutcomeRolledBack), got.Status.Message)
		g.Expect(got.Status.Canary).To(BeNil())
	}).WithTimeout(routedTimeout).WithPolling(250 * time.Millisecond).Should(Succeed())
	if o := got.Status.LastOutcome; o.Reason != appdeployment.ReasonAnalysisFailed || got.Status.StableVersion != v123 {
		t.Fatalf("outcome %+v, stable %s", o, got.Status.StableVersion)
	}
	if len(desired) != 1 || !desired[5] {
		t.Errorf("weights asked for during the canary: %v, want only 5", desired)
	}
	// The failing measurements counted the canary's own requests: n > 0.
	if len(samples) == 0 || !strings.Contains(samples[0], "(n=") || strings.Contains(samples[0], "(n=0)") {
		t.Errorf("failing measurements %q, want the canary's own requests counted", samples)
	}
	expectOnlyStableBackend(t, route)
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(deployment(g, t, ns, "order-service-canary")).To(BeNil())
	}).WithTimeout(settleTimeout).Should(Succeed())
}

// TestTrafficRouting_ARouteNobodyServesPausesTheCanary attaches the route
// to a Gateway of a class no controller serves: no gateway ever accepts
// the canary's weight, so its first step never starts; the release pauses
// with RouteNotAccepted, which `kubectl appdeploy status` exits 3 on.
func TestTrafficRouting_ARouteNobodyServesPausesTheCanary(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nowhere"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "served-by-nobody",
			Listeners: []gatewayv1.Listener{{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80}}}}
	g.Expect(cluster.Client.Create(ctx, gw)).To(Succeed())
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "nowhere"}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: "order-service", Port: ptr.To[gatewayv1.PortNumber](8080)}}}}}},
		}}
	g.Expect(cluster.Client.Create(ctx, route)).To(Succeed())
	ad := app(ns, func(ad *platformv1.AppDeployment) {
		ad.Spec.Port = 8080
		ad.Spec.Strategy.CanaryPercent = 0
		ad.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 10, PauseSeconds: ptr.To[int32](5)}}
		ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute = "shop"
	})
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })

	got := waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseRouteNotAccepted), got.Status.Message)
	})
	if c := got.Status.Canary; c == nil || c.Step == nil || c.Step.ReadyAt != nil ||
		c.Route.Accepted == metav1.ConditionTrue {
		t.Fatalf("canary %+v: want its first step not started, the route not accepted", c)
	}
	stdout, stderr, code := runPlugin(t, "kubectl-appdeploy", ns, "status", ad.Name)
	if code != 3 {
		t.Fatalf("status exited %d, want 3 (paused)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestTrafficRouting_AHeaderRouteSendsOnlyTheTestersToTheCanary releases a
// canary whose step, at 5 % and waiting for approval, also sends the
// requests carrying X-Canary: always to the canary alone: while the step
// lasts the route carries, after its owner's rule, one with that rule's
// matches and the header, backed by the canary Service only; Prometheus
// sees the testers' requests on the canary pods and none on the stable
// ones; the promotion removes the rule, and the route is its owner's again
// but for the stable weight.
func TestTrafficRouting_AHeaderRouteSendsOnlyTheTestersToTheCanary(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	ctx := t.Context()
	ns := newNamespace(t)
	route := gatewayFor(t, ns)
	tester := platformv1.HeaderMatch{Name: "X-Canary", Value: "always"}
	ad := app(ns, func(ad *platformv1.AppDeployment) {
		ad.Spec.Port = 8080
		ad.Spec.Strategy.CanaryPercent = 0
		ad.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 5, Approval: platformv1.ApprovalManual,
			HeaderRoute: platformv1.HeaderRoute{Matches: []platformv1.HeaderMatch{tester}}}}
		ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute = route.Name
	})
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		c := got.Status.Canary
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Step).NotTo(BeNil())
		g.Expect(c.Step.ReadyAt).NotTo(BeNil(), "the step started: %s; route %+v", got.Status.Message, c.Route)
	})

	cur := &gatewayv1.HTTPRoute{}
	g := NewWithT(t)
	g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(route), cur)).To(Succeed())
	g.Expect(cur.Spec.Rules).To(HaveLen(2), "the owner's rule and the step's header rule")
	header := cur.Spec.Rules[1]
	g.Expect(header.Matches).To(HaveLen(1))
	g.Expect(header.Matches[0].Headers).To(ConsistOf(And(
		HaveField("Name", gatewayv1.HTTPHeaderName("X-Canary")), HaveField("Value", "always"))))
	g.Expect(header.BackendRefs).To(ConsistOf(HaveField("Name", gatewayv1.ObjectName("order-service-canary"))),
		"the header rule sends to the canary alone")

	byTrack := fmt.Sprintf(`sum by (track) (%s{namespace=%q})`, trafficsim.HeaderRequestsMetric, ns)
	g.Eventually(func(g Gomega) {
		v, err := prometheus.Query(ctx, byTrack)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(v).To(HaveLen(1), "the testers' requests reach one track")
		g.Expect(string(v[0].Metric["track"])).To(Equal(platformv1.TrackCanary))
		g.Expect(float64(v[0].Value)).To(BeNumerically(">=", 3), "a few seconds of the testers' requests")
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())

	request(t, ad, platformv1.PromoteAnnotation)
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
	})
	expectOnlyStableBackend(t, route)
	g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(route), cur)).To(Succeed())
	g.Expect(cur.Spec.Rules).To(HaveLen(1), "the header rule goes with the step")
}
