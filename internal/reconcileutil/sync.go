/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package reconcileutil

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// InformerGetter is the part of the manager's cache WarmInformers uses.
type InformerGetter interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// WarmInformers creates, before the manager starts, the informers of the
// kinds a controller watches. The manager starts its controllers, and with
// them the informers of their watches, only once the informers that exist
// at its start have synced; an informer made then lists its kind after the
// others instead of beside them, and the manager's readiness waits for both
// rounds. Made here, every kind is listed at once.
func WarmInformers(c InformerGetter, objs ...client.Object) error {
	for _, obj := range objs {
		if _, err := c.GetInformer(context.Background(), obj); err != nil {
			return fmt.Errorf("informer for %T: %w", obj, err)
		}
	}
	return nil
}
