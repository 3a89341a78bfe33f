// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package metrics holds the instrumentation every reconciler of the operator
// shares: how long reconciles take and why they fail, served on the manager's
// metrics endpoint next to controller-runtime's. Each kind's own metrics live
// in its controller package and register with Registry. No label's values
// grow with the number of objects: controllers, results and reasons are small
// fixed sets.
package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Namespace prefixes every metric of the operator.
const Namespace = "platform_operator"

// Registry is where the operator's metrics register: controller-runtime's,
// which the manager serves.
var Registry = ctrlmetrics.Registry

// Results of a reconcile, the values of the result label.
const (
	ResultSuccess = "success"
	ResultError   = "error"
	ResultRequeue = "requeue"
)

// ReasonConflict is the reason label of a reconcile that met a newer
// version of an object it wrote; ReasonUnknown of an error that is not an
// API error.
const (
	ReasonConflict = "Conflict"
	ReasonUnknown  = "Unknown"
	ReasonTerminal = "Terminal"
)

var (
	// ReconcileDuration is how long each reconcile took, by controller and
	// result (success, error, requeue).
	ReconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace,
		Name:      "reconcile_duration_seconds",
		Help:      "Time one reconcile took, by controller and result (success, error, requeue).",
		Buckets:   []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
	}, []string{"controller", "result"})

	// ReconcileErrors counts failed reconciles by controller and the API
	// status reason of the error (Unknown for errors that are not API
	// errors). Conflicts count here although the reconcile is retried
	// quietly: many of them mean two writers fight over an object.
	ReconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "reconcile_errors_total",
		Help:      "Reconciles that returned an error, by controller and API status reason (Conflict: retried at once).",
	}, []string{"controller", "reason"})
)

func init() {
	Registry.MustRegister(ReconcileDuration, ReconcileErrors)
}

// conflictRetry is how soon a pass that met a conflict runs again: the
// newer version is in the cache within milliseconds, and the workqueue's
// exponential backoff would wait longer and longer for nothing.
const conflictRetry = 250 * time.Millisecond

// Instrument wraps a controller's reconciler: each call is timed and each
// error counted by reason; a conflict (an object changed while the pass
// worked from an older version) is counted, then retried in conflictRetry
// without an error, since it is expected with several writers and not worth
// the workqueue's backoff or an error log line. The controller's series are
// created at zero, so every documented series exists from the start.
func Instrument(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	for _, result := range []string{ResultSuccess, ResultError, ResultRequeue} {
		ReconcileDuration.WithLabelValues(controller, result)
	}
	for _, reason := range []string{ReasonConflict, ReasonUnknown} {
		ReconcileErrors.WithLabelValues(controller, reason)
	}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := time.Now()
		res, err := r.Reconcile(ctx, req)
		result := ResultSuccess
		switch {
		case apierrors.IsConflict(err):
			ReconcileErrors.WithLabelValues(controller, ReasonConflict).Inc()
			ctrl.LoggerFrom(ctx).V(1).Info("Object changed while reconciling, retrying", "error", err.Error())
			res, err, result = reconcile.Result{RequeueAfter: conflictRetry}, nil, ResultRequeue
		case err != nil:
			result = ResultError
			ReconcileErrors.WithLabelValues(controller, errorReason(err)).Inc()
		case res.RequeueAfter > 0:
			result = ResultRequeue
		}
		ReconcileDuration.WithLabelValues(controller, result).Observe(time.Since(start).Seconds())
		return res, err
	})
}

// errorReason is the API status reason of err, a small fixed set.
func errorReason(err error) string {
	if errors.Is(err, reconcile.TerminalError(nil)) {
		return ReasonTerminal
	}
	if r := apierrors.ReasonForError(err); r != "" {
		return string(r)
	}
	return ReasonUnknown
}
