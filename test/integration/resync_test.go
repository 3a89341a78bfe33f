// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// throughResyncs checks, every poll, that check holds until the manager's
// cache has resynced obj n+1 times: the passes of the first n resyncs have
// ended by the next one (a resync period later). A test that the operator
// writes nothing on a pass that nothing changed waits for those passes
// themselves, not for a stretch of the clock that a busy machine may fill
// with nothing. A resync is an update of obj that the cache delivers with
// no change of its resourceVersion; each makes the operator reconcile obj
// (or its owner).
func throughResyncs(t *testing.T, obj client.Object, n int, check func(g Gomega)) {
	t.Helper()
	g := NewWithT(t)
	resyncs := countResyncs(t, obj)
	limit := time.Duration(n+1)*resyncPeriod + timeout
	start := time.Now()
	for {
		check(g)
		got := resyncs()
		if got > n {
			return
		}
		if time.Since(start) > limit {
			t.Fatalf("the manager's cache resynced %s %d times in %s, want %d",
				client.ObjectKeyFromObject(obj), got, limit, n+1)
		}
		time.Sleep(poll)
	}
}

// countResyncs counts, from now until t ends, the resyncs of obj (an object
// of a kind the manager caches) by the manager's cache.
func countResyncs(t *testing.T, obj client.Object) func() int {
	t.Helper()
	inf, err := managerCache.GetInformer(context.Background(), obj)
	if err != nil {
		t.Fatalf("the manager's informer of %T: %v", obj, err)
	}
	key := client.ObjectKeyFromObject(obj)
	var n atomic.Int64
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, okOld := oldObj.(client.Object)
			c, okNew := newObj.(client.Object)
			if okOld && okNew && client.ObjectKeyFromObject(c) == key && o.GetResourceVersion() == c.GetResourceVersion() {
				n.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatalf("watching the manager's resyncs of %T: %v", obj, err)
	}
	t.Cleanup(func() { _ = inf.RemoveEventHandler(reg) })
	return func() int { return int(n.Load()) }
}
