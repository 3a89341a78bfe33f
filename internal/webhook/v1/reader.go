// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cacheFirst reads an object from the manager's cache, and past it, from
// the API server, when the cache has not got it: an object created a
// moment ago may not have reached the cache yet (a task and a manual run of
// it applied from one file), and a kind the cache does not hold (its
// informer is never started, ReaderFailOnMissingInformer) is always read
// live. Every replica's cache holds what the controllers watch, followers'
// too (cacheblock.WarmInformers), so a webhook answers from memory.
//
// Admission used to read live only. Under a burst of writes, the API
// server, saturated, took 300 to 400 ms to answer each of those reads,
// which every create waited for on top of its own: figure 9 of
// docs/performance.md.
type cacheFirst struct {
	cache client.Reader
	live  client.Reader
}

// Get reads key into obj from the cache, or from the API server when the
// cache has no such object or no informer of its kind.
func (r cacheFirst) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.cache.Get(ctx, key, obj, opts...); err == nil {
		return nil
	}
	return r.live.Get(ctx, key, obj, opts...)
}

// List lists from the API server: no webhook lists.
func (r cacheFirst) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.live.List(ctx, list, opts...)
}
