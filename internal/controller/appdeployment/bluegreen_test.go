// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/httproute"
	"github.com/example/platform-operator/internal/release"
)

// blueGreenApp is a blue-green release of three replicas behind port 8080,
// judged before the switch and after it by error_rate at most 0.5 %,
// measured every 5 s; the preview is promoted 10 s after its pods are
// ready and the old pods wait 20 s after the switch.
func blueGreenApp() *platformv1.AppDeployment {
	ad := app()
	ad.Spec.ProgressDeadlineSeconds = 600
	criteria := []platformv1.CanaryCriterion{{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}}
	ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyBlueGreen, BlueGreen: platformv1.BlueGreenStrategy{
		AutoPromotionSeconds:  ptr.To[int32](10),
		ScaleDownDelaySeconds: ptr.To[int32](20),
		PrePromotionAnalysis: platformv1.BlueGreenAnalysis{Criteria: criteria,
			Analysis: platformv1.Analysis{IntervalSeconds: 5}},
		PostPromotionAnalysis: platformv1.BlueGreenAnalysis{Criteria: criteria,
			Analysis: platformv1.Analysis{IntervalSeconds: 5}},
	}}
	ad.Spec.Rollback.ProviderErrorGraceSeconds = 10
	return ad
}

// runUntil runs the world a second at a time, with its checks, until done
// holds, for at most d.
func (w *world) runUntil(d time.Duration, what string, done func() bool) {
	w.t.Helper()
	for end := w.now.Add(d); !done(); {
		if !w.now.Before(end) {
			w.t.Fatalf("not %s within %s: %s", what, d, w.ad.Status.Message)
		}
		w.runFor(time.Second)
	}
}

func TestBlueGreen_PreviewIsJudgedThenSwitchedToInOneWriteAndTheOldPodsWait(t *testing.T) {
	w := newWorld(t, blueGreenApp())
	w.prometheus = newFakePrometheus(0.1, 0.1)
	w.run()
	if w.active != platformv1.TrackStable || w.podsOf(platformv1.TrackStable) != 3 {
		t.Fatalf("first creation: Service selects %q, %d stable pods", w.active, w.podsOf(platformv1.TrackStable))
	}
	w.events = nil

	w.setImage(image124)
	w.runFor(4 * time.Second)
	w.expectEvents(EventPreviewStarted, EventAnalysisStarted)
	if w.podsOf(platformv1.TrackPreview) != 3 || w.podsOf(platformv1.TrackStable) != 3 || w.active != platformv1.TrackStable {
		t.Fatalf("preview: %d preview and %d stable pods, Service on %q; want 3, 3 and stable",
			w.podsOf(platformv1.TrackPreview), w.podsOf(platformv1.TrackStable), w.active)
	}
	if msg := w.ad.Status.Message; !strings.Contains(msg, "preview v1.2.4: 3/3 pods behind Service order-service-preview") {
		t.Errorf("message %q", msg)
	}
	if c := w.ad.Status.Canary; c.Active != platformv1.TrackStable || *c.Weight.Actual != 0 {
		t.Errorf("canary status %+v, want the stable pods active and weight 0", c)
	}

	// Three passing measurements 5 s apart, and the 10 s of
	// autoPromotionSeconds, then the switch.
	w.runUntil(30*time.Second, "switched", func() bool { return w.active == platformv1.TrackPreview })
	w.expectEvents(EventSwitched)
	switchedAt := w.now
	if w.switches != 2 { // stable at creation, then preview
		t.Errorf("the Service's track changed %d times, want 2", w.switches)
	}
	w.runFor(2 * time.Second)
	if c := w.ad.Status.Canary; c == nil || c.Active != platformv1.TrackPreview || *c.Weight.Actual != 100 ||
		stepIndex(c) != release.BlueGreenSwitched || c.Step.ReadyAt == nil {
		t.Fatalf("after the switch: canary %+v", c)
	}
	if w.podsOf(platformv1.TrackStable) != 3 {
		t.Fatalf("%d old pods after the switch, want all 3 kept", w.podsOf(platformv1.TrackStable))
	}

	// The old pods wait out scaleDownDelaySeconds and the post-promotion
	// analysis; then the stable Deployment takes the new version, the
	// Service goes back to it, and the preview goes.
	w.runUntil(2*time.Minute, "promoted", func() bool { return w.ad.Status.LastOutcome.Revision == w.ad.Status.CurrentRevision })
	if held := w.now.Sub(switchedAt); held < 20*time.Second {
		t.Errorf("the old version was replaced %s after the switch, want at least scaleDownDelaySeconds (20 s)", held)
	}
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	st := w.ad.Status
	if st.StableVersion != v124 || st.Canary != nil || st.LastOutcome.Result != platformv1.OutcomePromoted ||
		w.active != platformv1.TrackStable || w.deployments[platformv1.TrackPreview] != nil || w.podsOf(platformv1.TrackStable) != 3 {
		t.Fatalf("after the promotion: status %+v, Service on %q, preview %v", st, w.active, w.deployments[platformv1.TrackPreview] != nil)
	}
	w.expectEvents(EventStepCompleted, EventPromoted)
	if w.switches != 3 {
		t.Errorf("the Service's track changed %d times, want 3 (stable, preview, stable)", w.switches)
	}
}

func TestBlueGreen_AFailingPostPromotionAnalysisSwitchesBackToTheOldPods(t *testing.T) {
	w := newWorld(t, blueGreenApp())
	prom := newFakePrometheus(0.1, 0.1)
	w.prometheus = prom
	w.run()
	w.setImage(image124)
	w.runUntil(time.Minute, "switched", func() bool { return w.active == platformv1.TrackPreview })
	w.events = nil

	// Every request now reaches the new version, and it fails them.
	prom.set(func(f *fakePrometheus) { f.value[platformv1.TrackCanary] = 7 })
	w.runUntil(time.Minute, "switched back", func() bool { return w.active == platformv1.TrackStable })
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonRolledBack)
	st := w.ad.Status
	if st.StableVersion != v123 || st.Canary != nil || st.LastOutcome.Result != platformv1.OutcomeRolledBack ||
		!strings.Contains(st.LastOutcome.Message, "Service order-service switches back to the stable pods") ||
		w.deployments[platformv1.TrackPreview] != nil || w.podsOf(platformv1.TrackStable) != 3 {
		t.Fatalf("after the failure: status %+v outcome %+v", st, st.LastOutcome)
	}
	w.expectEvents(EventRolledBack)
}

func TestBlueGreen_WithoutAutoPromotionThePreviewWaitsForPromote(t *testing.T) {
	ad := blueGreenApp()
	ad.Spec.Strategy.BlueGreen = platformv1.BlueGreenStrategy{}
	w := newWorld(t, ad)
	w.run()
	w.setImage(image124)
	w.run()
	w.expectPhase(platformv1.PhasePaused, platformv1.ReasonWaitingForApproval)
	if w.active != platformv1.TrackStable || w.podsOf(platformv1.TrackPreview) != 3 {
		t.Fatalf("waiting: Service on %q, %d preview pods", w.active, w.podsOf(platformv1.TrackPreview))
	}
	w.request(platformv1.PromoteAnnotation)
	w.runUntil(time.Minute, "promoted", func() bool { return w.ad.Status.LastOutcome.Revision == w.ad.Status.CurrentRevision })
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	if w.ad.Status.StableVersion != v124 || w.switches != 3 {
		t.Fatalf("stable %s after %d switches", w.ad.Status.StableVersion, w.switches)
	}
	w.expectEvents(EventPreviewStarted, EventSwitched, EventPromoted)
}

func TestBlueGreen_WithARouteTheWeightsSwitchAndTheServiceStaysOnTheStablePods(t *testing.T) {
	ad := blueGreenApp()
	ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute = "front"
	w := newWorld(t, ad)
	w.prometheus = newFakePrometheus(0.1, 0.1)
	w.route, w.gatewayAccepts = frontRoute(ad), true
	w.run()
	w.setImage(image124)

	// The preview is judged with no share of the route, then gets all of
	// it; the old pods keep running meanwhile, and the Service never
	// leaves them.
	weights := []int32{}
	note := func() {
		if ro := w.routeObservation(); ro != nil && ro.problem == "" &&
			(len(weights) == 0 || weights[len(weights)-1] != ro.weight) {
			weights = append(weights, ro.weight)
		}
	}
	for range 120 {
		w.runFor(time.Second)
		note()
		if w.active != platformv1.TrackStable {
			t.Fatalf("the Service selects %q with a route: the route's weights switch, not the Service", w.active)
		}
		if w.ad.Status.LastOutcome.Revision == w.ad.Status.CurrentRevision {
			break
		}
	}
	w.run()
	note()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	if want := []int32{0, 100, 0}; !slices.Equal(weights, want) {
		t.Errorf("the preview's weight on the route went %v, want %v", weights, want)
	}
	if httproute.HasCanary(w.route, []int{0}, backends(ad)) || w.deployments[platformv1.TrackPreview] != nil ||
		w.ad.Status.StableVersion != v124 {
		t.Fatalf("after the promotion: route %+v, preview %v, stable %s", w.route.Spec.Rules[0].BackendRefs,
			w.deployments[platformv1.TrackPreview] != nil, w.ad.Status.StableVersion)
	}
	w.expectEvents(EventPreviewStarted, EventSwitched, EventPromoted)
}
