// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chain

import (
	"context"
	"errors"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// CacheSyncer is the part of the manager's cache AfterCacheSync waits on.
type CacheSyncer interface {
	WaitForCacheSync(ctx context.Context) bool
}

// AfterCacheSync holds r's passes until every informer of the manager's
// cache has synced, not only those of r's own watches (which is all
// controller-runtime waits for). At a start with tens of thousands of
// objects, the passes of the controller whose informers synced first would
// otherwise take the CPU from the lists the others, and the manager's
// readiness, still wait on. Once synced it costs one atomic load a pass.
func AfterCacheSync(c CacheSyncer, r reconcile.Reconciler) reconcile.Reconciler {
	var synced atomic.Bool
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if !synced.Load() {
			if !c.WaitForCacheSync(ctx) {
				if err := ctx.Err(); err != nil {
					return reconcile.Result{}, err
				}
				return reconcile.Result{}, errors.New("the manager's cache stopped before it synced")
			}
			synced.Store(true)
		}
		return r.Reconcile(ctx, req)
	})
}
