// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

// TestPodTemplate_WithoutATemplateTheRevisionIsAsBefore pins the revisions
// of two AppDeployments without spec.template to what the operator rendered
// before templates existed: a changed rendering would start a release of
// every application when the operator is upgraded.
func TestPodTemplate_WithoutATemplateTheRevisionIsAsBefore(t *testing.T) {
	ad := app()
	if _, rev := podTemplate(ad); rev != "221f5f7278" {
		t.Errorf("plain AppDeployment: revision %s, want 221f5f7278 as before templates", rev)
	}
	ad.Spec.HealthCheck = platformv1.HealthCheck{Path: "/healthz", PeriodSeconds: 5}
	ad.Spec.Command = []string{"/app"}
	ad.Spec.Args = []string{"--serve"}
	ad.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "prod"}}
	ad.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}
	ad.Spec.ServiceAccountName = "orders"
	ad.Spec.Version = "v1.2.3"
	ad.Spec.Replicas = ptr.To[int32](2)
	if _, rev := podTemplate(ad); rev != "c7c5167f4c" {
		t.Errorf("AppDeployment with every container field: revision %s, want c7c5167f4c as before templates", rev)
	}
}

// TestPodTemplate_TemplatePassesThroughAndTheSpecWinsOnTheAppContainer
// renders a template with a sidecar, an init container, a volume, envFrom
// and a startup probe on the app container, and the pod fields a real
// application sets.
func TestPodTemplate_TemplatePassesThroughAndTheSpecWinsOnTheAppContainer(t *testing.T) {
	ad := app()
	ad.Spec.HealthCheck = platformv1.HealthCheck{Path: "/healthz"}
	ad.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "EXTRA", Value: "1"}}
	ad.Spec.ServiceAccountName = "shop-sa"
	startup := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
		FailureThreshold: 30}
	sidecar := corev1.Container{Name: "proxy", Image: "envoy:v1.30", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](101)}}
	ad.Spec.Template = &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"team": "shop"},
			Annotations: map[string]string{"prometheus.io/scrape": "true"},
		},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "migrate", Image: "orders-migrate:v1"}},
			Containers: []corev1.Container{sidecar, {
				Name:         "app",
				Image:        "ignored:v0",
				Env:          []corev1.EnvVar{{Name: "MODE", Value: "dev"}, {Name: "KEEP", Value: "yes"}},
				EnvFrom:      []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shop"}}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}},
				StartupProbe: startup,
				Ports:        []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}},
			}},
			Volumes:            []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			NodeSelector:       map[string]string{"pool": "apps"},
			Tolerations:        []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			ServiceAccountName: "template-sa",
			PriorityClassName:  "high",
		},
	}
	before := ad.Spec.Template.DeepCopy()
	tmpl, rev := podTemplate(ad)
	if diff := cmp.Diff(before, ad.Spec.Template); diff != "" {
		t.Errorf("podTemplate changed the spec's template (-before +after):\n%s", diff)
	}
	if tmpl.Labels["team"] != "shop" || tmpl.Labels[platformv1.AppNameLabel] != "order-service" {
		t.Errorf("labels %v, want the template's and the operator's", tmpl.Labels)
	}
	if tmpl.Annotations["prometheus.io/scrape"] != "true" {
		t.Errorf("annotations %v, want the template's kept", tmpl.Annotations)
	}
	pod := tmpl.Spec
	if len(pod.Containers) != 2 || pod.Containers[0].Name != "proxy" || pod.Containers[1].Name != "app" {
		t.Fatalf("containers %v, want the template's order: proxy, app", names(pod.Containers))
	}
	if diff := cmp.Diff(sidecar, pod.Containers[0]); diff != "" {
		t.Errorf("the sidecar was changed (-want +got):\n%s", diff)
	}
	c := pod.Containers[1]
	if c.Image != ad.Spec.Image {
		t.Errorf("app image %s, want the spec's %s", c.Image, ad.Spec.Image)
	}
	wantEnv := []corev1.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "KEEP", Value: "yes"}, {Name: "EXTRA", Value: "1"}}
	if diff := cmp.Diff(wantEnv, c.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	wantPorts := []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(wantPorts, c.Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if !cmp.Equal(c.StartupProbe, startup) {
		t.Errorf("startup probe %v, want the template's", c.StartupProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("readiness probe %v, want healthCheck's", c.ReadinessProbe)
	}
	if len(c.EnvFrom) != 1 || len(c.VolumeMounts) != 1 {
		t.Errorf("envFrom %v, volumeMounts %v: want the template's", c.EnvFrom, c.VolumeMounts)
	}
	if pod.ServiceAccountName != "shop-sa" {
		t.Errorf("serviceAccountName %s, want the spec's", pod.ServiceAccountName)
	}
	if len(pod.InitContainers) != 1 || len(pod.Volumes) != 1 || pod.NodeSelector["pool"] != "apps" ||
		len(pod.Tolerations) != 1 || pod.PriorityClassName != "high" {
		t.Errorf("pod fields not passed through: %+v", pod)
	}
	ad.Spec.Template.Spec.Tolerations = nil
	if _, other := podTemplate(ad); other == rev {
		t.Errorf("revision %s did not change with the template", rev)
	}
}

func TestPodTemplate_AppContainerIsAddedFirstAndUserSecurityContextIsKept(t *testing.T) {
	ad := app()
	ad.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}},
		Containers: []corev1.Container{{Name: "log-shipper", Image: "fluent-bit:3"}},
	}}
	tmpl, _ := podTemplate(ad)
	if got := names(tmpl.Spec.Containers); !cmp.Equal(got, []string{"app", "log-shipper"}) {
		t.Fatalf("containers %v, want app added first", got)
	}
	// The pod chose its seccomp profile: the app container does not
	// override it with the runtime's default.
	want := &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false)}
	if diff := cmp.Diff(want, tmpl.Spec.Containers[0].SecurityContext); diff != "" {
		t.Errorf("app security context (-want +got):\n%s", diff)
	}
	if p := tmpl.Spec.SecurityContext.SeccompProfile; p.Type != corev1.SeccompProfileTypeLocalhost {
		t.Errorf("pod seccomp %v, want the template's", p)
	}

	ad.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app",
		SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
	tmpl, _ = podTemplate(ad)
	if diff := cmp.Diff(&corev1.SecurityContext{Privileged: ptr.To(true)}, tmpl.Spec.Containers[0].SecurityContext); diff != "" {
		t.Errorf("a security context the template sets is kept as written (-want +got):\n%s", diff)
	}
}

func names(cs []corev1.Container) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}
