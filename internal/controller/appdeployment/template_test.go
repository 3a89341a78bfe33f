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

package appdeployment

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
)

func app() *platformv1.AppDeployment {
	return &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "order-service", Generation: 1},
		Spec: platformv1.AppDeploymentSpec{
			Image:    "harbor.example.com/order-service:v1.2.3",
			Replicas: ptr.To[int32](3),
			Port:     8080,
		},
	}
}

func TestPodTemplate_LabelsAndProbes(t *testing.T) {
	ad := app()
	ad.Spec.HealthCheck = platformv1.HealthCheck{Path: "/healthz", PeriodSeconds: 5}
	tmpl, rev := podTemplate(ad)
	wantLabels := map[string]string{
		"app.kubernetes.io/name":       "order-service",
		"app.kubernetes.io/version":    "v1.2.3",
		"app.kubernetes.io/managed-by": "platform-operator",
	}
	if diff := cmp.Diff(wantLabels, tmpl.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if len(rev) != 10 {
		t.Errorf("revision %q, want 10 hex digits", rev)
	}
	c := tmpl.Spec.Containers[0]
	wantProbe := &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/healthz", Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
		PeriodSeconds: 5, FailureThreshold: 3, SuccessThreshold: 1, TimeoutSeconds: 1,
	}
	if diff := cmp.Diff(wantProbe, c.ReadinessProbe); diff != "" {
		t.Errorf("readiness probe (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}, c.Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}

	track := forTrack(tmpl, rev, platformv1.TrackCanary)
	if track.Labels["platform.example.com/track"] != "canary" || track.Labels["platform.example.com/revision"] != rev {
		t.Errorf("track labels %v", track.Labels)
	}
	if _, ok := tmpl.Labels["platform.example.com/track"]; ok {
		t.Errorf("forTrack changed the template it was given")
	}
}

func TestPodTemplate_RevisionChangesExactlyWhenThePodsWould(t *testing.T) {
	_, base := podTemplate(app())
	same := app()
	same.Spec.Replicas = ptr.To[int32](7) // scale: same pods, more of them
	same.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30}
	same.Generation = 2
	if _, rev := podTemplate(same); rev != base {
		t.Errorf("replicas or strategy changed the revision: %s, want %s", rev, base)
	}
	for name, mutate := range map[string]func(*platformv1.AppDeployment){
		"image":   func(ad *platformv1.AppDeployment) { ad.Spec.Image = "harbor.example.com/order-service:v1.2.4" },
		"version": func(ad *platformv1.AppDeployment) { ad.Spec.Version = "v1.2.4" },
		"env":     func(ad *platformv1.AppDeployment) { ad.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "b"}} },
		"probe":   func(ad *platformv1.AppDeployment) { ad.Spec.HealthCheck = platformv1.HealthCheck{Path: "/ready"} },
	} {
		ad := app()
		mutate(ad)
		if _, rev := podTemplate(ad); rev == base {
			t.Errorf("a change of %s kept the revision %s", name, rev)
		}
	}
}
