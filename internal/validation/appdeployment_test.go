// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
)

// designDocumentApp is the AppDeployment of the design documents.
func designDocumentApp() *platformv1.AppDeployment {
	return &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "order-service"},
		Spec: platformv1.AppDeploymentSpec{
			Image:    "harbor.example.com/order-service:v1.2.3",
			Replicas: ptr.To[int32](3),
			Strategy: platformv1.Strategy{
				Type: platformv1.StrategyCanary, CanaryPercent: 30,
				CanaryCriteria: []platformv1.CanaryCriterion{{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}},
			},
		},
	}
}

func TestAppDeployment_NamesEveryBadField(t *testing.T) {
	type app = platformv1.AppDeployment
	steps := func(ws ...int32) []platformv1.CanaryStep {
		var out []platformv1.CanaryStep
		for _, w := range ws {
			out = append(out, platformv1.CanaryStep{Weight: w})
		}
		return out
	}
	tests := []struct {
		name   string
		mutate func(*app)
		want   string // one line of Format's output
	}{
		{"canary name", func(a *app) { a.Name = "shop-canary" }, "metadata.name: must not end with -canary"},
		{"not a DNS label", func(a *app) { a.Name = "1shop" }, "metadata.name: a DNS-1035 label"},
		{"missing image", func(a *app) { a.Spec.Image = "" }, "spec.image: is required"},
		{"bad image", func(a *app) { a.Spec.Image = "Order Service" }, "spec.image: not a valid image reference"},
		{"latest", func(a *app) { a.Spec.Version = "latest" }, `spec.version: must be v and three numbers, such as v1.2.3 or v1.10.0 ("latest")`},
		{"no v", func(a *app) { a.Spec.Version = "1.2.3" }, `spec.version: must be v and three numbers`},
		{"two parts", func(a *app) { a.Spec.Version = "v1.2" }, `spec.version: must be v and three numbers`},
		{"negative replicas", func(a *app) { a.Spec.Replicas = ptr.To[int32](-1) }, "spec.replicas: must be at least 0 (-1)"},
		{"too many replicas", func(a *app) { a.Spec.Replicas = ptr.To[int32](101) }, "spec.replicas: must be at most 100 (101)"},
		{"port", func(a *app) { a.Spec.Port = 70000 }, "spec.port: must be at most 65535 (70000)"},
		{"strategy type", func(a *app) { a.Spec.Strategy.Type = "blue-green" }, `spec.strategy.type: must be one of "rolling", "recreate", "canary", "blueGreen" ("blue-green")`},
		{"canaryPercent without canary", func(a *app) {
			a.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyRolling, CanaryPercent: 30}
		}, "spec.strategy.canaryPercent: applies only to type canary"},
		{"criteria without canary", func(a *app) {
			a.Spec.Strategy.Type, a.Spec.Strategy.CanaryPercent = platformv1.StrategyRecreate, 0
		}, "spec.strategy.canaryCriteria: applies only to type canary"},
		{"maxSurge with canary", func(a *app) { a.Spec.Strategy.MaxSurge = ptr.To(intstr.FromInt32(1)) }, "spec.strategy.maxSurge: applies only to type rolling"},
		{"rolling that cannot move", func(a *app) {
			a.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyRolling,
				MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromString("0%"))}
		}, "spec.strategy.maxUnavailable: may not be 0 when maxSurge is 0"},
		{"canary without a share", func(a *app) { a.Spec.Strategy.CanaryPercent = 0 }, "spec.strategy.canaryPercent: is required"},
		{"both shares", func(a *app) { a.Spec.Strategy.Steps = steps(10, 50) }, "spec.strategy.steps: set canaryPercent or steps, not both"},
		{"canaryPercent 100", func(a *app) { a.Spec.Strategy.CanaryPercent = 100 }, "spec.strategy.canaryPercent: must be between 1 and 99 (100)"},
		{"weights not increasing", func(a *app) {
			a.Spec.Strategy.CanaryPercent, a.Spec.Strategy.Steps = 0, steps(10, 50, 50)
		}, "spec.strategy.steps[2].weight: must be higher than the previous step's weight (50) (50)"},
		{"weight 100", func(a *app) {
			a.Spec.Strategy.CanaryPercent, a.Spec.Strategy.Steps = 0, steps(10, 100)
		}, "spec.strategy.steps[1].weight: must be between 1 and 99 (100)"},
		{"approval", func(a *app) {
			a.Spec.Strategy.CanaryPercent = 0
			a.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 10, Approval: "Maybe"}}
		}, `spec.strategy.steps[0].approval: must be one of "Auto", "Manual" ("Maybe")`},
		{"unknown metric", func(a *app) { a.Spec.Strategy.CanaryCriteria[0].Metric = "cpu" }, `spec.strategy.canaryCriteria[0].metric: must be one of "error_rate", "success_rate", "latency_p95", "latency_p99" ("cpu")`},
		{"percent above 100", func(a *app) { a.Spec.Strategy.CanaryCriteria[0].Threshold = ptr.To(150.0) }, "spec.strategy.canaryCriteria[0].threshold: is a percent: must be between 0 and 100 (150)"},
		{"latency of 0", func(a *app) {
			a.Spec.Strategy.CanaryCriteria[0] = platformv1.CanaryCriterion{Metric: platformv1.MetricLatencyP99, Threshold: ptr.To(0.0)}
		}, "spec.strategy.canaryCriteria[0].threshold: is in seconds: must be more than 0 (0)"},
		{"metric without threshold", func(a *app) {
			a.Spec.Strategy.CanaryCriteria[0] = platformv1.CanaryCriterion{Metric: platformv1.MetricLatencyP99}
		}, "spec.strategy.canaryCriteria[0].threshold: is required"},
		{"query without a name", func(a *app) {
			a.Spec.Strategy.CanaryCriteria[0] = platformv1.CanaryCriterion{Query: "up", SuccessCondition: "result > 0.0"}
		}, "spec.strategy.canaryCriteria[0].name: is required"},
		{"query that does not parse", func(a *app) {
			a.Spec.Strategy.CanaryCriteria[0] = platformv1.CanaryCriterion{Name: "q", Query: "sum(up", SuccessCondition: "result > 0.0"}
		}, "spec.strategy.canaryCriteria[0].query: not valid PromQL"},
		{"query with an unknown variable", func(a *app) {
			a.Spec.Strategy.CanaryCriteria[0] = platformv1.CanaryCriterion{Name: "q", Query: `up{job="{{job}}"}`, SuccessCondition: "result > 0.0"}
		}, "job"},
		{"condition that is no bool", func(a *app) {
			a.Spec.Strategy.CanaryCriteria[0] = platformv1.CanaryCriterion{Name: "q", Query: "up", SuccessCondition: "result + 1.0"}
		}, "spec.strategy.canaryCriteria[0].successCondition: has type double; want bool"},
		{"threshold on a query", func(a *app) {
			a.Spec.Strategy.CanaryCriteria[0] = platformv1.CanaryCriterion{Name: "q", Query: "up", SuccessCondition: "result > 0.0",
				Threshold: ptr.To(1.0)}
		}, "spec.strategy.canaryCriteria[0].threshold: applies to a metric"},
		{"two criteria of one name", func(a *app) {
			a.Spec.Strategy.CanaryCriteria = append(a.Spec.Strategy.CanaryCriteria, a.Spec.Strategy.CanaryCriteria[0])
		}, "spec.strategy.canaryCriteria[1].name: criteria names must be unique: canaryCriteria[0] is also error_rate"},
		{"maxRatio below 1", func(a *app) {
			a.Spec.Strategy.CanaryCriteria[0].CompareToStable = platformv1.CompareToStable{MaxRatio: ptr.To(0.5)}
		}, "spec.strategy.canaryCriteria[0].compareToStable.maxRatio: must be at least 1"},
		{"interval of 1 s", func(a *app) { a.Spec.Strategy.Analysis.IntervalSeconds = 1 }, "spec.strategy.analysis.intervalSeconds: must be at least 5 (1)"},
		{"analysis on a rolling update", func(a *app) {
			a.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyRolling, Analysis: platformv1.Analysis{FailureLimit: 3}}
		}, "spec.strategy.analysis: applies only to type canary"},
		{"onNoData Ignore", func(a *app) { a.Spec.Rollback.OnNoData = "Ignore" }, `spec.rollback.onNoData: must be one of "Pause", "Rollback" ("Ignore")`},
		{"provider error grace of 5 s", func(a *app) { a.Spec.Rollback.ProviderErrorGraceSeconds = 5 }, "spec.rollback.providerErrorGraceSeconds: must be at least 10 (5)"},
		{"health check without a port", func(a *app) { a.Spec.HealthCheck = platformv1.HealthCheck{Path: "/healthz"} }, "spec.healthCheck.port: is required: the port to check; or set spec.port"},
		{"health check path", func(a *app) {
			a.Spec.Port, a.Spec.HealthCheck = 8080, platformv1.HealthCheck{Path: "healthz"}
		}, `spec.healthCheck.path: must start with / ("healthz")`},
		{"minReadySeconds beyond the deadline", func(a *app) {
			a.Spec.MinReadySeconds, a.Spec.ProgressDeadlineSeconds = ptr.To[int32](120), 60
		}, "spec.minReadySeconds: must be less than progressDeadlineSeconds (60) (120)"},
		{"onFailure", func(a *app) { a.Spec.Rollback.OnFailure = "Ignore" }, `spec.rollback.onFailure: must be one of "Rollback", "Pause" ("Ignore")`},
		{"revision history", func(a *app) { a.Spec.Rollback.RevisionHistoryLimit = ptr.To[int32](51) }, "spec.rollback.revisionHistoryLimit: must be at most 50 (51)"},
		{"long arg", func(a *app) { a.Spec.Args = []string{strings.Repeat("x", 16385)} }, "spec.args[0]: must be at most 16384 characters"},
		{"template with the operator's label", func(a *app) {
			a.Spec.Template = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "other"}}}
		}, `spec.template.metadata.labels[app.kubernetes.io/name]: is a label the operator sets on the pods`},
		{"template with a platform label", func(a *app) {
			a.Spec.Template = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"platform.example.com/track": "stable"}}}
		}, `spec.template.metadata.labels[platform.example.com/track]`},
		{"template restartPolicy Never", func(a *app) {
			a.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
		}, `spec.template.spec.restartPolicy: supported values: "Always" (Never)`},
		{"sidecar without an image", func(a *app) {
			a.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "proxy"}}}}
		}, `spec.template.spec.containers[1].image: is required`},
		{"template over 64 KiB", func(a *app) {
			a.Spec.Template = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
				Annotations: map[string]string{"big": strings.Repeat("x", 65536)}}}
		}, `spec.template: must hold at most 65536 bytes as JSON (`},
	}
	blueGreen := func(a *app) *platformv1.BlueGreenStrategy {
		a.Spec.Port = 8080
		a.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyBlueGreen, BlueGreen: platformv1.BlueGreenStrategy{
			PrePromotionAnalysis: platformv1.BlueGreenAnalysis{Criteria: []platformv1.CanaryCriterion{
				{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}}},
		}}
		return &a.Spec.Strategy.BlueGreen
	}
	tests = append(tests, []struct {
		name   string
		mutate func(*app)
		want   string
	}{
		{"preview name", func(a *app) { blueGreen(a); a.Name = "shop-preview" }, "metadata.name: must not end with -preview"},
		{"blue-green without a port", func(a *app) { blueGreen(a); a.Spec.Port = 0 }, "spec.port: is required: blueGreen needs port"},
		{"blueGreen on a canary", func(a *app) {
			a.Spec.Strategy.BlueGreen.ScaleDownDelaySeconds = ptr.To[int32](10)
		}, "spec.strategy.blueGreen: applies only to type blueGreen"},
		{"steps on a blue-green release", func(a *app) { blueGreen(a); a.Spec.Strategy.Steps = steps(10) }, "spec.strategy.steps: applies only to type canary"},
		{"scale-down delay of a day and more", func(a *app) {
			blueGreen(a).ScaleDownDelaySeconds = ptr.To[int32](86401)
		}, "spec.strategy.blueGreen.scaleDownDelaySeconds: must be at most 86400 (86401)"},
		{"negative auto-promotion", func(a *app) {
			blueGreen(a).AutoPromotionSeconds = ptr.To[int32](-1)
		}, "spec.strategy.blueGreen.autoPromotionSeconds: must be at least 0 (-1)"},
		{"two pre-promotion criteria of one name", func(a *app) {
			bg := blueGreen(a)
			bg.PrePromotionAnalysis.Criteria = append(bg.PrePromotionAnalysis.Criteria, bg.PrePromotionAnalysis.Criteria[0])
		}, "spec.strategy.blueGreen.prePromotionAnalysis.criteria[1].name: criteria names must be unique: criteria[0] is also error_rate"},
		{"post-promotion analysis without criteria", func(a *app) {
			blueGreen(a).PostPromotionAnalysis.Analysis.FailureLimit = 3
		}, "spec.strategy.blueGreen.postPromotionAnalysis.criteria: is required"},
		{"post-promotion query that does not parse", func(a *app) {
			blueGreen(a).PostPromotionAnalysis.Criteria = []platformv1.CanaryCriterion{
				{Name: "q", Query: "sum(", SuccessCondition: "result > 0.0"}}
		}, "spec.strategy.blueGreen.postPromotionAnalysis.criteria[0].query"},
		{"pre-promotion interval of 1 s", func(a *app) {
			blueGreen(a).PrePromotionAnalysis.Analysis.IntervalSeconds = 1
		}, "spec.strategy.blueGreen.prePromotionAnalysis.analysis.intervalSeconds: must be at least 5 (1)"},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := designDocumentApp()
			tt.mutate(a)
			errs, _ := AppDeployment(a, analysis.Scope{})
			lines := Format(errs)
			if len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("got %q, want one line containing %q", lines, tt.want)
			}
		})
	}
}

func TestAppDeployment_BlueGreenIsValidAndWarnsOfNoWeight(t *testing.T) {
	a := designDocumentApp()
	a.Spec.Port = 8080
	a.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyBlueGreen, BlueGreen: platformv1.BlueGreenStrategy{
		AutoPromotionSeconds: ptr.To[int32](60),
		PrePromotionAnalysis: platformv1.BlueGreenAnalysis{Criteria: []platformv1.CanaryCriterion{
			{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}}},
		PostPromotionAnalysis: platformv1.BlueGreenAnalysis{Criteria: []platformv1.CanaryCriterion{
			{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}}, Analysis: platformv1.Analysis{IntervalSeconds: 10}},
	}}
	errs, warnings := AppDeployment(a, analysis.Scope{})
	if len(errs) > 0 || len(warnings) > 0 {
		t.Errorf("a blue-green release: errors %q, warnings %q, want none", Format(errs), warnings)
	}
}

func TestAppDeployment_DesignDocumentManifestIsValid(t *testing.T) {
	errs, _ := AppDeployment(designDocumentApp(), analysis.Scope{})
	if len(errs) > 0 {
		t.Errorf("the design documents' manifest is refused: %q", Format(errs))
	}
}

func TestAppDeployment_WarnsWhenTheCanaryWeightCannotBeHonoured(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*platformv1.AppDeployment)
		want   []string
	}{
		{"30% of 3", func(*platformv1.AppDeployment) {}, []string{
			"spec.strategy.canaryPercent: 30% of 3 replicas is 1 canary pod(s), 33% of the traffic"}},
		{"30% of 10 is exact", func(a *platformv1.AppDeployment) { a.Spec.Replicas = ptr.To[int32](10) }, nil},
		{"one replica", func(a *platformv1.AppDeployment) { a.Spec.Replicas = ptr.To[int32](1) }, []string{
			"spec.strategy.canaryPercent: with 1 replica the canary is one extra pod beside the stable one, so it takes 50% of the traffic, not 30%"}},
		{"steps", func(a *platformv1.AppDeployment) {
			a.Spec.Replicas = ptr.To[int32](4)
			a.Spec.Strategy.CanaryPercent = 0
			a.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 25}, {Weight: 60}}
		}, []string{"spec.strategy.steps[1].weight: 60% of 4 replicas is 2 canary pod(s), 50% of the traffic"}},
		{"no replicas", func(a *platformv1.AppDeployment) { a.Spec.Replicas = ptr.To[int32](0) }, []string{
			"spec.replicas: 0 replicas: a canary has no pods to take a share of until the AppDeployment is scaled up"}},
		{"not a canary", func(a *platformv1.AppDeployment) { a.Spec.Strategy = platformv1.Strategy{} }, nil},
		// The route takes the weight exactly: 5 % of 3 replicas is 5 %.
		{"weighted on a route", func(a *platformv1.AppDeployment) {
			a.Spec.Port = 8080
			a.Spec.Strategy.CanaryPercent = 0
			a.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 5}, {Weight: 50}}
			a.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute = "storefront"
		}, nil},
		{"weighted on a route with no replicas", func(a *platformv1.AppDeployment) {
			a.Spec.Port = 8080
			a.Spec.Replicas = ptr.To[int32](0)
			a.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute = "storefront"
		}, []string{"spec.replicas: 0 replicas: a canary has no pods to take a share of until the AppDeployment is scaled up"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := designDocumentApp()
			tt.mutate(a)
			errs, warnings := AppDeployment(a, analysis.Scope{})
			if len(errs) > 0 {
				t.Fatalf("refused: %q", Format(errs))
			}
			if diff := cmp.Diff(tt.want, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
