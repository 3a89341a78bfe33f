// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package reconciler

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/internal/expectations"
)

// StaleRetry is when a pass skipped as stale asks to run again: only a
// safety net, as the watch event of the write that replaced the version it
// read starts the next pass.
const StaleRetry = time.Second

// Base is what every kind's reconciler has.
type Base struct {
	// Client reads from the manager's cache and writes to the API server;
	// Controller wraps it so that Writes knows every write of the kind.
	client.Client
	// APIReader reads past the cache: for what the cache does not hold, or
	// where a stale read could act twice.
	APIReader client.Reader
	// Recorder sends the kind's events.
	Recorder events.EventRecorder
	// Clock is the passes' time; Controller sets the real clock when nil.
	Clock clock.PassiveClock
	// Writes knows the versions of the kind's objects that this manager's
	// own writes replaced.
	Writes expectations.OwnWrites
}

// Controller readies b to reconcile kind in mgr and returns the builder of
// the kind's controller, watching kind but for the echoes of b's own
// writes (expectations.OwnWrites.NotOwnEcho): from here on every update of
// kind through b.Client is known to b.Writes, and b.Clock is set.
func (b *Base) Controller(mgr ctrl.Manager, kind client.Object) *builder.Builder {
	b.Client = expectations.TrackWrites(b.Client, &b.Writes, kind)
	if b.Clock == nil {
		b.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).For(kind, builder.WithPredicates(b.Writes.NotOwnEcho()))
}

// Read reads the object key names into obj, from the manager's cache, for
// a pass, and reports whether the pass has anything to work on. It has not
// when the object is gone (gone, when set, drops what the reconciler keeps
// of it) or when the cache shows a version this manager's own write
// replaced: a pass from it would act on stale data and end in a conflict,
// and the write's event is on its way (expectations.OwnWrites.Stale). When
// Read reports false, the pass ends with the result and error it returns.
func (b *Base) Read(ctx context.Context, key types.NamespacedName, obj client.Object,
	gone func(types.NamespacedName)) (ctrl.Result, bool, error) {
	if err := b.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) && gone != nil {
			gone(key)
		}
		return ctrl.Result{}, false, client.IgnoreNotFound(err)
	}
	if b.Writes.Stale(string(obj.GetUID()), obj.GetResourceVersion()) {
		return ctrl.Result{RequeueAfter: StaleRetry}, false, nil
	}
	return ctrl.Result{}, true, nil
}
