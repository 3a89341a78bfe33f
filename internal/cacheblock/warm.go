// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package cacheblock

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
