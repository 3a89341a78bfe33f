//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// TestAppDeployment_WorkloadRefAdoptsAHelmReleaseAndCanariesItsNextImage
// installs a small chart (testdata/charts/web: a Deployment and a Service
// as `helm create` shapes them) with `helm install`, adopts its Deployment
// with spec.workloadRef, and releases the chart's next image, set by
// `helm upgrade` with the chart's replicas at 0 as docs/appdeployment.md
// says, through a canary to promotion. Named after the chart's
// app.kubernetes.io/name, the AppDeployment's pods keep the chart's labels,
// so the chart's own Service reaches them once the Deployment is at 0;
// undo is refused, the Deployment being what to roll back.
func TestAppDeployment_WorkloadRefAdoptsAHelmReleaseAndCanariesItsNextImage(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	const release = "shop"
	chart := filepath.Join(cluster.Repo, "test", "e2e", "testdata", "charts", "web")
	helm := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(cluster.Repo, "bin", "helm"),
			append(args, "-n", ns, "--kubeconfig", cluster.Kubeconfig)...)
		out, err := cmd.CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(out))
	}
	helm("install", release, chart)

	ad := app(ns, func(ad *platformv1.AppDeployment) {
		ad.Name = "web"
		ad.Spec.Image, ad.Spec.WorkloadRef = "", platformv1.WorkloadRef{Name: release}
	})
	released(t, ad)
	got := waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(deployment(g, t, ns, release).Spec.Replicas).To(HaveValue(BeZero()),
			"the adopted Deployment is scaled to 0 once the AppDeployment's pods are ready")
	})
	g.Expect(got.Status.StableVersion).To(Equal(v123), "the version is the tag of the chart's image")
	g.Expect(got.Status.Workload.Name).To(Equal(release))
	stable := deployment(g, t, ns, ad.Name)
	g.Expect(stable.Spec.Template.Spec.Containers).To(ConsistOf(HaveField("Name", "web")),
		"the chart's container, under its own name")
	g.Expect(stable.Spec.Template.Annotations).To(HaveKeyWithValue("example.com/chart", "web-0.1.0"))

	// The chart's Service selects the AppDeployment's pods, and only
	// those once the chart's own are gone: no outage.
	svc := &corev1.Service{}
	g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: release}, svc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(cluster.Client.List(ctx, &pods, client.InNamespace(ns),
			client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(svc.Spec.Selector)})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(int(ptr.Deref(ad.Spec.Replicas, 1))))
		for _, pod := range pods.Items {
			g.Expect(pod.Labels).To(HaveKeyWithValue(platformv1.TrackLabel, platformv1.TrackStable), "pod %s", pod.Name)
		}
	}).WithTimeout(releaseTimeout).Should(Succeed())

	helm("upgrade", release, chart, "--set", "image.tag="+v124, "--set", "replicaCount=0")
	waitingForPromotion(t, ad, v124)
	canary := deployment(g, t, ns, ad.Name+"-canary")
	g.Expect(canary.Spec.Template.Spec.Containers[0].Image).To(Equal(image124))
	g.Expect(deployment(g, t, ns, release).Spec.Replicas).To(HaveValue(BeZero()))

	out, code := appdeploy(t, ns, "undo", ad.Name)
	g.Expect(code).NotTo(Equal(0), out)
	g.Expect(out).To(ContainSubstring(
		`takes its pods from deployment "shop" (spec.workloadRef): roll back that Deployment instead`))

	out, code = appdeploy(t, ns, "promote", ad.Name)
	g.Expect(code).To(Equal(0), out)
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableImage).To(Equal(image124))
		g.Expect(deployment(g, t, ns, ad.Name+"-canary")).To(BeNil(), "the canary is removed after promotion")
	})
}
