// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/podsecurity"
	"github.com/example/platform-operator/internal/testutil"
)

// restrict labels a namespace as enforcing the restricted Pod Security
// Standard.
func restrict(g Gomega, name string) {
	ns := &corev1.Namespace{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Name: name}, ns)).To(Succeed())
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[podsecurity.EnforceLabel] = podsecurity.Restricted
	g.Expect(k8sClient.Update(context.Background(), ns)).To(Succeed())
	// The webhooks read the label from the manager's cache: what the test
	// creates next must meet it there.
	g.Eventually(func() (bool, error) {
		return testutil.RestrictedAdmitted(context.Background(), k8sClient, name)
	}, timeout, poll).Should(BeTrue(), "admission sees %s restricted", name)
}

// restrictedContainer is what the webhook stores on a container that says
// nothing of its security.
var restrictedContainer = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
	Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}

func TestPodSecurity_ARestrictedNamespaceGetsTheRestrictedDefaultsAtCreate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	restrict(g, ns)

	ad := sampleApp(t, ns)
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	stored := getApp(g, client.ObjectKeyFromObject(ad))
	g.Expect(stored.Spec.Template).NotTo(BeNil(), "the design documents' manifest gets a template")
	pod := stored.Spec.Template.Spec
	g.Expect(pod.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
	g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
	g.Expect(pod.Containers).To(HaveLen(1))
	g.Expect(pod.Containers[0].Name).To(Equal(platformv1.AppContainerName))
	g.Expect(pod.Containers[0].SecurityContext).To(Equal(restrictedContainer))
	// The rendered Deployment carries them.
	g.Eventually(func(g Gomega) {
		d := getDeployment(g, ns, ad.Name)
		g.Expect(d.Spec.Template.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
		g.Expect(d.Spec.Template.Spec.Containers[0].SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
	}, timeout, poll).Should(Succeed())

	task := testutil.NewScheduleTask(ns, "backup")
	g.Expect(k8sClient.Create(ctx, task)).To(Succeed())
	storedTask := &platformv1.ScheduleTask{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(task), storedTask)).To(Succeed())
	sc := storedTask.Spec.SecurityContext
	g.Expect(sc).NotTo(BeNil())
	g.Expect(sc.RunAsNonRoot).To(HaveValue(BeTrue()))
	g.Expect(sc.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
	g.Expect(sc.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
	g.Expect(sc.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))

	// A task's template gets them on every container and the pod; one the
	// author set is kept as written.
	withTemplate := testutil.NewScheduleTask(ns, "export")
	withTemplate.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "fetch", Image: "busybox:1.36"}},
		Containers: []corev1.Container{{Name: "shipper", Image: "shipper:v1", SecurityContext: &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}}}}},
	}}
	g.Expect(k8sClient.Create(ctx, withTemplate)).To(Succeed())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(withTemplate), storedTask)).To(Succeed())
	tmpl := storedTask.Spec.Template.Spec
	g.Expect(tmpl.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
	g.Expect(tmpl.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
	g.Expect(tmpl.InitContainers[0].SecurityContext).To(Equal(restrictedContainer))
	g.Expect(tmpl.Containers).To(HaveLen(1), "the task container comes from spec.securityContext, not the template")
	g.Expect(tmpl.Containers[0].SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("NET_RAW")))
	g.Expect(tmpl.Containers[0].SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
	g.Expect(storedTask.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
	g.Eventually(func(g Gomega) {
		cj := cronJobOf(g, withTemplate)
		pod := cj.Spec.JobTemplate.Spec.Template.Spec
		g.Expect(pod.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
		g.Expect(pod.InitContainers[0].SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
		g.Expect(pod.Containers[0].Name).To(Equal(platformv1.TaskContainerName))
		g.Expect(pod.Containers[0].SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
	}, timeout, poll).Should(Succeed())
}

func TestPodSecurity_ElsewhereAndOnUpdateNothingIsAdded(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	task := testutil.NewScheduleTask(ns, "backup")
	g.Expect(k8sClient.Create(ctx, task)).To(Succeed())
	g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Spec.Template).To(BeNil())

	// The namespace starts enforcing later: an edit of an existing object
	// adds nothing (no release of every application at once).
	restrict(g, ns)
	g.Eventually(func() error {
		cur := getApp(g, client.ObjectKeyFromObject(ad))
		cur.Spec.Replicas = ptr.To[int32](2)
		return k8sClient.Update(ctx, cur)
	}, timeout, poll).Should(Succeed())
	g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Spec.Template).To(BeNil())
	g.Eventually(func() error {
		cur := &platformv1.ScheduleTask{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(task), cur); err != nil {
			return err
		}
		cur.Spec.Args = []string{"again"}
		return k8sClient.Update(ctx, cur)
	}, timeout, poll).Should(Succeed())
	storedTask := &platformv1.ScheduleTask{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(task), storedTask)).To(Succeed())
	g.Expect(storedTask.Spec.SecurityContext).To(BeNil())
}
