// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// legacyDeployment is a Deployment as a Helm chart makes it: its own
// labels and selector, a container not named app.
func legacyDeployment(ns, name, image string) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/instance": name, "app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: image,
					Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}},
				}}, Volumes: []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{
					EmptyDir: &corev1.EmptyDirVolumeSource{}}}}},
			},
		},
	}
}

// adopting is an AppDeployment that adopts Deployment name with a rolling
// release.
func adopting(t *testing.T, ns, name string) *platformv1.AppDeployment {
	ad := sampleApp(t, ns)
	ad.Name = "web"
	ad.Spec.Image, ad.Spec.Version = "", ""
	ad.Spec.Port = 0
	ad.Spec.HealthCheck = platformv1.HealthCheck{}
	ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyRolling}
	ad.Spec.Replicas = ptr.To[int32](2)
	ad.Spec.WorkloadRef = platformv1.WorkloadRef{Name: name}
	return ad
}

// TestAppDeployment_WorkloadRefAdoptsADeploymentAndGivesItBackOnDelete
// adopts a Deployment: the AppDeployment runs its pod template as its
// own, pins its UID, scales it to 0 once its own pods are ready, releases
// a change of its template as a new revision, and scales it back up
// before it goes.
func TestAppDeployment_WorkloadRefAdoptsADeploymentAndGivesItBackOnDelete(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	legacy := legacyDeployment(ns, "legacy-web", "registry.example.com/web:v1.0.0")
	g.Expect(k8sClient.Create(ctx, legacy)).To(Succeed())
	ad := adopting(t, ns, legacy.Name)
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Finalizers).To(ContainElement(platformv1.WorkloadFinalizer))

	var d *appsv1.Deployment
	g.Eventually(func(g Gomega) {
		d = getDeployment(g, ns, "web")
		c := d.Spec.Template.Spec.Containers
		g.Expect(c).To(HaveLen(1))
		g.Expect(c[0].Name).To(Equal("web"), "the adopted container keeps its name")
		g.Expect(c[0].Image).To(Equal("registry.example.com/web:v1.0.0"))
		g.Expect(c[0].VolumeMounts).To(HaveLen(1))
		g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(platformv1.AppVersionLabel, "v1.0.0"))
		g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("app", "web"))
	}, timeout, poll).Should(Succeed())
	got := getApp(g, client.ObjectKeyFromObject(ad))
	g.Expect(got.Status.Workload).To(Equal(platformv1.WorkloadStatus{Name: legacy.Name, UID: legacy.UID}))
	g.Expect(ptr.Deref(getDeployment(g, ns, legacy.Name).Spec.Replicas, 1)).To(Equal(int32(2)),
		"scaled down before the AppDeployment's own pods are ready")
	g.Expect(getDeployment(g, ns, legacy.Name).OwnerReferences).To(BeEmpty())

	rollOut(g, d)
	g.Eventually(func(g Gomega) {
		g.Expect(ptr.Deref(getDeployment(g, ns, legacy.Name).Spec.Replicas, 1)).To(Equal(int32(0)))
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(eventsAbout(g, ns, ad.Name, "WorkloadScaledDown")).To(
			ContainElement(ContainSubstring("Scaled Deployment legacy-web to 0")))
	}, timeout, poll).Should(Succeed())

	// A new image in the adopted Deployment is a new revision.
	before := getApp(g, client.ObjectKeyFromObject(ad)).Status.CurrentRevision
	g.Eventually(func() error {
		cur := getDeployment(g, ns, legacy.Name)
		cur.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:v1.1.0"
		return k8sClient.Update(ctx, cur)
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		cur := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(cur.Status.CurrentRevision).NotTo(Equal(before))
		g.Expect(cur.Status.CurrentVersion).To(Equal("v1.1.0"))
		image := getDeployment(g, ns, "web").Spec.Template.Spec.Containers[0].Image
		g.Expect(image).To(Equal("registry.example.com/web:v1.1.0"))
	}, timeout, poll).Should(Succeed())

	g.Expect(k8sClient.Delete(ctx, ad)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(ptr.Deref(getDeployment(g, ns, legacy.Name).Spec.Replicas, 0)).To(Equal(int32(2)))
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ad), &platformv1.AppDeployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "AppDeployment still there: %v", err)
	}, timeout, poll).Should(Succeed())
}

// TestAppDeployment_WorkloadRefDoesNotFollowADeploymentMadeAgain deletes
// the adopted Deployment and makes another of the name: the AppDeployment
// says so and leaves its own Deployment as it was.
func TestAppDeployment_WorkloadRefDoesNotFollowADeploymentMadeAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	legacy := legacyDeployment(ns, "legacy-web", "registry.example.com/web:v1.0.0")
	g.Expect(k8sClient.Create(ctx, legacy)).To(Succeed())
	ad := adopting(t, ns, legacy.Name)
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Status.Workload.UID).NotTo(BeEmpty())
	}, timeout, poll).Should(Succeed())

	g.Expect(k8sClient.Delete(ctx, legacy)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		ready := apimeta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(platformv1.ReasonWorkloadNotFound), ready.Message)
	}, timeout, poll).Should(Succeed())
	again := legacyDeployment(ns, "legacy-web", "registry.example.com/other:v9.9.9")
	g.Expect(k8sClient.Create(ctx, again)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		ready := apimeta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionReady)
		g.Expect(ready.Reason).To(Equal(platformv1.ReasonWorkloadReplaced), ready.Message)
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseDegraded))
		g.Expect(got.Status.Workload.UID).To(Equal(legacy.UID))
	}, timeout, poll).Should(Succeed())
	g.Expect(getDeployment(g, ns, "web").Spec.Template.Spec.Containers[0].Image).To(
		Equal("registry.example.com/web:v1.0.0"))
}

// TestAppDeployment_WorkloadRefNeedsTheRightToScaleTheDeployment is the
// attack: a tenant who may create AppDeployments and Deployments, but not
// scale a co-tenant's Deployment, names it in workloadRef to have the
// operator scale it to 0. Admission refuses, at create and on a change of
// the ref.
func TestAppDeployment_WorkloadRefNeedsTheRightToScaleTheDeployment(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	victim := legacyDeployment(ns, "payments", "registry.example.com/payments:v3.0.0")
	g.Expect(k8sClient.Create(ctx, victim)).To(Succeed())
	readOwn := rbacv1.PolicyRule{APIGroups: []string{"apps"},
		Resources: []string{"deployments", "deployments/scale"}, Verbs: []string{"get", "update"},
		ResourceNames: []string{"mine"}}
	mallory := userClient(t, ns, "mallory", []rbacv1.PolicyRule{appRule, deploymentRule, readOwn})

	err := mallory.Create(ctx, adopting(t, ns, victim.Name))
	g.Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "create: %v", err)
	g.Expect(err.Error()).To(And(ContainSubstring("spec.workloadRef.name"), ContainSubstring("deployments.apps/scale")))
	t.Logf("create refused: %v", err)

	g.Expect(k8sClient.Create(ctx, legacyDeployment(ns, "mine", "registry.example.com/web:v1.0.0"))).To(Succeed())
	own := adopting(t, ns, "mine")
	g.Expect(mallory.Create(ctx, own)).To(Succeed())
	g.Eventually(func() error {
		cur := &platformv1.AppDeployment{}
		if err := mallory.Get(ctx, client.ObjectKeyFromObject(own), cur); err != nil {
			return err
		}
		cur.Spec.WorkloadRef.Name = victim.Name
		err := mallory.Update(ctx, cur)
		if apierrors.IsConflict(err) {
			return err
		}
		if err == nil || !strings.Contains(err.Error(), "spec.workloadRef.name") {
			t.Errorf("changing the ref to a Deployment mallory may not scale: %v", err)
		}
		return nil
	}, timeout, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(ptr.Deref(getDeployment(g, ns, victim.Name).Spec.Replicas, 1)).To(Equal(int32(2)))
	}, "2s", poll).Should(Succeed())
}
