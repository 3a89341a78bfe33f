// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
)

var (
	appRule = rbacv1.PolicyRule{APIGroups: []string{platformv1.GroupVersion.Group},
		Resources: []string{"appdeployments", "appdeployments/scale"}, Verbs: []string{"*"}}
	deploymentRule = rbacv1.PolicyRule{APIGroups: []string{"apps"},
		Resources: []string{"deployments"}, Verbs: []string{"create"}}
)

// sampleApp reads the design documents' AppDeployment from config/samples.
func sampleApp(t *testing.T, ns string) *platformv1.AppDeployment {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "platform_v1_appdeployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ad := &platformv1.AppDeployment{}
	if err := yaml.UnmarshalStrict(data, ad); err != nil {
		t.Fatalf("the sample is not an AppDeployment: %v", err)
	}
	ad.Namespace = ns
	return ad
}

func TestAppDeployment_DesignDocumentManifestIsStoredWithDefaults(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	cfg := userConfig(t, ns, "alice", []rbacv1.PolicyRule{appRule, deploymentRule})
	warnings := &warningCollector{}
	cfg.WarningHandler = warnings
	alice, err := client.New(cfg, client.Options{Scheme: testEnv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ad := sampleApp(t, ns)
	if err := alice.Create(ctx, ad); err != nil {
		t.Fatalf("the design documents' manifest is refused: %v", err)
	}
	// What `kubectl apply` prints: 30 % of 3 replicas cannot be honoured.
	wantWarnings := []string{"spec.strategy.canaryPercent: 30% of 3 replicas is 1 canary pod(s), 33% of the traffic"}
	if diff := cmp.Diff(wantWarnings, warnings.get()); diff != "" {
		t.Errorf("admission warnings (-want +got):\n%s", diff)
	}
	stored := &platformv1.AppDeployment{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ad), stored); err != nil {
		t.Fatal(err)
	}
	want := platformv1.AppDeploymentSpec{
		Image:                   "harbor.example.com/order-service:v1.2.3",
		Replicas:                ptr.To[int32](3),
		ProgressDeadlineSeconds: 600,
		Strategy: platformv1.Strategy{
			Type: platformv1.StrategyCanary, CanaryPercent: 30,
			CanaryCriteria: []platformv1.CanaryCriterion{{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}},
		},
		Rollback: platformv1.RollbackPolicy{OnFailure: platformv1.FailureRollback, RevisionHistoryLimit: ptr.To[int32](10),
			OnNoData: platformv1.NoDataPause, ProviderErrorGraceSeconds: 300},
	}
	if diff := cmp.Diff(want, stored.Spec); diff != "" {
		t.Errorf("stored spec (-want +got):\n%s", diff)
	}
}

// warningCollector keeps the warnings the API server sends a client.
type warningCollector struct {
	mu       sync.Mutex
	warnings []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *warningCollector) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningCollector) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.warnings)
}

func TestAppDeployment_AdmissionRejectsBadObjectsNamingTheField(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{appRule, deploymentRule})
	bob := userClient(t, ns, "bob", []rbacv1.PolicyRule{appRule})

	app := func(name string, mutate func(*platformv1.AppDeployment)) *platformv1.AppDeployment {
		ad := sampleApp(t, ns)
		ad.Name = name
		mutate(ad)
		return ad
	}
	steps := func(ws ...int32) func(*platformv1.AppDeployment) {
		return func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.CanaryPercent = 0
			for _, w := range ws {
				ad.Spec.Strategy.Steps = append(ad.Spec.Strategy.Steps, platformv1.CanaryStep{Weight: w})
			}
		}
	}
	unchanged := func(*platformv1.AppDeployment) {}
	// blueGreen makes the sample a blue-green release judged before the
	// switch.
	blueGreen := func(ad *platformv1.AppDeployment) {
		ad.Spec.Port = 8080
		ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyBlueGreen, BlueGreen: platformv1.BlueGreenStrategy{
			PrePromotionAnalysis: platformv1.BlueGreenAnalysis{Criteria: ad.Spec.Strategy.CanaryCriteria}}}
	}
	// query replaces the criteria with one PromQL criterion.
	const latencyQuery = `histogram_quantile(0.95, sum by (le) ` +
		`(rate(http_request_duration_seconds_bucket{app="{{name}}"}[1m])))`
	query := func(condition, q string) func(*platformv1.AppDeployment) {
		return func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.CanaryCriteria = []platformv1.CanaryCriterion{{Name: "p95", Query: q, SuccessCondition: condition}}
		}
	}
	spec := func(name string, mutate func(*platformv1.AppDeploymentSpec)) *platformv1.AppDeployment {
		return app(name, func(ad *platformv1.AppDeployment) { mutate(&ad.Spec) })
	}
	type spc = platformv1.AppDeploymentSpec
	tests := []struct {
		name  string
		as    client.Client
		obj   *platformv1.AppDeployment
		code  int32
		field string
	}{
		{"name ending in -canary", alice, app("shop-canary", unchanged), 422, "metadata.name"},
		{"name that is no DNS label", alice, app("shop.v2", unchanged), 422, "metadata.name"},
		{"missing image", alice, spec("a01", func(s *spc) { s.Image = "" }), 422, "spec.image"},
		{"image with a space", alice, spec("a02", func(s *spc) { s.Image = "order service" }), 422, "spec.image"},
		{"version latest", alice, spec("a03", func(s *spc) { s.Version = "latest" }), 422, "spec.version"},
		{"version without v", alice, spec("a04", func(s *spc) { s.Version = "1.2.3" }), 422, "spec.version"},
		{"version of two parts", alice, spec("a05", func(s *spc) { s.Version = "v1.2" }), 422, "spec.version"},
		{"negative replicas", alice, spec("a06", func(s *spc) { s.Replicas = ptr.To[int32](-1) }), 422, "spec.replicas"},
		{"101 replicas", alice, spec("a07", func(s *spc) { s.Replicas = ptr.To[int32](101) }), 422, "spec.replicas"},
		{"port 0x10000", alice, spec("a08", func(s *spc) { s.Port = 65536 }), 422, "spec.port"},
		{"blue-green", alice, spec("a09", func(s *spc) { s.Strategy.Type = "blue-green" }), 422, "spec.strategy.type"},
		{"canaryPercent with rolling", alice, app("a10", func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.Type, ad.Spec.Strategy.CanaryCriteria = platformv1.StrategyRolling, nil
		}), 422, "canaryPercent"},
		{"canary without a share", alice, spec("a11", func(s *spc) { s.Strategy.CanaryPercent = 0 }), 422, "canaryPercent"},
		{"canaryPercent and steps", alice, app("a12", func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 10}}
		}), 422, "canaryPercent or steps"},
		{"canaryPercent 100", alice, spec("a13", func(s *spc) { s.Strategy.CanaryPercent = 100 }), 422, "canaryPercent"},
		{"weights not increasing", alice, app("a14", steps(20, 10)), 422, "spec.strategy.steps[1].weight"},
		{"weight 100", alice, app("a15", steps(10, 100)), 422, "spec.strategy.steps[1].weight"},
		{"unknown metric", alice, app("a16", func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.CanaryCriteria[0].Metric = "cpu"
		}), 422, "spec.strategy.canaryCriteria[0].metric"},
		{"error rate above 100 %", alice, app("a17", func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.CanaryCriteria[0].Threshold = ptr.To(150.0)
		}), 422, "spec.strategy.canaryCriteria[0].threshold"},
		{"maxSurge with canary", alice, app("a18", func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.MaxSurge = ptr.To(intstr.FromInt32(1))
		}), 422, "maxSurge"},
		{"health check without a port", alice, app("a19", func(ad *platformv1.AppDeployment) {
			ad.Spec.HealthCheck = platformv1.HealthCheck{Path: "/healthz"}
		}), 422, "healthCheck"},
		{"onFailure Ignore", alice, spec("a20", func(s *spc) { s.Rollback.OnFailure = "Ignore" }), 422, "onFailure"},
		{"revision history 51", alice, app("a21", func(ad *platformv1.AppDeployment) {
			ad.Spec.Rollback.RevisionHistoryLimit = ptr.To[int32](51)
		}), 422, "spec.rollback.revisionHistoryLimit"},
		{"too many args", alice, spec("a22", func(s *spc) { s.Args = make([]string, 257) }), 422, "spec.args"},
		{"request value too long", alice, app("a23", func(ad *platformv1.AppDeployment) {
			ad.Annotations = map[string]string{platformv1.PromoteAnnotation: strings.Repeat("p", 64)}
		}), 422, platformv1.PromoteAnnotation},
		{"user without Deployment rights", bob, app("a24", unchanged), 403, "deployments.apps"},
		{"metric and query", alice, app("a25", func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.CanaryCriteria[0].Query = "up"
		}), 422, "spec.strategy.canaryCriteria[0]"},
		{"successCondition that is no CEL", alice, app("a26", query("result <", latencyQuery)), 422,
			"spec.strategy.canaryCriteria[0].successCondition"},
		{"successCondition over an unknown variable", alice, app("a27", query("latency < 0.05", latencyQuery)), 422,
			"spec.strategy.canaryCriteria[0].successCondition"},
		{"successCondition that is no bool", alice, app("a28", query("result + 1", latencyQuery)), 422,
			"spec.strategy.canaryCriteria[0].successCondition"},
		{"query that is no PromQL", alice, app("a29", query("result < 0.05", "sum(rate(x[1m])")), 422,
			"spec.strategy.canaryCriteria[0].query"},
		{"query with an unknown variable", alice, app("a30", query("result < 0.05", `up{service="{{service}}"}`)), 422,
			"spec.strategy.canaryCriteria[0].query"},
		{"two criteria of one name", alice, app("a31", func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.CanaryCriteria = append(ad.Spec.Strategy.CanaryCriteria, ad.Spec.Strategy.CanaryCriteria[0])
		}), 422, "criteria names must be unique"},
		{"interval of 1 s", alice, app("a32", func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.Analysis.IntervalSeconds = 1
		}), 422, "spec.strategy.analysis.intervalSeconds"},
		{"provider error grace of 5 s", alice, spec("a33", func(s *spc) { s.Rollback.ProviderErrorGraceSeconds = 5 }), 422,
			"spec.rollback.providerErrorGraceSeconds"},
		{"onNoData Ignore", alice, spec("a34", func(s *spc) { s.Rollback.OnNoData = "Ignore" }), 422, "onNoData"},
		{"compareToStable maxRatio below 1", alice, app("a35", func(ad *platformv1.AppDeployment) {
			ad.Spec.Strategy.CanaryCriteria[0].CompareToStable = platformv1.CompareToStable{MaxRatio: ptr.To(0.9)}
		}), 422, "spec.strategy.canaryCriteria[0].compareToStable.maxRatio"},
		{"template with the operator's label", alice, spec("a36", func(s *spc) {
			s.Template = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
				Labels: map[string]string{"app.kubernetes.io/name": "x"}}}
		}), 422, "spec.template.metadata.labels[app.kubernetes.io/name]"},
		{"template restartPolicy Never", alice, spec("a37", func(s *spc) {
			s.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
		}), 422, "spec.template.spec.restartPolicy"},
		{"template over 64 KiB", alice, spec("a38", func(s *spc) {
			s.Template = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
				Annotations: map[string]string{"note": strings.Repeat("x", 70000)}}}
		}), 422, "spec.template: must hold at most 65536 bytes"},
		{"template sidecar without an image", alice, spec("a39", func(s *spc) {
			s.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "proxy"}}}}
		}), 422, "spec.template.spec.containers[0].image"},
		{"name ending in -preview", alice, app("shop-preview", blueGreen), 422, "metadata.name"},
		{"blueGreen without a port", alice, app("a40", func(ad *platformv1.AppDeployment) {
			blueGreen(ad)
			ad.Spec.Port = 0
		}), 422, "spec.port"},
		{"blueGreen settings on a canary", alice, spec("a41", func(s *spc) {
			s.Strategy.BlueGreen.ScaleDownDelaySeconds = ptr.To[int32](10)
		}), 422, "spec.strategy.blueGreen"},
		{"pre-promotion query that is no PromQL", alice, app("a42", func(ad *platformv1.AppDeployment) {
			blueGreen(ad)
			ad.Spec.Strategy.BlueGreen.PrePromotionAnalysis.Criteria = []platformv1.CanaryCriterion{
				{Name: "p95", Query: "sum(rate(x[1m])", SuccessCondition: "result < 0.05"}}
		}), 422, "spec.strategy.blueGreen.prePromotionAnalysis.criteria[0].query"},
		{"post-promotion analysis without criteria", alice, app("a43", func(ad *platformv1.AppDeployment) {
			blueGreen(ad)
			ad.Spec.Strategy.BlueGreen.PostPromotionAnalysis.Analysis.IntervalSeconds = 10
		}), 422, "spec.strategy.blueGreen.postPromotionAnalysis.criteria"},
		{"scale-down delay over a day", alice, app("a44", func(ad *platformv1.AppDeployment) {
			blueGreen(ad)
			ad.Spec.Strategy.BlueGreen.ScaleDownDelaySeconds = ptr.To[int32](86401)
		}), 422, "spec.strategy.blueGreen.scaleDownDelaySeconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.as.Create(ctx, tt.obj)
			var status apierrors.APIStatus
			if err == nil || !errors.As(err, &status) {
				t.Fatalf("create returned %v, want a rejection", err)
			}
			if got := status.Status().Code; got != tt.code {
				t.Errorf("HTTP %d, want %d: %v", got, tt.code, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("message does not name %s: %v", tt.field, err)
			}
			err = k8sClient.Get(ctx, client.ObjectKeyFromObject(tt.obj), &platformv1.AppDeployment{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("rejected object is stored (get: %v)", err)
			}
		})
	}
}

func TestAppDeployment_TheDesignDocumentsAnalysisIsAdmitted(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	ad.Spec.Strategy.CanaryCriteria = append(ad.Spec.Strategy.CanaryCriteria, platformv1.CanaryCriterion{
		// The Argo Rollouts AnalysisTemplate of the design documents, with
		// this operator's template variables.
		Name: "p95-latency",
		Query: `histogram_quantile(0.95, sum(rate(http_request_duration_seconds_bucket{service="{{ name }}",` +
			`track="{{track}}"}[5m])) by (le))`,
		SuccessCondition: "result < 0.05",
		CompareToStable:  platformv1.CompareToStable{MaxRatio: ptr.To(1.2)},
	})
	ad.Spec.Strategy.Analysis = platformv1.Analysis{IntervalSeconds: 30}
	if err := k8sClient.Create(ctx, ad); err != nil {
		t.Fatalf("create: %v", err)
	}
	stored := &platformv1.AppDeployment{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ad), stored); err != nil {
		t.Fatal(err)
	}
	want := platformv1.Analysis{IntervalSeconds: 30, MinMeasurements: 3, FailureLimit: 2, MinSamples: ptr.To[int32](10)}
	if diff := cmp.Diff(want, stored.Spec.Strategy.Analysis); diff != "" {
		t.Errorf("stored analysis settings, defaulted (-want +got):\n%s", diff)
	}
}

func TestAppDeployment_ABlueGreenReleaseIsAdmittedAndDefaulted(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	ad.Spec.Port = 8080
	ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyBlueGreen, BlueGreen: platformv1.BlueGreenStrategy{
		AutoPromotionSeconds: ptr.To[int32](60),
		PostPromotionAnalysis: platformv1.BlueGreenAnalysis{Criteria: ad.Spec.Strategy.CanaryCriteria,
			Analysis: platformv1.Analysis{IntervalSeconds: 10}},
	}}
	if err := k8sClient.Create(ctx, ad); err != nil {
		t.Fatalf("create: %v", err)
	}
	stored := &platformv1.AppDeployment{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ad), stored); err != nil {
		t.Fatal(err)
	}
	bg := stored.Spec.Strategy.BlueGreen
	want := platformv1.Analysis{IntervalSeconds: 10, MinMeasurements: 3, FailureLimit: 2, MinSamples: ptr.To[int32](10)}
	if ptr.Deref(bg.ScaleDownDelaySeconds, -1) != platformv1.DefaultScaleDownDelaySeconds ||
		!cmp.Equal(want, bg.PostPromotionAnalysis.Analysis) {
		t.Errorf("stored blue-green settings %+v, want scaleDownDelaySeconds %d and the analysis defaulted to %+v",
			bg, platformv1.DefaultScaleDownDelaySeconds, want)
	}
}

func TestAppDeployment_ScaleSubresourceChangesReplicas(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{appRule, deploymentRule})
	ad := sampleApp(t, ns)
	if err := alice.Create(ctx, ad); err != nil {
		t.Fatal(err)
	}
	scale := &autoscalingv1.Scale{}
	if err := alice.SubResource("scale").Get(ctx, ad, scale); err != nil {
		t.Fatalf("get /scale: %v", err)
	}
	if scale.Spec.Replicas != 3 {
		t.Errorf("/scale says %d replicas, want 3", scale.Spec.Replicas)
	}
	// What `kubectl scale appdeployment/order-service --replicas=5` sends: a
	// merge patch of /scale without a resourceVersion, so the controller's
	// own writes in between do not make it conflict.
	scaleTo := func(n int) error {
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n))
		return alice.SubResource("scale").Patch(ctx, ad, patch, client.WithSubResourceBody(&autoscalingv1.Scale{}))
	}
	if err := scaleTo(5); err != nil {
		t.Fatalf("patch /scale: %v", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ad), ad); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(ad.Spec.Replicas, 0); got != 5 {
		t.Errorf("spec.replicas = %d after scaling to 5", got)
	}
	// The schema's bound holds through /scale as well.
	err := scaleTo(101)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") {
		t.Errorf("scaling to 101 returned %v, want Invalid naming spec.replicas", err)
	}
}

// The request annotations and their requesters, spelled as users and the
// controller read them.
const (
	promoteKey   = "platform.example.com/promote"
	abortKey     = "platform.example.com/abort"
	retryKey     = "platform.example.com/retry"
	promoteByKey = "platform.example.com/promote-requested-by"
	abortByKey   = "platform.example.com/abort-requested-by"
	retryByKey   = "platform.example.com/retry-requested-by"
)

// requestAnnotations returns the stored AppDeployment's request and
// requester annotations (the ones present), and nothing else it carries.
func requestAnnotations(t *testing.T, ad *platformv1.AppDeployment) map[string]string {
	t.Helper()
	stored := &platformv1.AppDeployment{}
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(ad), stored); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range []string{promoteKey, abortKey, retryKey, promoteByKey, abortByKey, retryByKey} {
		if v, ok := stored.Annotations[k]; ok {
			out[k] = v
		}
	}
	return out
}

// patchAnnotations sets (a string) or removes (nil) annotations as c, by a
// JSON merge patch, which carries no resourceVersion: the controller's
// status writes cannot make it conflict.
func patchAnnotations(ctx context.Context, c client.Client, ad *platformv1.AppDeployment,
	annotations map[string]any) error {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, ad.DeepCopy(), client.RawPatch(types.MergePatchType, data))
}

func TestAppDeployment_RequestsAreStampedWithTheRequestingUser(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{appRule, deploymentRule})
	bob := userClient(t, ns, "bob", []rbacv1.PolicyRule{appRule})

	ad := sampleApp(t, ns)
	ad.Annotations = map[string]string{retryKey: "r1"}
	if err := alice.Create(ctx, ad); err != nil {
		t.Fatalf("create with a retry request as alice: %v", err)
	}
	want := map[string]string{retryKey: "r1", retryByKey: "alice"}
	if diff := cmp.Diff(want, requestAnnotations(t, ad)); diff != "" {
		t.Fatalf("after alice created it with a retry (-want +got):\n%s", diff)
	}

	if err := patchAnnotations(ctx, alice, ad, map[string]any{promoteKey: "p1"}); err != nil {
		t.Fatalf("promote as alice: %v", err)
	}
	want = map[string]string{retryKey: "r1", retryByKey: "alice", promoteKey: "p1", promoteByKey: "alice"}
	if diff := cmp.Diff(want, requestAnnotations(t, ad)); diff != "" {
		t.Fatalf("after alice promoted (-want +got):\n%s", diff)
	}

	// bob needs no right to create Deployments to promote: the spec is
	// unchanged.
	if err := patchAnnotations(ctx, bob, ad, map[string]any{promoteKey: "p2", abortKey: "a1"}); err != nil {
		t.Fatalf("promote and abort as bob: %v", err)
	}
	want = map[string]string{retryKey: "r1", retryByKey: "alice", promoteKey: "p2", promoteByKey: "bob",
		abortKey: "a1", abortByKey: "bob"}
	if diff := cmp.Diff(want, requestAnnotations(t, ad)); diff != "" {
		t.Errorf("after bob changed the promote and aborted (-want +got):\n%s", diff)
	}

	// A new request that carries someone else's name, as a manifest copied
	// from the stored object would, records its real author.
	if err := patchAnnotations(ctx, bob, ad, map[string]any{retryKey: "r2", retryByKey: "alice"}); err != nil {
		t.Fatalf("retry as bob, naming alice: %v", err)
	}
	want[retryKey], want[retryByKey] = "r2", "bob"
	if diff := cmp.Diff(want, requestAnnotations(t, ad)); diff != "" {
		t.Errorf("after bob retried naming alice (-want +got):\n%s", diff)
	}
}

func TestAppDeployment_RequesterCannotBeWrittenByHand(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{appRule, deploymentRule})
	bob := userClient(t, ns, "bob", []rbacv1.PolicyRule{appRule})

	ad := sampleApp(t, ns)
	ad.Annotations = map[string]string{promoteKey: "p1"}
	if err := alice.Create(ctx, ad); err != nil {
		t.Fatal(err)
	}
	stamped := map[string]string{promoteKey: "p1", promoteByKey: "alice"}
	if diff := cmp.Diff(stamped, requestAnnotations(t, ad)); diff != "" {
		t.Fatalf("after alice created it with a promote (-want +got):\n%s", diff)
	}

	tests := []struct {
		name  string
		as    client.Client
		patch map[string]any
		field string
	}{
		{"bob claims alice's promote", bob, map[string]any{promoteByKey: "bob"},
			"metadata.annotations[platform.example.com/promote-requested-by]"},
		{"alice renames her own promote", alice, map[string]any{promoteByKey: "alice-admin"},
			"metadata.annotations[platform.example.com/promote-requested-by]"},
		{"bob erases who promoted", bob, map[string]any{promoteByKey: nil},
			"metadata.annotations[platform.example.com/promote-requested-by]"},
		{"bob names alice for an abort nobody asked for", bob, map[string]any{abortByKey: "alice"},
			"metadata.annotations[platform.example.com/abort-requested-by]"},
		{"bob names carol as he withdraws the promote", bob, map[string]any{promoteKey: nil, promoteByKey: "carol"},
			"metadata.annotations[platform.example.com/promote-requested-by]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := patchAnnotations(ctx, tt.as, ad, tt.patch)
			var status apierrors.APIStatus
			if err == nil || !errors.As(err, &status) {
				t.Fatalf("patch returned %v, want a refusal", err)
			}
			if got := status.Status().Code; got != 403 {
				t.Errorf("HTTP %d, want 403: %v", got, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("message does not name %s: %v", tt.field, err)
			}
			if diff := cmp.Diff(stamped, requestAnnotations(t, ad)); diff != "" {
				t.Errorf("the refused patch changed the requests (-want +got):\n%s", diff)
			}
		})
	}

	// Withdrawing a request may take its requester with it.
	if err := patchAnnotations(ctx, bob, ad, map[string]any{promoteKey: nil, promoteByKey: nil}); err != nil {
		t.Errorf("withdrawing the promote with its requester: %v", err)
	}
	if diff := cmp.Diff(map[string]string{}, requestAnnotations(t, ad)); diff != "" {
		t.Errorf("after the withdrawal (-want +got):\n%s", diff)
	}
}

func TestAppDeployment_UnrelatedChangesLeaveTheStampsAlone(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{appRule, deploymentRule})
	bob := userClient(t, ns, "bob", []rbacv1.PolicyRule{appRule, deploymentRule})

	ad := sampleApp(t, ns)
	ad.Annotations = map[string]string{promoteKey: "p1", abortKey: "a1"}
	if err := alice.Create(ctx, ad); err != nil {
		t.Fatal(err)
	}
	stamped := map[string]string{promoteKey: "p1", promoteByKey: "alice", abortKey: "a1", abortByKey: "alice"}

	patch := []byte(`{"spec":{"image":"harbor.example.com/order-service:v1.2.4"},` +
		`"metadata":{"annotations":{"team":"orders"}}}`)
	if err := bob.Patch(ctx, ad.DeepCopy(), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("a new image and an annotation of bob's own: %v", err)
	}
	if diff := cmp.Diff(stamped, requestAnnotations(t, ad)); diff != "" {
		t.Errorf("after bob changed the spec (-want +got):\n%s", diff)
	}

	// A GitOps tool re-applies the same manifest on every sync, without the
	// requesters it never wrote: the apply must succeed and keep them.
	manifest := func(image string) map[string]any {
		return map[string]any{
			"apiVersion": platformv1.GroupVersion.String(), "kind": "AppDeployment",
			"metadata": map[string]any{"namespace": ns, "name": "gitops-app",
				"annotations": map[string]any{promoteKey: "p1"}},
			"spec": map[string]any{"image": image, "strategy": map[string]any{"type": "rolling"}},
		}
	}
	if err := applyAs(ctx, alice, manifest("harbor.example.com/order-service:v1.2.3")); err != nil {
		t.Fatalf("first apply as alice: %v", err)
	}
	if err := applyAs(ctx, bob, manifest("harbor.example.com/order-service:v1.2.4")); err != nil {
		t.Fatalf("re-apply as bob with a new image and the same promote: %v", err)
	}
	applied := &platformv1.AppDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gitops-app"}}
	want := map[string]string{promoteKey: "p1", promoteByKey: "alice"}
	if diff := cmp.Diff(want, requestAnnotations(t, applied)); diff != "" {
		t.Errorf("after the re-apply (-want +got):\n%s", diff)
	}
}

// An update of an AppDeployment being deleted goes past both webhooks: it is
// neither judged nor stamped, so nothing in admission can hold up a
// deletion.
func TestAppDeployment_RequestOnAnObjectBeingDeletedIsNotStamped(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{appRule, deploymentRule})

	const hold = "platform.example.com/test-hold"
	ad := sampleApp(t, ns)
	ad.Finalizers = []string{hold}
	if err := alice.Create(ctx, ad); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		release := []byte(`{"metadata":{"finalizers":null}}`)
		_ = k8sClient.Patch(ctx, ad.DeepCopy(), client.RawPatch(types.MergePatchType, release))
	})
	if err := alice.Delete(ctx, ad); err != nil {
		t.Fatal(err)
	}
	if err := patchAnnotations(ctx, alice, ad, map[string]any{promoteKey: "p1"}); err != nil {
		t.Fatalf("promote while being deleted: %v", err)
	}
	if diff := cmp.Diff(map[string]string{promoteKey: "p1"}, requestAnnotations(t, ad)); diff != "" {
		t.Errorf("after the promote (-want +got):\n%s", diff)
	}
}
