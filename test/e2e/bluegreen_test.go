//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/appdeployment"
)

// Blue-green releases on the kwok cluster, judged by the suite's real
// Prometheus. The traffic simulator gives every ready pod that no routed
// Service fronts its requests, the preview's pods included (as testers
// and smoke tests reaching <name>-preview would): the pre-promotion
// analysis measures those, the post-promotion analysis the same pods once
// the Service <name> has switched to them.

// blueGreenApp is a blue-green release of three replicas in namespace ns,
// promoted 5 s after its preview is ready, its old pods kept 5 s after the
// switch, and judged by error_rate at most pre before the switch and at
// most post after it, measured every 5 s, twice.
func blueGreenApp(ns string, pre, post float64) *platformv1.AppDeployment {
	analysis := func(threshold float64) platformv1.BlueGreenAnalysis {
		return platformv1.BlueGreenAnalysis{
			Criteria: []platformv1.CanaryCriterion{{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(threshold)}},
			Analysis: platformv1.Analysis{IntervalSeconds: 5, MinMeasurements: 2},
		}
	}
	return app(ns, func(ad *platformv1.AppDeployment) {
		ad.Spec.Port = 8080
		ad.Spec.Rollback.ProviderErrorGraceSeconds = 10
		ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyBlueGreen, BlueGreen: platformv1.BlueGreenStrategy{
			AutoPromotionSeconds: ptr.To[int32](5), ScaleDownDelaySeconds: ptr.To[int32](5),
			PrePromotionAnalysis: analysis(pre), PostPromotionAnalysis: analysis(post),
		}}
	})
}

// serviceWatch follows which track the Service of a blue-green release
// selects, reading every 200 ms, and records each track in the order the
// Service selected it, and every reading where it selected a track whose
// Deployment (read just before) did not have every pod ready.
type serviceWatch struct {
	mu         sync.Mutex
	tracks     []string
	violations []string
}

// watchService starts a serviceWatch of the application ad until the test
// ends.
func watchService(t *testing.T, ad *platformv1.AppDeployment) *serviceWatch {
	sw := &serviceWatch{}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	replicas := ptr.Deref(ad.Spec.Replicas, 1)
	names := map[string]string{
		platformv1.TrackStable: ad.Name, platformv1.TrackPreview: ad.Name + platformv1.PreviewSuffix}
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			// The Service first: the track it selects was switched to
			// before the Deployments are read, so it was ready then, and
			// its pods (which this test never fails) are ready still. Read
			// the other way round, on a busy machine a track could become
			// ready and be switched to between the two reads, and its
			// earlier count would read as a switch too early.
			svc := &corev1.Service{}
			if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: ad.Name}, svc); err == nil {
				ready := map[string]int32{}
				for track, name := range names {
					d := &appsv1.Deployment{}
					if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: name}, d); err == nil {
						ready[track] = d.Status.ReadyReplicas
					}
				}
				// And the Service again: switched away meanwhile (the
				// preview's pods then go), the sample shows the counts of
				// a track the Service no longer selects, and says nothing.
				again := &corev1.Service{}
				track := svc.Spec.Selector[platformv1.TrackLabel]
				if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(svc), again); err == nil &&
					again.Spec.Selector[platformv1.TrackLabel] == track {
					sw.see(track, ready, replicas)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return sw
}

func (sw *serviceWatch) see(track string, ready map[string]int32, replicas int32) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if n := len(sw.tracks); n == 0 || sw.tracks[n-1] != track {
		sw.tracks = append(sw.tracks, track)
	}
	if ready[track] < replicas {
		sw.violations = append(sw.violations, fmt.Sprintf("the Service selected the %s pods with %d of %d ready",
			track, ready[track], replicas))
	}
}

// expectSwitchedThereAndBack waits until the watch has seen the Service
// select the stable pods, the preview's, then the stable pods again (it
// reads every 200 ms: the preview may go a moment after the switch back),
// and fails the test on any violation.
func (sw *serviceWatch) expectSwitchedThereAndBack(t *testing.T) {
	t.Helper()
	want := []string{platformv1.TrackStable, platformv1.TrackPreview, platformv1.TrackStable}
	NewWithT(t).Eventually(func(g Gomega) {
		tracks, _ := sw.seen()
		g.Expect(tracks).To(Equal(want), "the tracks the Service selected in turn")
	}).WithTimeout(10 * time.Second).Should(Succeed())
	if _, violations := sw.seen(); len(violations) > 0 {
		t.Fatalf("violations: %v", violations)
	}
}

// seen returns the tracks selected in order, and the violations.
func (sw *serviceWatch) seen() ([]string, []string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return slices.Clone(sw.tracks), slices.Clone(sw.violations)
}

// releaseBlueGreen releases blueGreenApp(pre, post) in a namespace of its
// own, in parallel with the other tests its Prometheus judges, then starts
// watching its Service and asks for image.
func releaseBlueGreen(t *testing.T, pre, post float64, image string) (*platformv1.AppDeployment, *serviceWatch) {
	t.Helper()
	t.Parallel()
	judgedByPrometheus(t)
	ad := blueGreenApp(newNamespace(t), pre, post)
	released(t, ad)
	sw := watchService(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image })
	return ad, sw
}

func TestBlueGreen_PreviewJudgedThenSwitchedToInOneWriteThenPromoted(t *testing.T) {
	ad, sw := releaseBlueGreen(t, 1, 1, image124)
	ns := ad.Namespace

	// The preview runs at full size beside the stable pods, and the
	// Service stays on them until the analysis has passed.
	waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		c := got.Status.Canary
		g.Expect(c).NotTo(BeNil(), got.Status.Message)
		g.Expect(c.ReadyReplicas).To(HaveValue(BeEquivalentTo(3)), got.Status.Message)
		g.Expect(c.Active).To(Equal(platformv1.TrackStable))
	})
	got := waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
	})
	if o := got.Status.LastOutcome; o.Result != platformv1.OutcomePromoted || o.Version != v124 {
		t.Fatalf("outcome %+v", o)
	}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(deployment(g, t, ns, ad.Name+platformv1.PreviewSuffix)).To(BeNil())
	}).WithTimeout(releaseTimeout).Should(Succeed())
	sw.expectSwitchedThereAndBack(t)
	expectEvent(t, ad, appdeployment.EventPreviewStarted, "order-service-preview")
	expectEvent(t, ad, appdeployment.EventSwitched, "switches to it")
	expectEvent(t, ad, appdeployment.EventPromoted, "stable pods run it")
}

func TestBlueGreen_AFailingPostPromotionAnalysisSwitchesBackToTheOldPods(t *testing.T) {
	// The bad version answers 10 % of requests with 500: enough for the
	// preview's bound of 20 %, too many once it serves (1 %).
	ad, sw := releaseBlueGreen(t, 20, 1, imageBad)
	ns := ad.Namespace

	got := waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.LastOutcome.Result).To(Equal(platformv1.OutcomeRolledBack), got.Status.Message)
		g.Expect(got.Status.Canary).To(BeNil())
	})
	o := got.Status.LastOutcome
	if o.Reason != appdeployment.ReasonAnalysisFailed || got.Status.StableVersion != v123 {
		t.Fatalf("outcome %+v, stable %s", o, got.Status.StableVersion)
	}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(deployment(g, t, ns, ad.Name+platformv1.PreviewSuffix)).To(BeNil())
	}).WithTimeout(releaseTimeout).Should(Succeed())
	sw.expectSwitchedThereAndBack(t)
	expectEvent(t, ad, appdeployment.EventRolledBack, "switches back to the stable pods")
}

// TestBlueGreen_WithARouteTheWeightsSwitch releases a blue-green version
// through the route the traffic simulator serves as a gateway: the
// Service order-service stays on the stable pods, the route's rule gets
// the preview's Service at weight 0, then 100 at the switch (judged by
// the post-promotion analysis on the requests the route now sends it),
// then only the stable Service again once the stable pods run the new
// version. (Before the switch no request reaches the preview through the
// route, so it has no pre-promotion analysis here: testers would reach
// order-service-preview directly.)
func TestBlueGreen_WithARouteTheWeightsSwitch(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	ns := newNamespace(t)
	route := gatewayFor(t, ns)
	ad := blueGreenApp(ns, 1, 1)
	ad.Spec.Strategy.BlueGreen.PrePromotionAnalysis = platformv1.BlueGreenAnalysis{}
	ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute = route.Name
	released(t, ad)
	sw := watchService(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })

	seen := map[int32]bool{}
	got := &platformv1.AppDeployment{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(cluster.Client.Get(t.Context(), keyOf(ad), got)).To(Succeed())
		if c := got.Status.Canary; c != nil && c.Step != nil && c.Step.ReadyAt != nil && c.Weight != nil {
			g.Expect(c.Route.Accepted).To(Equal(metav1.ConditionTrue))
			seen[ptr.Deref(c.Weight.Actual, -1)] = true
		}
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
	}).WithTimeout(routedTimeout).WithPolling(250 * time.Millisecond).Should(Succeed())
	if !seen[0] || !seen[100] {
		t.Errorf("the started steps showed the preview's weight %v, want 0 and 100", seen)
	}
	expectOnlyStableBackend(t, route)
	if tracks, violations := sw.seen(); !slices.Equal(tracks, []string{platformv1.TrackStable}) || len(violations) > 0 {
		t.Fatalf("the Service selected %v in turn (want the stable pods only); violations: %v", tracks, violations)
	}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(deployment(g, t, ns, ad.Name+platformv1.PreviewSuffix)).To(BeNil())
	}).WithTimeout(releaseTimeout).Should(Succeed())
}
