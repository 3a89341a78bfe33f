//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/appdeployment"
	"github.com/example/platform-operator/test/harness"
)

// A manager SIGKILLed at random moments of canaries resumes each from its
// status: every version is promoted exactly once, both Deployments are never
// at full size together, and no canary goes while the stable Deployment is
// short of ready pods.
func TestCrash_KilledManagerResumesCanariesFromStatus(t *testing.T) {
	cluster := takeCluster(t)
	apps, versions, kills := size(3, 1), size(3, 2), size(12, 4)
	g := NewWithT(t)
	ctx := t.Context()
	ns := harness.Namespace(t, cluster)
	op := startOperator(t, "--leader-elect=false")
	m, err := op.StartReplica(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("%d applications, %d versions each, %d kills; seed %d", apps, versions, kills, seed)

	watches := make([]*harness.ReleaseWatch, 0, apps)
	ads := make([]*platformv1.AppDeployment, 0, apps)
	for i := range apps {
		ad := &platformv1.AppDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%d", i)},
			Spec: platformv1.AppDeploymentSpec{
				Image:    "registry.example.com/app:v1.0.0",
				Replicas: ptr.To[int32](4),
				Strategy: platformv1.Strategy{Type: platformv1.StrategyCanary, Steps: []platformv1.CanaryStep{
					{Weight: 25, PauseSeconds: ptr.To[int32](2)},
					{Weight: 50, PauseSeconds: ptr.To[int32](2)},
				}},
			},
		}
		watches = append(watches, harness.WatchRelease(t, cluster, ns, ad.Name, 4))
		mustEventually(t, func() error { return client.IgnoreAlreadyExists(cluster.Client.Create(ctx, ad)) })
		ads = append(ads, ad)
	}
	for _, ad := range ads {
		waitVersion(t, ad, "v1.0.0")
	}

	// Kill the manager at random moments while every application releases
	// its next versions one after the other.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range kills {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(500+rng.IntN(3000)) * time.Millisecond):
			}
			m.Kill(syscall.SIGKILL)
			t.Logf("kill %d/%d at %s", i+1, kills, time.Now().Format("15:04:05.000"))
			var err error
			if m, err = op.StartReplica(ctx); err != nil {
				t.Errorf("restarting the manager: %v", err)
				return
			}
		}
	})
	for v := 1; v <= versions; v++ {
		version := fmt.Sprintf("v1.0.%d", v)
		for _, ad := range ads {
			mustEventually(t, func() error {
				got := &platformv1.AppDeployment{}
				if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got); err != nil {
					return err
				}
				got.Spec.Image = "registry.example.com/app:" + version
				return cluster.Client.Update(ctx, got)
			})
		}
		for _, ad := range ads {
			waitVersion(t, ad, version)
		}
	}
	close(stop)
	wg.Wait()

	for i, ad := range ads {
		if v := watches[i].Violations(); len(v) > 0 {
			t.Errorf("%s: release promises broken: %v", ad.Name, v)
		}
		got := &platformv1.AppDeployment{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got)).To(Succeed())
		seen := map[string]int{}
		for _, r := range got.Status.Revisions {
			seen[r.Version]++
		}
		for v := 0; v <= versions; v++ {
			g.Expect(seen).To(HaveKeyWithValue(fmt.Sprintf("v1.0.%d", v), 1), "%s: each version recorded once", ad.Name)
		}
		// Each canary ends in one Promoted event: a pass killed after it
		// wrote the outcome and before it sent the event must not send it
		// twice when the next manager finds the outcome written.
		g.Expect(promotedEvents(ctx, t, ns, ad.Name)).To(BeNumerically("<=", versions),
			"%s: promoted at most once per version", ad.Name)
	}
}

// waitVersion waits until the application is Ready at version.
func waitVersion(t *testing.T, ad *platformv1.AppDeployment, version string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		got := &platformv1.AppDeployment{}
		g.Expect(clusterOf(t).Client.Get(t.Context(), client.ObjectKeyFromObject(ad), got)).To(Succeed())
		g.Expect(got.Status.StableVersion).To(Equal(version), got.Status.Message)
		ready := meta.IsStatusConditionTrue(got.Status.Conditions, platformv1.ConditionReady)
		g.Expect(ready).To(BeTrue(), got.Status.Message)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
	}).WithTimeout(3 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
}

// promotedEvents counts the Promoted events of an application, repeats of
// an event included.
func promotedEvents(ctx context.Context, t *testing.T, ns, name string) int {
	t.Helper()
	var list eventsv1.EventList
	if err := clusterOf(t).Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatalf("list events: %v", err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Name != name || e.Regarding.Kind != "AppDeployment" || e.Reason != appdeployment.EventPromoted {
			continue
		}
		n++
		if e.Series != nil {
			n += int(e.Series.Count) - 1
		}
	}
	return n
}
