// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"maps"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// canaryImage is the image of the canary these tests release.
const canaryImage = "harbor.example.com/order-service:v1.2.4"

// createPodWithStatus creates a pod and then gives it status, as a kubelet
// would: ready, or with its container waiting in reason.
func createPodWithStatus(g Gomega, pod *corev1.Pod, ready bool, waiting string) {
	ctx := context.Background()
	pod.Spec = corev1.PodSpec{Containers: []corev1.Container{{Name: "app",
		Image: canaryImage}}}
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	readiness := corev1.ConditionFalse
	if ready {
		readiness = corev1.ConditionTrue
	}
	cs := corev1.ContainerStatus{Name: "app", Image: pod.Spec.Containers[0].Image, Ready: ready}
	if waiting != "" {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting, Message: "Back-off pulling image"}
	} else {
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
	}
	status := corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: readiness}},
		ContainerStatuses: []corev1.ContainerStatus{cs}}
	// The API server may have moved the pod on since its create.
	g.Eventually(func() error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		pod.Status = status
		return k8sClient.Status().Update(ctx, pod)
	}, timeout, poll).Should(Succeed())
}

// replicaSet is a ReplicaSet of pods labelled labels, as the Deployment
// controller makes them for owner (none when nil).
func replicaSet(ns, name string, labels map[string]string, owner *appsv1.Deployment) *appsv1.ReplicaSet {
	l := maps.Clone(labels)
	l["pod-template-hash"] = name
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app",
					Image: canaryImage}}}}},
	}
	if owner != nil {
		rs.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner,
			appsv1.SchemeGroupVersion.WithKind("Deployment"))}
	}
	return rs
}

// TestAppDeployment_ATenantsPodWithTheCanarysLabelsMovesNeitherPromotionNorRollback
// plays a tenant who copies a canary pod's labels onto pods of their own,
// one ready (to promote a canary whose pods are not) and one stuck in
// ImagePullBackOff (to roll a healthy canary back): the application counts
// only the pods of its own Deployments' ReplicaSets. A pod of the canary
// Deployment's ReplicaSet, made beside them, counts.
func TestAppDeployment_ATenantsPodWithTheCanarysLabelsMovesNeitherPromotionNorRollback(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	ad.Spec.Strategy.CanaryCriteria = nil // waits for promote once its pod is ready
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	g.Eventually(func(g Gomega) { rollOut(g, getDeployment(g, ns, "order-service")) }, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Status.Phase).To(Equal(platformv1.PhaseHealthy))
	}, timeout, poll).Should(Succeed())
	g.Eventually(func() error {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		got.Spec.Image = canaryImage
		return k8sClient.Update(ctx, got)
	}, timeout, poll).Should(Succeed())
	var canary *appsv1.Deployment
	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Canary).NotTo(BeNil())
		// Pods made before the canary started are an earlier attempt's.
		g.Expect(got.Status.Canary.StartedAt).NotTo(BeNil())
		canary = getDeployment(g, ns, "order-service-canary")
		g.Expect(canary.Spec.Replicas).To(HaveValue(Equal(int32(1))))
	}, timeout, poll).Should(Succeed())
	labels := canary.Spec.Template.Labels

	// The tenant's pods, with the canary's labels: one owned by nothing,
	// one of a ReplicaSet of the tenant's (which no Deployment of the
	// application controls).
	createPodWithStatus(g, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lookalike-ready",
		Labels: maps.Clone(labels)}}, true, "")
	tenantRS := replicaSet(ns, "lookalike", labels, nil)
	g.Expect(k8sClient.Create(ctx, tenantRS)).To(Succeed())
	createPodWithStatus(g, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lookalike-failing",
		Labels: maps.Clone(tenantRS.Labels), OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tenantRS,
			appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}}}, false, "ImagePullBackOff")

	unmoved := func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Canary).NotTo(BeNil(), "the canary ended: %+v", got.Status.LastOutcome)
		g.Expect(got.Status.Canary.ReadyReplicas).To(Or(BeNil(), HaveValue(BeZero())), "the canary's ready pods")
		g.Expect(got.Status.Canary.Step).NotTo(BeNil())
		g.Expect(got.Status.Canary.Step.ReadyAt).To(BeNil(), "the canary's step is ready")
		stable := getDeployment(g, ns, "order-service")
		g.Expect(stable.Spec.Replicas).To(HaveValue(Equal(int32(3))), "the stable Deployment shrank for a ready canary pod")
		g.Expect(stable.Spec.Template.Spec.Containers[0].Image).To(Equal("harbor.example.com/order-service:v1.2.3"))
	}
	g.Consistently(unmoved, 5*time.Second, poll).Should(Succeed())

	// The canary Deployment's own pod, through its ReplicaSet: it counts,
	// and the stable Deployment makes room for it.
	rs := replicaSet(ns, "order-service-canary-5d8f7c9b6", labels, canary)
	rsLabels := rs.Labels
	g.Expect(k8sClient.Create(ctx, rs)).To(Succeed())
	createPodWithStatus(g, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns,
		Name:   "order-service-canary-5d8f7c9b6-x1k2p",
		Labels: maps.Clone(rsLabels),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs,
			appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}}}, true, "")
	g.Eventually(func(g Gomega) {
		got := getApp(g, client.ObjectKeyFromObject(ad))
		g.Expect(got.Status.Canary).NotTo(BeNil(), "the canary ended: %+v", got.Status.LastOutcome)
		g.Expect(got.Status.Canary.ReadyReplicas).To(HaveValue(Equal(int32(1))))
		g.Expect(getDeployment(g, ns, "order-service").Spec.Replicas).To(HaveValue(Equal(int32(2))))
	}, timeout, poll).Should(Succeed())
}
