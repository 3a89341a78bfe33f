// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chain

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/example/platform-operator/internal/metrics"
	"github.com/example/platform-operator/internal/tracing"
)

// Defaults of Options: controller-runtime's own retry delays, so a manager
// without the flags behaves as one built on it plainly would.
const (
	DefaultRetryBaseDelay = 5 * time.Millisecond
	DefaultRetryMaxDelay  = 1000 * time.Second
)

// Options are what every controller's workqueue and workers are given by
// the manager's flags.
type Options struct {
	// Workers is how many objects of the kind are reconciled at once; at
	// least one.
	Workers int
	// RetryBaseDelay and RetryMaxDelay bound the per-object backoff after a
	// failed pass: the first retry waits RetryBaseDelay, each later one
	// twice as long, up to RetryMaxDelay. Zero takes the defaults.
	RetryBaseDelay, RetryMaxDelay time.Duration
}

// Controller is the controller-runtime options of a controller run with o.
func (o Options) Controller() controller.Options {
	base, most := o.RetryBaseDelay, o.RetryMaxDelay
	if base <= 0 {
		base = DefaultRetryBaseDelay
	}
	if most <= 0 {
		most = DefaultRetryMaxDelay
	}
	return controller.Options{
		MaxConcurrentReconciles: max(o.Workers, 1),
		// The manager's queues are priority queues, whose default limiter is
		// this one with controller-runtime's delays.
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](base, most),
	}
}

// Wrap is r in the chain every reconciler runs in, outermost first: wait
// until the manager's whole cache has synced (AfterCacheSync), count the
// pass in the reconcile metrics, trace it (linked to the trace of the write
// that caused it when origin finds one; nil: a trace of its own), log its
// duration and result at V(1), and not retry a pass that failed only
// because its namespace is being deleted (endsWithNamespace). A pass's timeout is the manager's
// (controller-runtime's ReconciliationTimeout, --reconcile-timeout): a pass
// that runs out of it, even while waiting for the cache, fails and is
// retried with the backoff of Options.
func Wrap(c CacheSyncer, name string, r reconcile.Reconciler, origin tracing.Origin) reconcile.Reconciler {
	var opts []tracing.Option
	if origin != nil {
		opts = append(opts, tracing.WithOrigin(origin))
	}
	return AfterCacheSync(c, metrics.Instrument(name, tracing.Instrument(name, logged(endsWithNamespace(r)), opts...)))
}

// Complete ends a controller's builder as every controller of the manager
// ends it: the workqueue and workers of o, the name, and r in the chain of
// Wrap, each pass linked to the trace of the write origin finds.
func Complete(b *builder.Builder, c CacheSyncer, o Options, name string, r reconcile.Reconciler, origin tracing.Origin) error {
	return b.WithOptions(o.Controller()).Named(name).Complete(Wrap(c, name, r, origin))
}

// endsWithNamespace turns a pass's failure to create something in a
// namespace being deleted into a pass that did what it could: the
// namespace's deletion removes the object too (its deletion is a new
// event, which a pass then handles), and no retry could ever succeed,
// since a terminating namespace never becomes active again. Retrying would
// write a failed create and log a "Reconciler error" for every object of
// the namespace at each backoff step until the namespace controller
// deletes it (thousands on deleting a namespace of a thousand tasks).
func endsWithNamespace(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if err != nil && NamespaceTerminating(err) {
			ctrl.LoggerFrom(ctx).V(1).Info("Not retrying: the namespace is being deleted", "error", err.Error())
			return reconcile.Result{}, nil
		}
		return res, err
	})
}

// NamespaceTerminating reports whether err, or an error it wraps, is the
// API server's refusal to create an object in a namespace being deleted
// (the NamespaceLifecycle admission plugin marks it with the cause
// NamespaceTerminating; apierrors.HasStatusCause does not look into
// wrapped errors).
func NamespaceTerminating(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	details := status.Status().Details
	if details == nil {
		return false
	}
	for _, cause := range details.Causes {
		if cause.Type == corev1.NamespaceTerminatingCause {
			return true
		}
	}
	return false
}

// logged logs each pass's duration and result at V(1): with it, `-v=1`
// shows what every pass did and how long it took, without a tracing
// backend.
func logged(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := time.Now()
		res, err := r.Reconcile(ctx, req)
		log := ctrl.LoggerFrom(ctx).V(1)
		if log.Enabled() {
			kv := []any{"duration", time.Since(start).Round(time.Microsecond).String()}
			if res.RequeueAfter > 0 {
				kv = append(kv, "requeueAfter", res.RequeueAfter.String())
			}
			if err != nil {
				kv = append(kv, "error", err.Error())
			}
			log.Info("Reconciled", kv...)
		}
		return res, err
	})
}
