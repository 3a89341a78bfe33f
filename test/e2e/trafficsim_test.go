//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/test/harness"
)

// TestTrafficSim_PrometheusSeesTheTracks runs the traffic simulator and a
// Prometheus against pods as an AppDeployment labels them, a stable revision
// and a canary whose image tag says "bad", and asks Prometheus what the
// canary analysis will ask: each track's error ratio, request rate and p95
// latency. Then Prometheus restarts, as it may mid-analysis, and still has
// what it scraped.
func TestTrafficSim_PrometheusSeesTheTracks(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)

	const stableRevision, canaryRevision = "5d8f7c9b6a", "7b6c5d4e3f"
	newPod := func(name, track, revision, image string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
				platformv1.AppNameLabel:  "shop",
				platformv1.TrackLabel:    track,
				platformv1.RevisionLabel: revision,
			}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
		}
	}
	pods := []*corev1.Pod{
		newPod("stable-0", platformv1.TrackStable, stableRevision, "example.com/app:v1.2.4"),
		newPod("stable-1", platformv1.TrackStable, stableRevision, "example.com/app:v1.2.4"),
		newPod("stable-2", platformv1.TrackStable, stableRevision, "example.com/app:v1.2.4"),
		newPod("canary-0", platformv1.TrackCanary, canaryRevision, "example.com/app:v1.2.5-bad"),
		// Running but never ready (hack/kwok/README.md): it gets no
		// requests, so the canary serves 10 a second, not 20.
		newPod("canary-unready", platformv1.TrackCanary, canaryRevision, "example.com/kwok-unready/app:v1.2.5-bad"),
	}
	for _, p := range pods {
		g.Expect(cluster.Client.Create(ctx, p)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		for _, p := range pods {
			g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "phase of pod %s", p.Name)
			wantReady := corev1.ConditionTrue
			if p.Name == "canary-unready" {
				wantReady = corev1.ConditionFalse
			}
			g.Expect(p.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", wantReady))), "pod %s", p.Name)
		}
	}).WithTimeout(settleTimeout).Should(Succeed())

	sim, err := harness.StartTrafficSim(ctx, cluster.Config)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(sim.Stop)
	prom, err := harness.StartPrometheus(ctx, t.TempDir(), sim.ScrapeTarget())
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(prom.Stop)

	selector := func(track, more string) string {
		return fmt.Sprintf(`namespace=%q,app="shop",track=%q%s`, ns, track, more)
	}
	errorRatio := func(track string) string {
		return fmt.Sprintf(`sum(rate(http_requests_total{%s}[10s])) / sum(rate(http_requests_total{%s}[10s]))`,
			selector(track, `,code=~"5.."`), selector(track, ""))
	}
	requestRate := func(track string) string {
		return fmt.Sprintf(`sum(rate(http_requests_total{%s}[10s]))`, selector(track, ""))
	}
	p95 := func(track string) string {
		return fmt.Sprintf(`histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{%s}[10s])))`,
			selector(track, ""))
	}
	value := func(g Gomega, query string) float64 {
		v, err := prom.QueryValue(ctx, query)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
	g.Eventually(func(g Gomega) {
		g.Expect(value(g, errorRatio(platformv1.TrackCanary))).To(BeNumerically("~", 0.10, 0.001), "canary error ratio")
		g.Expect(value(g, errorRatio(platformv1.TrackStable))).To(BeNumerically("~", 0.001, 0.0001), "stable error ratio")
		// 10 requests per second per ready pod, the simulator's default.
		g.Expect(value(g, requestRate(platformv1.TrackCanary))).To(BeNumerically("~", 10, 2), "canary requests/s")
		g.Expect(value(g, requestRate(platformv1.TrackStable))).To(BeNumerically("~", 30, 5), "stable requests/s")
		g.Expect(value(g, p95(platformv1.TrackCanary))).To(BeNumerically("~", 2, 0.1), "canary p95 latency")
		g.Expect(value(g, p95(platformv1.TrackStable))).To(BeNumerically("~", 0.05, 0.005), "stable p95 latency")
	}).WithTimeout(30*time.Second).WithPolling(time.Second).
		Should(Succeed(), "prometheus log: %s", prom.LogPath)

	// Prometheus restarts: on the same address and data, so what it scraped
	// before is still there, and it scrapes again.
	before := time.Now()
	prom.Stop()
	_, err = prom.QueryValue(ctx, "vector(1)")
	g.Expect(err).To(HaveOccurred(), "prometheus answers after Stop")
	g.Expect(prom.Start(ctx)).To(Succeed())
	up := fmt.Sprintf(`up{job=%q}`, harness.TrafficSimJob)
	old, _, err := prom.API().Query(ctx, up, before)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(old).To(BeAssignableToTypeOf(model.Vector{}))
	g.Expect(old.(model.Vector)).To(ConsistOf(HaveField("Value", BeEquivalentTo(1))), "scraped before the restart")
	g.Eventually(func(g Gomega) {
		g.Expect(value(g, "timestamp("+up+")")).
			To(BeNumerically(">", float64(before.UnixMilli())/1000), "a scrape after the restart")
	}).WithTimeout(20 * time.Second).WithPolling(time.Second).Should(Succeed())
}
