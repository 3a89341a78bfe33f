// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package metrics

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// samples is the number of observations in one histogram series.
func samples(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	var m dto.Metric
	if err := o.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

func TestInstrument_TimesEveryCallAndCountsErrorsByReason(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "taskruns"}, "x", errors.New("changed"))
	results := []struct {
		res reconcile.Result
		err error
	}{
		{reconcile.Result{}, nil},
		{reconcile.Result{RequeueAfter: time.Second}, nil},
		{reconcile.Result{}, conflict},
		{reconcile.Result{}, errors.New("plain")},
	}
	i := 0
	r := Instrument("instrument-test", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		out := results[i]
		i++
		return out.res, out.err
	}))
	got := make([]reconcile.Result, 0, len(results))
	errs := make([]error, 0, len(results))
	for range results {
		res, err := r.Reconcile(context.Background(), reconcile.Request{})
		got = append(got, res)
		errs = append(errs, err)
	}
	// The conflict is retried at once, without an error for the workqueue.
	if got[2] != (reconcile.Result{RequeueAfter: conflictRetry}) || errs[2] != nil {
		t.Errorf("conflict returned %v, %v; want a requeue in %s and no error", got[2], errs[2], conflictRetry)
	}
	if errs[3] == nil {
		t.Errorf("a plain error was swallowed")
	}
	for result, want := range map[string]uint64{"success": 1, "requeue": 2, "error": 1} {
		if got := samples(t, ReconcileDuration.WithLabelValues("instrument-test", result)); got != want {
			t.Errorf("%s reconciles timed = %d, want %d", result, got, want)
		}
	}
	for reason, want := range map[string]float64{"Conflict": 1, "Unknown": 1} {
		if got := testutil.ToFloat64(ReconcileErrors.WithLabelValues("instrument-test", reason)); got != want {
			t.Errorf("%s errors = %v, want %v", reason, got, want)
		}
	}
}

func TestInstrument_CreatesTheControllersSeriesAtZero(t *testing.T) {
	Instrument("zero-test", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, nil
	}))
	for _, reason := range []string{ReasonConflict, ReasonUnknown} {
		if n := testutil.CollectAndCount(ReconcileErrors, "platform_operator_reconcile_errors_total"); n < 2 {
			t.Fatalf("%d error series, want the controller's %s series among them", n, reason)
		}
		if got := testutil.ToFloat64(ReconcileErrors.WithLabelValues("zero-test", reason)); got != 0 {
			t.Errorf("%s errors = %v before any reconcile, want 0", reason, got)
		}
	}
}
