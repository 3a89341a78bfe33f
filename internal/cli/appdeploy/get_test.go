// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// update rewrites the golden files of get from what it prints: go test
// -run TestGet_ -update. Read the diff before committing it.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// checkGolden compares got with testdata/name.golden.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestGet_DrawsTheReleaseAsATree(t *testing.T) {
	// A canary that failed and is held, in its second step, with a pause
	// still running, and more revisions than get shows.
	held := orderService()
	held.Name = "held"
	held.Annotations = nil
	held.Status.Phase, held.Status.PauseReason = platformv1.PhaseDegraded, ""
	held.Status.Message = "canary v1.2.4 (7b9e1a3c2) failed (CrashLoopBackOff: pod held-canary-x restarted 5 times); held: retry or abort"
	held.Status.Conditions[0].Reason = platformv1.ReasonCanaryFailed
	held.Status.Canary.Step = &platformv1.CanaryStepStatus{Index: ptr.To[int32](1), Total: 3,
		StartedAt: at(-3 * time.Minute), ReadyAt: at(-2 * time.Minute), PauseUntil: at(3 * time.Minute)}
	held.Status.Canary.Weight.Desired = ptr.To[int32](50)
	held.Status.Canary.Failure = platformv1.CanaryFailure{Reason: "CrashLoopBackOff",
		Message: "pod held-canary-x restarted 5 times", FailedAt: at(-time.Minute)}
	for i := range 4 {
		held.Status.Revisions = append(held.Status.Revisions, platformv1.Revision{Revision: strings.Repeat(string(rune('a'+i)), 9)})
	}
	// A canary being promoted, one step past its last.
	promoting := orderService()
	promoting.Name = "promoting"
	promoting.Status.Canary.Step.Index = ptr.To[int32](3)
	promoting.Status.Phase, promoting.Status.PauseReason = platformv1.PhaseProgressing, ""
	promoting.Status.Conditions[0].Reason = platformv1.ReasonCanarying
	promoting.Status.Message = "canary v1.2.4 (7b9e1a3c2): 1/1 pods (25%), promoting: 1/4 stable pods updated"
	promoting.Status.HandledRequests.Promote = promoting.Annotations[platformv1.PromoteAnnotation]
	// Its last step's measurements waited for the operator's query slots.
	promoting.Status.Canary.Analysis = &platformv1.AnalysisStatus{PreflightAt: at(-5 * time.Minute),
		DelayedMeasurements: ptr.To[int32](2), Criteria: []platformv1.CriterionStatus{{Name: "error_rate",
			LastResult: platformv1.MeasurementPass, Value: "0.1", Threshold: "<= 0.5", MeasuredAt: at(-time.Minute),
			Passes: ptr.To[int32](3), Fails: ptr.To[int32](0), NoData: ptr.To[int32](0), Errors: ptr.To[int32](0),
			Message: "error_rate 0.1% <= 0.5% (n=600)"}}}
	// A weighted canary whose route no gateway has accepted yet.
	weighted := orderService()
	weighted.Name = "weighted"
	weighted.Spec.Port = 8080
	weighted.Spec.Strategy.TrafficRouting.GatewayAPI = platformv1.GatewayAPIRouting{HTTPRoute: "shop"}
	weighted.Status.Phase, weighted.Status.PauseReason = platformv1.PhasePaused, platformv1.PauseRouteNotAccepted
	weighted.Status.Message = "canary v1.2.4: 1/1 pods (5%), step 1/3 (5%), paused: " +
		"example.com/edge has not reported Accepted for generation 4 of HTTPRoute shop yet (for 30s)"
	weighted.Status.Canary.Weight = &platformv1.CanaryWeight{Desired: ptr.To[int32](5), Actual: ptr.To[int32](5)}
	weighted.Status.Canary.Route = platformv1.RouteStatus{Name: "shop", Rules: []string{"checkout"},
		Accepted: "Unknown", WaitingSince: at(-45 * time.Second),
		Message: "example.com/edge has not reported Accepted for generation 4 of HTTPRoute shop yet"}
	weighted.Status.Canary.Step = &platformv1.CanaryStepStatus{Index: ptr.To[int32](0), Total: 3, StartedAt: at(-2 * time.Minute)}
	// Its first step sends the testers to the canary alone.
	weighted.Spec.Strategy.Steps[0].HeaderRoute.Matches = []platformv1.HeaderMatch{
		{Name: "X-Canary", Value: "always"}, {Name: "X-Team", Type: platformv1.HeaderMatchRegularExpression, Value: "qa-.*"}}
	weighted.Status.Conditions[0].Reason = string(platformv1.PauseRouteNotAccepted)
	// A blue-green release switched to its preview, its old pods kept
	// for the scale-down delay while the post-promotion analysis runs.
	switched := orderService()
	switched.Name = "switched"
	switched.Annotations = nil
	switched.Spec.Port = 8080
	switched.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyBlueGreen, BlueGreen: platformv1.BlueGreenStrategy{
		AutoPromotionSeconds: ptr.To[int32](300), ScaleDownDelaySeconds: ptr.To[int32](60),
		PrePromotionAnalysis: platformv1.BlueGreenAnalysis{Criteria: []platformv1.CanaryCriterion{
			{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}}},
		PostPromotionAnalysis: platformv1.BlueGreenAnalysis{Criteria: []platformv1.CanaryCriterion{
			{Metric: platformv1.MetricLatencyP99, Threshold: ptr.To(0.3)}}, Analysis: platformv1.Analysis{IntervalSeconds: 10}},
	}}
	switched.Status.Phase, switched.Status.PauseReason = platformv1.PhaseProgressing, ""
	switched.Status.Conditions[0].Reason = platformv1.ReasonCanarying
	switched.Status.Message = "preview v1.2.4: 4/4 pods, Service switched selects the preview pods, old pods kept until 12:01:00"
	switched.Status.Canary.Replicas, switched.Status.Canary.ReadyReplicas = ptr.To[int32](4), ptr.To[int32](4)
	switched.Status.Replicas, switched.Status.ReadyReplicas = ptr.To[int32](8), ptr.To[int32](8)
	switched.Status.Canary.Active = platformv1.TrackPreview
	switched.Status.Canary.Weight = &platformv1.CanaryWeight{Desired: ptr.To[int32](100), Actual: ptr.To[int32](100)}
	switched.Status.Canary.Step = &platformv1.CanaryStepStatus{Index: ptr.To[int32](1), Total: 2,
		StartedAt: at(-40 * time.Second), ReadyAt: at(-30 * time.Second), PauseUntil: at(30 * time.Second)}
	switched.Status.Canary.Analysis = &platformv1.AnalysisStatus{Step: ptr.To[int32](1), PreflightAt: at(-5 * time.Minute),
		Criteria: []platformv1.CriterionStatus{{Name: "latency_p99",
			LastResult: platformv1.MeasurementPass, Value: "0.12", Threshold: "<= 0.3", MeasuredAt: at(-10 * time.Second),
			Passes: ptr.To[int32](2), Fails: ptr.To[int32](0), NoData: ptr.To[int32](0), Errors: ptr.To[int32](0),
			Message: "latency_p99 0.12s <= 0.3s (n=900)"}}}
	// An AppDeployment whose new spec the operator has not seen.
	behind := web()
	behind.Name = "behind"
	behind.Generation = 3

	c := newClient(t, interceptor.Funcs{}, append(cluster(), held, promoting, behind, weighted, switched)...)
	for _, name := range []string{"order-service", "checkout", "web", "held", "promoting", "behind", "weighted", "switched"} {
		t.Run(name, func(t *testing.T) {
			r := execute(t, c, "", "get", name)
			if r.err != nil {
				t.Fatal(r.err)
			}
			checkGolden(t, "get-"+name, r.out)
		})
	}
}

func TestStrategyLine_ShowsStepsAsTheControllerFollowsThem(t *testing.T) {
	for _, tt := range []struct {
		strategy platformv1.Strategy
		want     string
	}{
		{platformv1.Strategy{}, "rolling"},
		{platformv1.Strategy{Type: platformv1.StrategyRecreate}, "recreate"},
		// Nothing judges the step: it waits for a promote.
		{platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30}, "canary: 30% (approval)"},
		// Criteria judge it.
		{platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30,
			CanaryCriteria: []platformv1.CanaryCriterion{{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(1.0)}}}, "canary: 30%"},
		{platformv1.Strategy{Type: platformv1.StrategyCanary, Steps: []platformv1.CanaryStep{
			{Weight: 10, PauseSeconds: ptr.To[int32](90)},
			{Weight: 50, PauseSeconds: ptr.To[int32](3600), Approval: platformv1.ApprovalManual},
		}}, "canary: 10% (pause 90s) → 50% (pause 60m, approval)"},
		{platformv1.Strategy{Type: platformv1.StrategyBlueGreen}, "blueGreen: promoted by kubectl appdeploy promote, old pods kept 30s"},
		{platformv1.Strategy{Type: platformv1.StrategyBlueGreen, BlueGreen: platformv1.BlueGreenStrategy{
			AutoPromotionSeconds: ptr.To[int32](600), ScaleDownDelaySeconds: ptr.To[int32](0)}},
			"blueGreen: promoted 10m after the preview is ready, old pods kept 0s"},
	} {
		if got := strategyLine(&tt.strategy); got != tt.want {
			t.Errorf("strategyLine(%+v) = %q, want %q", tt.strategy, got, tt.want)
		}
	}
}
