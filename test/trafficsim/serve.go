// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package trafficsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// MetricsPath is where Serve serves the metrics.
const MetricsPath = "/metrics"

// Ready is closed once Serve has synced its pod cache and serves metrics.
func (s *Simulator) Ready() <-chan struct{} {
	return s.ready
}

// Serve runs the simulator until ctx ends: it watches the pods with the app
// and track labels in every namespace through cfg, serves the metrics at
// MetricsPath on l and adds traffic every tick. It returns nil when ctx
// ends, or the error that stopped it. Call it once per Simulator.
func (s *Simulator) Serve(ctx context.Context, cfg *rest.Config, l net.Listener) error {
	defer l.Close()
	pods, err := podSelector()
	if err != nil {
		return err
	}
	c, err := cache.New(cfg, cache.Options{
		ByObject:         map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: pods}},
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return fmt.Errorf("create the pod cache: %w", err)
	}
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return fmt.Errorf("get the pod informer: %w", err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    s.onPod,
		UpdateFunc: func(_, obj any) { s.onPod(obj) },
		DeleteFunc: s.onPodDeleted,
	}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan error, 3)
	go func() {
		if err := c.Start(ctx); err != nil {
			failed <- fmt.Errorf("pod cache: %w", err)
		}
	}()
	synced := make(chan bool, 1)
	go func() { synced <- c.WaitForCacheSync(ctx) }()
	// A cache that fails to start would leave WaitForCacheSync waiting for
	// ctx alone.
	select {
	case err := <-failed:
		return err
	case ok := <-synced:
		if !ok {
			if ctx.Err() != nil {
				return nil
			}
			return errors.New("the pod cache did not sync")
		}
	}

	mux := http.NewServeMux()
	mux.Handle(MetricsPath, s.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			failed <- fmt.Errorf("serve metrics on %s: %w", l.Addr(), err)
		}
	}()
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	go func() {
		if err := s.playGateways(ctx, cfg); err != nil {
			failed <- fmt.Errorf("play the gateways: %w", err)
		}
	}()
	close(s.ready)

	ticker := time.NewTicker(s.tick)
	defer ticker.Stop()
	// The time that really passed, not the nominal tick: on a busy machine a
	// tick comes late, and the rate Prometheus computes would fall short.
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-failed:
			return err
		case now := <-ticker.C:
			s.Tick(now.Sub(last))
			last = now
		}
	}
}

// podSelector selects the pods that belong to a group.
func podSelector() (labels.Selector, error) {
	sel := labels.NewSelector()
	for _, key := range []string{platformv1.AppNameLabel, platformv1.TrackLabel} {
		r, err := labels.NewRequirement(key, selection.Exists, nil)
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

// onPod records an added or updated pod.
func (s *Simulator) onPod(obj any) {
	if pod, ok := obj.(*corev1.Pod); ok {
		s.SetPod(pod)
	}
}

// onPodDeleted forgets a deleted pod, also one whose deletion the watch
// missed (a tombstone).
func (s *Simulator) onPodDeleted(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		s.DeletePod(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
	}
}
