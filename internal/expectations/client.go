// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package expectations

import (
	"context"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TrackWrites returns c with every update and patch of an object of kind's
// Go type — of the object or of its status subresource — recorded in w
// before it is sent and forgotten if it fails (OwnWrites.Writing). A
// reconciler writes through it and never calls Writing itself, so no write
// of its kind can be left out of what OwnWrites knows.
//
// Each such write must be conditioned on the resourceVersion read (an
// Update is; a patch needs client.MergeFromWithOptimisticLock), which is
// what lets OwnWrites name the version it replaced. Writes of other kinds
// pass through untouched: their echoes reach no predicate of w's.
func TrackWrites(c client.Client, w *OwnWrites, kind client.Object) client.Client {
	return &tracking{Client: c, writes: w, kind: reflect.TypeOf(kind)}
}

// tracking is the client TrackWrites returns.
type tracking struct {
	client.Client
	writes *OwnWrites
	kind   reflect.Type
}

// record registers a write of obj if it is of the tracked kind; the
// returned function takes the write's error.
func (t *tracking) record(obj client.Object) func(error) {
	if reflect.TypeOf(obj) != t.kind || obj.GetUID() == "" {
		return func(error) {}
	}
	return t.writes.Writing(obj)
}

// Update records and sends an update of obj.
func (t *tracking) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	done := t.record(obj)
	err := t.Client.Update(ctx, obj, opts...)
	done(err)
	return err
}

// Patch records and sends a patch of obj.
func (t *tracking) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	done := t.record(obj)
	err := t.Client.Patch(ctx, obj, patch, opts...)
	done(err)
	return err
}

// Status is the status subresource's writer, its writes recorded as well.
func (t *tracking) Status() client.SubResourceWriter {
	return &trackingStatus{SubResourceWriter: t.Client.Status(), t: t}
}

// trackingStatus is the status writer of a tracking client.
type trackingStatus struct {
	client.SubResourceWriter
	t *tracking
}

// Update records and sends an update of obj's status.
func (s *trackingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	done := s.t.record(obj)
	err := s.SubResourceWriter.Update(ctx, obj, opts...)
	done(err)
	return err
}

// Patch records and sends a patch of obj's status.
func (s *trackingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	done := s.t.record(obj)
	err := s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	done(err)
	return err
}
