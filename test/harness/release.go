// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"context"
	"fmt"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// ReleaseWatch follows an application's two Deployments through a release
// and records every moment that breaks a release's promises: both
// Deployments at full size (with more than one replica), and the canary
// removed while the stable Deployment had fewer ready pods than the
// application's replicas. It sees every change the API server reports, not
// samples of them.
type ReleaseWatch struct {
	mu         sync.Mutex
	violations []string
	stable     *appsv1.Deployment
	canary     *appsv1.Deployment
	// Replicas is the application's size, for the checks; change it with
	// SetReplicas when the test scales the application.
	replicas int32
	// canaryDeleted counts the canary Deployments removed.
	canaryDeleted int
	// canarySeen counts the canary Deployments created.
	canarySeen int
}

// WatchRelease starts a ReleaseWatch of the application name in namespace
// ns, of the given size; it stops with the test.
func WatchRelease(t *testing.T, c *Cluster, ns, name string, replicas int32) *ReleaseWatch {
	t.Helper()
	rw := &ReleaseWatch{replicas: replicas}
	watchUntilCleanup(t, watchClient(t, c), &appsv1.DeploymentList{}, func(ev watch.Event) {
		if d, ok := ev.Object.(*appsv1.Deployment); ok {
			rw.observe(ev.Type, d)
		}
	}, client.InNamespace(ns), client.MatchingLabels{platformv1.AppNameLabel: name})
	return rw
}

// watchClient is a client of c that can watch.
func watchClient(t *testing.T, c *Cluster) client.WithWatch {
	t.Helper()
	wc, err := client.NewWithWatch(c.Config, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatalf("watch client: %v", err)
	}
	return wc
}

// watchUntilCleanup watches list's kind with opts and hands every event to
// on, from a goroutine of its own, until the test ends.
func watchUntilCleanup(t *testing.T, wc client.WithWatch, list client.ObjectList, on func(watch.Event),
	opts ...client.ListOption) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, list, opts...)
	if err != nil {
		cancel()
		t.Fatalf("watch %T: %v", list, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			on(ev)
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		cancel()
		<-done
	})
}

// SetReplicas changes the application size the checks use.
func (rw *ReleaseWatch) SetReplicas(n int32) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.replicas = n
}

func (rw *ReleaseWatch) observe(typ watch.EventType, d *appsv1.Deployment) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	canary := d.Labels[platformv1.TrackLabel] == platformv1.TrackCanary
	switch {
	case typ == watch.Deleted && canary:
		rw.canaryDeleted++
		if rw.stable == nil || rw.stable.Status.ReadyReplicas < rw.replicas {
			ready := int32(0)
			if rw.stable != nil {
				ready = rw.stable.Status.ReadyReplicas
			}
			rw.violations = append(rw.violations, fmt.Sprintf(
				"canary Deployment %s removed while the stable one had %d of %d pods ready", d.Name, ready, rw.replicas))
		}
		rw.canary = nil
		return
	case typ == watch.Deleted:
		rw.stable = nil
		return
	case canary:
		if rw.canary == nil {
			rw.canarySeen++
		}
		rw.canary = d
	default:
		rw.stable = d
	}
	if n := rw.replicas; n > 1 && rw.stable != nil && rw.canary != nil &&
		ptr.Deref(rw.stable.Spec.Replicas, 1) >= n && ptr.Deref(rw.canary.Spec.Replicas, 1) >= n {
		rw.violations = append(rw.violations, fmt.Sprintf("both Deployments at full size (%d)", n))
	}
}

// Violations are the broken promises seen so far.
func (rw *ReleaseWatch) Violations() []string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return append([]string(nil), rw.violations...)
}

// Canaries reports how many canary Deployments were created and removed.
func (rw *ReleaseWatch) Canaries() (created, removed int) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.canarySeen, rw.canaryDeleted
}

// PodsMade counts the pods of one track of an application that are made
// after it starts, by their revision label, as a watch sees them.
type PodsMade struct {
	mu    sync.Mutex
	byPod map[string]string
}

// WatchPodsMade starts a PodsMade of the track's pods of the application
// name in namespace ns; it stops with the test. Pods that exist when it
// starts are not counted.
func WatchPodsMade(t *testing.T, c *Cluster, ns, name, track string) *PodsMade {
	t.Helper()
	wc := watchClient(t, c)
	selector := client.MatchingLabels{platformv1.AppNameLabel: name, platformv1.TrackLabel: track}
	var existing corev1.PodList
	if err := wc.List(t.Context(), &existing, client.InNamespace(ns), selector); err != nil {
		t.Fatalf("list pods of %s: %v", name, err)
	}
	pm := &PodsMade{byPod: map[string]string{}}
	// Watched from the list's version: only pods made after it are added.
	watchUntilCleanup(t, wc, &corev1.PodList{}, func(ev watch.Event) {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type != watch.Added {
			return
		}
		pm.mu.Lock()
		pm.byPod[pod.Name] = pod.Labels[platformv1.RevisionLabel]
		pm.mu.Unlock()
	}, client.InNamespace(ns), selector,
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: existing.ResourceVersion}})
	return pm
}

// Count is how many pods of revision were made since the watch began.
func (pm *PodsMade) Count(revision string) int {
	pm.mu.Lock()
	defer pm.mu.Unlock()
	n := 0
	for _, rev := range pm.byPod {
		if rev == revision {
			n++
		}
	}
	return n
}
