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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
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
	time.Sleep(3*resyncPeriod + time.Second)
	g.Expect(versions(g)).To(Equal(before))
}
