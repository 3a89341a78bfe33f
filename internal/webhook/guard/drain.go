// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package guard

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// DefaultShutdownDelay is how long a replica asked to stop keeps serving
// webhooks while it reports itself not ready: time for its Service to
// stop sending it connections (the endpoints controller and kube-proxy,
// or the API server's own endpoint resolution, follow the pod's readiness
// and deletion within a second or two). Kubernetes' own API server does
// the same with --shutdown-delay-duration.
const DefaultShutdownDelay = 3 * time.Second

// Drain is a replica's way out, as its Service sees it. From the moment
// the process is asked to stop (Begin), Checker fails, so the Service
// stops sending it new connections, while the webhook server keeps
// serving the connections it has for Delay, answering each request with
// "Connection: close" so that its client opens the next one through the
// Service; only then does the server stop. Without it the server stopped
// at once: a call in a connection opened a moment earlier, or sent on an
// idle one as the server closed it, failed, and with failurePolicy Fail so
// did the user's write.
type Drain struct {
	// Delay is how long the server keeps serving after Begin.
	Delay time.Duration

	mu    sync.Mutex
	began time.Time
	done  chan struct{}
}

// BeginWhenDone begins the drain when ctx ends: the manager's signal
// handler's context, which SIGTERM ends.
func (d *Drain) BeginWhenDone(ctx context.Context) {
	go func() {
		<-ctx.Done()
		d.Begin()
	}()
}

// Begin starts the drain; a second call changes nothing.
func (d *Drain) Begin() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done != nil {
		return
	}
	d.began = time.Now()
	d.done = make(chan struct{})
	time.AfterFunc(d.Delay, func() { close(d.done) })
}

// draining reports whether Begin was called.
func (d *Drain) draining() bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.done != nil
}

// Wait returns once the delay since Begin has passed, at once if the
// drain has not begun (the server stops for another reason), or when ctx
// ends.
func (d *Drain) Wait(ctx context.Context) {
	if d == nil {
		return
	}
	d.mu.Lock()
	done := d.done
	d.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Checker is a readiness check that fails once the drain has begun.
func (d *Drain) Checker() healthz.Checker {
	return func(*http.Request) error {
		if d.draining() {
			return errors.New("shutting down: serving what is in flight, taking no new connections")
		}
		return nil
	}
}

// Handler is next, with "Connection: close" on every answer once the
// drain has begun: the client's next call opens a new connection, which
// the Service sends to a replica that stays.
func (d *Drain) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.draining() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}
