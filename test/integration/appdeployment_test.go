// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/release"
)

// envtest runs no Deployment controller: these tests check what the
// operator writes (the children's shape, the status it derives from a
// Deployment's status) and play the Deployment controller where a test
// needs a rollout to finish. Releases against the real controllers are the
// kwok e2e tests'.

// getApp reads an AppDeployment.
func getApp(g Gomega, key client.ObjectKey) *platformv1.AppDeployment {
	ad := &platformv1.AppDeployment{}
	g.Expect(k8sClient.Get(context.Background(), key, ad)).To(Succeed())
	return ad
}

// getDeployment reads a Deployment.
func getDeployment(g Gomega, ns, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
	return d
}

// rollOut reports a Deployment as the Deployment controller would once every
// pod of its template is updated and available.
func rollOut(g Gomega, d *appsv1.Deployment) {
	n := ptr.Deref(d.Spec.Replicas, 1)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n,
		ReadyReplicas: n, AvailableReplicas: n}
	g.Expect(k8sClient.Status().Update(context.Background(), d)).To(Succeed())
}

func TestAppDeployment_SampleGetsAStableDeploymentOfTheDocumentedShape(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())

	var d *appsv1.Deployment
	g.Eventually(func(g Gomega) {
		d = getDeployment(g, ns, "order-service")
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(got.Status.CurrentVersion).To(Equal("v1.2.3"))
		g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.RevisionLabel, got.Status.CurrentRevision))
	}, timeout, poll).Should(Succeed())

	g.Expect(metav1.IsControlledBy(d, ad)).To(BeTrue())
	g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(3))))
	g.Expect(d.Spec.Selector.MatchLabels).To(Equal(map[string]string{
		platformv1.AppNameLabel: "order-service", platformv1.TrackLabel: platformv1.TrackStable}))
	g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.AppNameLabel, "order-service"))
	g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.AppVersionLabel, "v1.2.3"))
	g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.ManagedByLabel, platformv1.ManagedByValue))
	g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.TrackLabel, platformv1.TrackStable))
	g.Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("harbor.example.com/order-service:v1.2.3"))
	// A canary's stable Deployment never goes below its size in a rollout.
	g.Expect(d.Spec.Strategy.RollingUpdate.MaxUnavailable).To(HaveValue(Equal(intstr.FromInt32(0))))
	g.Expect(d.Spec.ProgressDeadlineSeconds).To(HaveValue(Equal(platformv1.DefaultProgressDeadlineSeconds)))
	canaryKey := client.ObjectKey{Namespace: ns, Name: "order-service-canary"}
	g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, canaryKey, &appsv1.Deployment{}))).
		To(BeTrue(), "the first version goes straight to stable")
	g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(ad), &corev1.Service{}))).
		To(BeTrue(), "no port, no Service")

	got := getApp(g, client.ObjectKeyFromObject(ad))
	g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseProgressing))
	g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, platformv1.ConditionReady)).To(BeFalse())
	g.Expect(got.Status.Selector).To(Equal("app.kubernetes.io/name=order-service"))

	// Once the Deployment reports its pods, the application is Ready.
	rollOut(g, d)
	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseHealthy), got.Status.Message)
		ready := meta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(got.Status.StableVersion).To(Equal("v1.2.3"))
		g.Expect(got.Status.StableImage).To(Equal("harbor.example.com/order-service:v1.2.3"))
		g.Expect(got.Status.ReadyReplicas).To(HaveValue(Equal(int32(3))))
		g.Expect(got.Status.Revisions).To(HaveLen(1))
		g.Expect(got.Status.LastOutcome.Result).To(Equal(platformv1.OutcomePromoted))
	}, timeout, poll).Should(Succeed())
}

func TestAppDeployment_PortMakesAServiceOverBothTracksAndItsRemovalDeletesIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	ad.Spec.Port = 8080
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())

	svc := &corev1.Service{}
	g.Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "order-service"}, svc)
	}, timeout, poll).Should(Succeed())
	g.Expect(metav1.IsControlledBy(svc, ad)).To(BeTrue())
	g.Expect(svc.Spec.Selector).To(Equal(map[string]string{platformv1.AppNameLabel: "order-service"}),
		"both tracks: traffic divides by ready pods")
	g.Expect(svc.Spec.Ports).To(HaveLen(1))
	g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(8080)))
	d := getDeployment(g, ns, "order-service")
	g.Expect(d.Spec.Template.Spec.Containers[0].Ports).To(ContainElement(HaveField("ContainerPort", int32(8080))))

	g.Eventually(func() error {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		got.Spec.Port = 0
		return k8sClient.Update(ctx, got)
	}, timeout, poll).Should(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), &corev1.Service{}))
	}, timeout, poll).Should(BeTrue())
}

func TestAppDeployment_AChildNameTakenByAnotherObjectIsNeverAdopted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	foreign := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "order-service", Labels: map[string]string{"team": "other"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "other"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "other:1"}}},
			},
		},
	}
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
	ad := sampleApp(t, ns)
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		ready := meta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(platformv1.ReasonNameTaken))
		g.Expect(ready.Message).To(ContainSubstring("Deployment order-service"))
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseDegraded))
	}, timeout, poll).Should(Succeed())
	d := getDeployment(g, ns, "order-service")
	g.Expect(d.OwnerReferences).To(BeEmpty())
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("other:1"), "the foreign Deployment is left alone")
}

func TestAppDeployment_ScaleSubresourceResizesTheStableDeployment(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	g.Eventually(func(g Gomega) { getDeployment(g, ns, "order-service") }, timeout, poll).Should(Succeed())

	scale := &autoscalingv1.Scale{}
	g.Expect(k8sClient.SubResource("scale").Get(ctx, ad, scale)).To(Succeed())
	scale.Spec.Replicas = 5
	g.Expect(k8sClient.SubResource("scale").Update(ctx, ad, client.WithSubResourceBody(scale))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getDeployment(g, ns, "order-service").Spec.Replicas).To(HaveValue(Equal(int32(5))))
	}, timeout, poll).Should(Succeed())
}

func TestAppDeployment_ACanaryStartsBesideTheFullStableAndIsRecordedFirst(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	// Nothing measures the canary here (no Prometheus): it waits for promote.
	ad.Spec.Strategy.CanaryCriteria = nil
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	g.Eventually(func(g Gomega) { rollOut(g, getDeployment(g, ns, "order-service")) }, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Status.Phase).To(Equal(platformv1.PhaseHealthy))
	}, timeout, poll).Should(Succeed())

	g.Eventually(func() error {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		got.Spec.Image = "harbor.example.com/order-service:v1.2.4"
		return k8sClient.Update(ctx, got)
	}, timeout, poll).Should(Succeed())

	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Canary).NotTo(BeNil())
		g.Expect(got.Status.Canary.Version).To(Equal("v1.2.4"))
		g.Expect(got.Status.Canary.Step.Index).To(HaveValue(Equal(int32(0))))
		g.Expect(got.Status.Canary.Step.Total).To(Equal(int32(1)))
		canary := getDeployment(g, ns, "order-service-canary")
		g.Expect(canary.Spec.Replicas).To(HaveValue(Equal(int32(1))), "30% of 3 is one pod")
		g.Expect(canary.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.TrackLabel, platformv1.TrackCanary))
		g.Expect(canary.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.RevisionLabel, got.Status.CurrentRevision))
		g.Expect(canary.Spec.Template.Spec.Containers[0].Image).To(Equal("harbor.example.com/order-service:v1.2.4"))
	}, timeout, poll).Should(Succeed())

	// No canary pod is ready (envtest has no kubelet): the stable Deployment
	// keeps its full size and its version.
	g.Consistently(func(g Gomega) {
		stable := getDeployment(g, ns, "order-service")
		g.Expect(stable.Spec.Replicas).To(HaveValue(Equal(int32(3))))
		g.Expect(stable.Spec.Template.Spec.Containers[0].Image).To(Equal("harbor.example.com/order-service:v1.2.3"))
	}, 3*time.Second, poll).Should(Succeed())
}

func TestAppDeployment_WithoutPrometheusAnAnalysedCanaryWaitsInItsPreflightWithNothingChanged(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns) // canaryCriteria: error_rate; the manager here has no --prometheus-address
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	g.Eventually(func(g Gomega) { rollOut(g, getDeployment(g, ns, "order-service")) }, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Status.Phase).To(Equal(platformv1.PhaseHealthy))
	}, timeout, poll).Should(Succeed())
	g.Eventually(func() error {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		got.Spec.Image = "harbor.example.com/order-service:v1.2.4"
		return k8sClient.Update(ctx, got)
	}, timeout, poll).Should(Succeed())

	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhasePaused), got.Status.Message)
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseProviderError))
		g.Expect(got.Status.Message).To(ContainSubstring("--prometheus-address"))
		g.Expect(got.Status.Canary).NotTo(BeNil())
		g.Expect(got.Status.Canary.Analysis).NotTo(BeNil())
		g.Expect(got.Status.Canary.Analysis.PreflightAt).To(BeNil())
		g.Expect(got.Status.Canary.Analysis.Criteria).To(ConsistOf(And(
			HaveField("Name", "error_rate"), HaveField("LastResult", platformv1.MeasurementError))))
	}, timeout, poll).Should(Succeed())
	// Nothing changed: no canary Deployment, the stable one whole.
	g.Consistently(func(g Gomega) {
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "order-service-canary"}, &appsv1.Deployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "canary Deployment: %v", err)
		stable := getDeployment(g, ns, "order-service")
		g.Expect(stable.Spec.Replicas).To(HaveValue(Equal(int32(3))))
		g.Expect(stable.Spec.Template.Spec.Containers[0].Image).To(Equal("harbor.example.com/order-service:v1.2.3"))
	}, 3*time.Second, poll).Should(Succeed())
}

func TestAppDeployment_IdleApplicationsAreNeverWritten(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	ad.Spec.Port = 8080
	ad.Spec.Env = []corev1.EnvVar{
		{Name: "A", Value: "1"},
		{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	ad.Spec.HealthCheck = platformv1.HealthCheck{Path: "/healthz"}
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	g.Eventually(func(g Gomega) { rollOut(g, getDeployment(g, ns, "order-service")) }, timeout, poll).Should(Succeed())

	versions := func(g Gomega) map[string]string {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseHealthy))
		svc := &corev1.Service{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ad), svc)).To(Succeed())
		return map[string]string{
			"app":        got.ResourceVersion,
			"deployment": getDeployment(g, ns, "order-service").ResourceVersion,
			"service":    svc.ResourceVersion,
		}
	}
	var before map[string]string
	g.Eventually(func(g Gomega) {
		first := versions(g)
		time.Sleep(time.Second)
		before = versions(g)
		g.Expect(before).To(Equal(first))
	}, timeout, poll).Should(Succeed())
	throughResyncs(t, ad, 3, func(g Gomega) { g.Expect(versions(g)).To(Equal(before)) })
}

// TestAppDeployment_TemplateReachesTheDeploymentAsWritten creates an
// AppDeployment whose template has what a real application needs: its
// labels and annotations are stored (the schema keeps the embedded
// metadata), the API server admits the Deployment rendered from it, the
// sidecar, volumes, envFrom, probes and pod fields pass through, and the
// spec's own fields fill the app container, wherever it stands.
func TestAppDeployment_TemplateReachesTheDeploymentAsWritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	ad.Spec.Port = 8080
	ad.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "prod"}}
	ad.Spec.Template = &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"team": "orders"},
			Annotations: map[string]string{"prometheus.io/scrape": "true"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{Name: "proxy", Image: "envoyproxy/envoy:v1.30.1"},
				{
					Name: "app",
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "orders-config"}}}},
					VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}},
					StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, FailureThreshold: 30},
				},
			},
			Volumes: []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			NodeSelector:                  map[string]string{"pool": "apps"},
			Tolerations:                   []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: ptr.To[int64](45),
		},
	}
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())

	stored := getApp(g, client.ObjectKeyFromObject(ad))
	g.Expect(stored.Spec.Template).NotTo(BeNil())
	g.Expect(stored.Spec.Template.Labels).To(HaveKeyWithValue("team", "orders"), "template labels are pruned")
	g.Expect(stored.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/scrape", "true"))

	var d *appsv1.Deployment
	g.Eventually(func(g Gomega) {
		d = getDeployment(g, ns, "order-service")
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.RevisionLabel, got.Status.CurrentRevision))
	}, timeout, poll).Should(Succeed())
	pod := d.Spec.Template
	g.Expect(pod.Labels).To(HaveKeyWithValue("team", "orders"))
	g.Expect(pod.Labels).To(HaveKeyWithValue(platformv1.AppNameLabel, "order-service"))
	g.Expect(pod.Annotations).To(HaveKeyWithValue("prometheus.io/scrape", "true"))
	g.Expect(pod.Spec.Containers).To(HaveLen(2))
	g.Expect(pod.Spec.Containers[0].Name).To(Equal("proxy"))
	app := pod.Spec.Containers[1]
	g.Expect(app.Name).To(Equal("app"))
	g.Expect(app.Image).To(Equal(ad.Spec.Image))
	g.Expect(app.Env).To(Equal([]corev1.EnvVar{{Name: "MODE", Value: "prod"}}))
	g.Expect(app.EnvFrom).To(HaveLen(1))
	g.Expect(app.VolumeMounts).To(HaveLen(1))
	g.Expect(app.StartupProbe).NotTo(BeNil())
	g.Expect(app.Ports).To(ContainElement(HaveField("ContainerPort", int32(8080))))
	g.Expect(pod.Spec.Volumes).To(HaveLen(1))
	g.Expect(pod.Spec.NodeSelector).To(HaveKeyWithValue("pool", "apps"))
	g.Expect(pod.Spec.Tolerations).To(HaveLen(1))
	g.Expect(pod.Spec.TerminationGracePeriodSeconds).To(HaveValue(Equal(int64(45))))

	rollOut(g, d)
	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseHealthy), got.Status.Message)
		g.Expect(got.Status.StableImage).To(Equal(ad.Spec.Image), "the app container's image, not the sidecar's")
	}, timeout, poll).Should(Succeed())

	// A template that only places the pods needs no containers: the app
	// container is added.
	placed := sampleApp(t, ns)
	placed.Name = "placed"
	placed.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"pool": "apps"}}}
	g.Expect(k8sClient.Create(ctx, placed)).To(Succeed())
	g.Eventually(func(g Gomega) {
		d := getDeployment(g, ns, "placed")
		g.Expect(d.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", "apps"))
		g.Expect(d.Spec.Template.Spec.Containers).To(ConsistOf(HaveField("Name", "app")))
	}, timeout, poll).Should(Succeed())
}

// TestAppDeployment_ARefusedApplyIsSaidInStatus gives an AppDeployment a
// template the Deployment API refuses (a mount of a volume it does not
// have): status says ApplyFailed with the API server's answer, in the same
// pass, and an event says it once.
func TestAppDeployment_ARefusedApplyIsSaidInStatus(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	ad.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}},
	}}}}
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseProgressing))
		progressing := meta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionProgressing)
		g.Expect(progressing).NotTo(BeNil())
		g.Expect(progressing.Reason).To(Equal(platformv1.ReasonApplyFailed))
		g.Expect(got.Status.Message).To(ContainSubstring(`volumeMounts[0].name: Not found: "cache"`))
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		var events eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range events.Items {
			if e.Regarding.Name == ad.Name {
				reasons = append(reasons, e.Reason)
			}
		}
		g.Expect(reasons).To(ContainElement(platformv1.ReasonApplyFailed))
	}, timeout, poll).Should(Succeed())
	g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(ad), &appsv1.Deployment{}))).To(BeTrue())
}

// TestAppDeployment_HandEditsOfItsChildrenArePutBack edits, as a user with
// kubectl edit would, what the operator sets on the stable Deployment (its
// replicas, its image, a label) and on the Service (its selector): each is
// put back.
func TestAppDeployment_HandEditsOfItsChildrenArePutBack(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	ad.Spec.Port = 8080
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "order-service"}
	var want *appsv1.Deployment
	g.Eventually(func(g Gomega) {
		want = getDeployment(g, ns, "order-service")
		g.Expect(k8sClient.Get(ctx, key, &corev1.Service{})).To(Succeed())
	}, timeout, poll).Should(Succeed())

	edits := []struct {
		name string
		edit func(*appsv1.Deployment)
		back func(Gomega, *appsv1.Deployment)
	}{
		{"replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](7) },
			func(g Gomega, d *appsv1.Deployment) { g.Expect(d.Spec.Replicas).To(Equal(want.Spec.Replicas)) }},
		{"image", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "registry.example.com/other:v6" },
			func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(want.Spec.Template.Spec.Containers[0].Image))
			}},
		{"label", func(d *appsv1.Deployment) { d.Labels[platformv1.ManagedByLabel] = "someone-else" },
			func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Labels).To(HaveKeyWithValue(platformv1.ManagedByLabel, platformv1.ManagedByValue))
			}},
	}
	for _, e := range edits {
		g.Eventually(func() error {
			d := &appsv1.Deployment{}
			if err := k8sClient.Get(ctx, key, d); err != nil {
				return err
			}
			e.edit(d)
			return k8sClient.Update(ctx, d)
		}, timeout, poll).Should(Succeed(), e.name)
		g.Eventually(func(g Gomega) { e.back(g, getDeployment(g, ns, "order-service")) }, timeout, poll).
			Should(Succeed(), "the %s edit is put back", e.name)
	}

	g.Eventually(func() error {
		svc := &corev1.Service{}
		if err := k8sClient.Get(ctx, key, svc); err != nil {
			return err
		}
		svc.Spec.Selector = map[string]string{platformv1.AppNameLabel: "someone-elses-app"}
		return k8sClient.Update(ctx, svc)
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		svc := &corev1.Service{}
		g.Expect(k8sClient.Get(ctx, key, svc)).To(Succeed())
		g.Expect(svc.Spec.Selector).To(Equal(map[string]string{platformv1.AppNameLabel: "order-service"}))
	}, timeout, poll).Should(Succeed(), "the Service's selector is put back")
}

// TestAppDeployment_EachRevisionIsKeptInAControllerRevision releases three
// revisions of a rolling AppDeployment: each gets a ControllerRevision it
// owns with its pod fields, template included, and those of revisions
// neither stable, asked for nor in status.revisions (limit 1) are deleted.
func TestAppDeployment_EachRevisionIsKeptInAControllerRevision(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyRolling}
	ad.Spec.Rollback.RevisionHistoryLimit = ptr.To[int32](1)
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())

	revisions := func(g Gomega) map[string]*platformv1.AppDeploymentSpec {
		var list appsv1.ControllerRevisionList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		out := map[string]*platformv1.AppDeploymentSpec{}
		for i := range list.Items {
			cr := &list.Items[i]
			g.Expect(metav1.IsControlledBy(cr, getApp(g, client.ObjectKeyFromObject(ad)))).To(BeTrue())
			spec, err := release.RevisionSpec(cr)
			g.Expect(err).NotTo(HaveOccurred())
			out[cr.Labels[platformv1.RevisionLabel]] = spec
		}
		return out
	}
	// released waits for the spec's revision to be stable and returns it.
	released := func() string {
		var rev string
		g.Eventually(func(g Gomega) {
			got := getApp(g, client.ObjectKeyFromObject(ad))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation), "the status describes the spec")
			d := getDeployment(g, ns, ad.Name)
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.RevisionLabel, got.Status.CurrentRevision))
			if d.Status.ObservedGeneration != d.Generation || d.Status.UpdatedReplicas != ptr.Deref(d.Spec.Replicas, 1) {
				rollOut(g, d)
			}
			got = getApp(g, client.ObjectKeyFromObject(ad))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation), "the status describes the spec")
			g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseHealthy), got.Status.Message)
			g.Expect(got.Status.StableRevision).To(Equal(got.Status.CurrentRevision))
			rev = got.Status.CurrentRevision
		}, timeout, poll).Should(Succeed())
		return rev
	}
	edit := func(e func(*platformv1.AppDeployment)) {
		g.Eventually(func() error {
			got := getApp(g, client.ObjectKeyFromObject(ad))
			e(got)
			return k8sClient.Update(ctx, got)
		}, timeout, poll).Should(Succeed())
	}

	first := released()
	g.Eventually(func(g Gomega) {
		g.Expect(revisions(g)).To(HaveKey(first))
	}, timeout, poll).Should(Succeed())
	g.Expect(revisions(g)[first].Image).To(Equal(ad.Spec.Image))

	edit(func(got *platformv1.AppDeployment) {
		got.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Env: []corev1.EnvVar{{Name: "FEATURE", Value: "on"}}}}}}
	})
	second := released()
	g.Expect(second).NotTo(Equal(first))
	g.Eventually(func(g Gomega) {
		revs := revisions(g)
		g.Expect(revs).To(HaveKey(second))
		g.Expect(revs[second].Template).NotTo(BeNil(), "the template is part of the revision")
		g.Expect(revs[second].Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "FEATURE", Value: "on"}))
	}, timeout, poll).Should(Succeed())

	edit(func(got *platformv1.AppDeployment) { got.Spec.Image = canaryImage })
	third := released()
	// status.revisions keeps one: only the third is stable, asked for or
	// listed.
	g.Eventually(func(g Gomega) {
		revs := revisions(g)
		g.Expect(revs).To(HaveLen(1), "revisions %v", revs)
		g.Expect(revs).To(HaveKey(third))
	}, timeout, poll).Should(Succeed())
}
