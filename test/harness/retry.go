// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"context"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// retryWindow is how long a test's write is retried while the machine,
// not the write, is the problem.
const retryWindow = time.Minute

// retrying is the tests' client: it retries a write that failed for the
// load on the machine rather than for what it asked, as a user at
// kubectl would try again. On two cores a whole cluster, the operator,
// Prometheus and every e2e test at once share the CPU, and a moment of
// starvation times out an admission webhook call (5 s) or the API
// server's own request handling, or makes a replica step down mid-call;
// the test is about what the operator does, not about that. What admission refuses (Invalid, Forbidden) is
// returned at once.
type retrying struct{ client.Client }

// transient reports whether err says the API server or a webhook was too
// slow to answer, not that the request was wrong.
func transient(err error) bool {
	switch {
	case err == nil:
		return false
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err):
		return true
	case apierrors.IsInternalError(err):
		return webhookUnreachable(err.Error())
	}
	return false
}

// webhookUnreachable reports whether an error's text says a webhook was
// too slow or not reached at all: a replica that stepped down (lost its
// Lease) dropped the connection before it judged the request; its
// restart, or the other replica, answers a retry.
func webhookUnreachable(msg string) bool {
	if !strings.Contains(msg, "failed calling webhook") {
		return false
	}
	for _, s := range []string{
		"deadline exceeded", "timeout", ": EOF", "connection reset by peer", "connection refused",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// retry runs write until it does not fail transiently, for retryWindow at
// most.
func retry(ctx context.Context, write func() error) error {
	return retryIf(ctx, transient, write)
}

// retryIf runs write until isTransient says its error is not one to try
// again, for retryWindow at most.
func retryIf(ctx context.Context, isTransient func(error) bool, write func() error) error {
	return retryIfWithin(ctx, retryWindow, isTransient, write)
}

// retryIfWithin is retryIf trying again for window.
func retryIfWithin(ctx context.Context, window time.Duration, isTransient func(error) bool, write func() error) error {
	var err error
	_ = wait.PollUntilContextTimeout(ctx, time.Second, window, true, func(context.Context) (bool, error) {
		err = write()
		if isTransient(err) {
			Logf("retrying a write that timed out under load: %v", err)
			return false, nil
		}
		return true, nil
	})
	return err
}

// Create creates obj, retrying transient failures. A retry that finds obj
// made by a try whose answer was lost reads it back.
func (c retrying) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	tried := false
	return retry(ctx, func() error {
		err := c.Client.Create(ctx, obj, opts...)
		if tried && apierrors.IsAlreadyExists(err) && obj.GetName() != "" {
			return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		}
		tried = true
		return err
	})
}

// Update updates obj, retrying transient failures.
func (c retrying) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return retry(ctx, func() error { return c.Client.Update(ctx, obj, opts...) })
}

// Patch patches obj, retrying transient failures.
func (c retrying) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return retry(ctx, func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

// Delete deletes obj, retrying transient failures.
func (c retrying) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return retry(ctx, func() error { return c.Client.Delete(ctx, obj, opts...) })
}

// editWindow bounds Edit: long enough for a few writes that each wait out
// retryWindow, so that a test never gives up on an edit sooner than on
// the write inside it.
const editWindow = 3 * retryWindow

// Edit reads obj's key into obj, applies edit and updates it, starting
// again from a fresh read on a conflict, as kubectl edit would. A
// conflict comes from the operator's own writes (finalizer, status) or
// from an earlier try of this write whose answer was lost under load:
// the update that timed out may have landed, and only a fresh read can
// tell. Any other error is returned at once.
func Edit[T client.Object](ctx context.Context, c client.Client, obj T, edit func(T)) error {
	key := client.ObjectKeyFromObject(obj)
	var err error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, editWindow, true, func(context.Context) (bool, error) {
		if err = c.Get(ctx, key, obj); err != nil {
			return !transient(err), nil
		}
		edit(obj)
		err = c.Update(ctx, obj)
		return !apierrors.IsConflict(err), nil
	})
	return err
}
