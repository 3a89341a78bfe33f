// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestOptions_RetriesDoubleFromTheBaseToTheMax(t *testing.T) {
	o := Options{Workers: 0, RetryBaseDelay: 100 * time.Millisecond, RetryMaxDelay: time.Second}.Controller()
	if o.MaxConcurrentReconciles != 1 {
		t.Errorf("workers = %d, want at least 1", o.MaxConcurrentReconciles)
	}
	req := reconcile.Request{}
	got := make([]time.Duration, 0, 6)
	for range 6 {
		got = append(got, o.RateLimiter.When(req))
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, time.Second, time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("retry delays = %v, want %v", got, want)
		}
	}
	if d := (Options{}).Controller().RateLimiter.When(req); d != DefaultRetryBaseDelay {
		t.Errorf("default first retry = %v, want %v", d, DefaultRetryBaseDelay)
	}
}

type synced bool

func (s synced) WaitForCacheSync(context.Context) bool { return bool(s) }

func TestWrap_LogsEachPassAtV1WithItsDurationAndResult(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	ctx := ctrl.LoggerInto(context.Background(), log)
	fail := errors.New("boom")
	r := Wrap(synced(true), "chain-test", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{RequeueAfter: 3 * time.Second}, fail
	}), nil)
	if _, err := r.Reconcile(ctx, reconcile.Request{}); !errors.Is(err, fail) {
		t.Fatalf("err = %v, want the pass's own", err)
	}
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1: %q", len(lines), lines)
	}
	for _, want := range []string{`"msg"="Reconciled"`, `"duration"=`, `"requeueAfter"="3s"`, `"error"="boom"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line %s lacks %s", lines[0], want)
		}
	}

	quiet := ctrl.LoggerInto(context.Background(), funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{}))
	if _, err := r.Reconcile(quiet, reconcile.Request{}); err == nil {
		t.Fatal("want the pass's error")
	}
	if len(lines) != 1 {
		t.Errorf("logged at verbosity 0: %q", lines[1:])
	}
}

func TestWrap_WaitsForTheCacheBeforeThePass(t *testing.T) {
	ran := false
	r := Wrap(synced(false), "chain-test", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		ran = true
		return reconcile.Result{}, nil
	}), nil)
	if _, err := r.Reconcile(context.Background(), reconcile.Request{}); err == nil || ran {
		t.Errorf("err = %v, ran = %t: want an error and no pass while the cache has not synced", err, ran)
	}
}

// A pass that failed to create something in a namespace being deleted is
// not retried (no error, no requeue), however the error was wrapped; any
// other failure, a Forbidden of another cause among them, is.
func TestWrap_DoesNotRetryAPassTheNamespacesDeletionEnded(t *testing.T) {
	terminating := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "cronjobs"}, "task-1",
		errors.New("unable to create new content in namespace team-a because it is being terminated"))
	terminating.ErrStatus.Details.Causes = append(terminating.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: corev1.NamespaceTerminatingCause, Message: "namespace team-a is being terminated", Field: "metadata.namespace",
	})
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "cronjobs"}, "task-1",
		errors.New("RBAC says no"))
	for _, tc := range []struct {
		name  string
		err   error
		retry bool
	}{
		{name: "namespace terminating, wrapped", err: fmt.Errorf("apply CronJob team-a/task-1: %w", terminating)},
		{name: "namespace terminating, joined", err: errors.Join(errors.New("other"), terminating)},
		{name: "forbidden otherwise", err: fmt.Errorf("apply CronJob team-a/task-1: %w", forbidden), retry: true},
		{name: "any other error", err: errors.New("boom"), retry: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Wrap(synced(true), "chain-test", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				return reconcile.Result{RequeueAfter: time.Minute}, tc.err
			}), nil)
			res, err := r.Reconcile(context.Background(), reconcile.Request{})
			if tc.retry && !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want the pass's own (retried)", err)
			}
			if !tc.retry && (err != nil || res != (reconcile.Result{})) {
				t.Fatalf("result %+v, err %v; want neither a retry nor a requeue", res, err)
			}
		})
	}
}
