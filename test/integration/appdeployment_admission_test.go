/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
			CanaryCriteria: []platformv1.CanaryCriterion{{Metric: platformv1.MetricErrorRate, Threshold: 0.5}},
		},
		Rollback: platformv1.RollbackPolicy{OnFailure: platformv1.FailureRollback, RevisionHistoryLimit: ptr.To[int32](10)},
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
			ad.Spec.Strategy.CanaryCriteria[0].Threshold = 150
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

func TestAppDeployment_ScaleSubresourceChangesReplicas(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{appRule, deploymentRule})
	ad := sampleApp(t, ns)
	if err := alice.Create(ctx, ad); err != nil {
		t.Fatal(err)
	}
	// What `kubectl scale appdeployment/order-service --replicas=5` sends.
	scale := &autoscalingv1.Scale{}
	if err := alice.SubResource("scale").Get(ctx, ad, scale); err != nil {
		t.Fatalf("get /scale: %v", err)
	}
	if scale.Spec.Replicas != 3 {
		t.Errorf("/scale says %d replicas, want 3", scale.Spec.Replicas)
	}
	scale.Spec.Replicas = 5
	if err := alice.SubResource("scale").Update(ctx, ad, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("update /scale: %v", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ad), ad); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(ad.Spec.Replicas, 0); got != 5 {
		t.Errorf("spec.replicas = %d after scaling to 5", got)
	}
	// The schema's bound holds through /scale as well.
	scale.Spec.Replicas = 101
	scale.ResourceVersion = ""
	err := alice.SubResource("scale").Update(ctx, ad, client.WithSubResourceBody(scale))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") {
		t.Errorf("scaling to 101 returned %v, want Invalid naming spec.replicas", err)
	}
}
