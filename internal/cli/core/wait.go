// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitFor watches the object key, of obj's kind (list is its list type),
// until done returns true or an error for it, and returns the version it saw
// last. done sees every version the watch delivers, so it can report
// progress too.
//
// It lists and watches with the field selector metadata.name=<name>, so the
// server sends that one object's changes and nothing else, and through
// client-go's UntilWithSync, which lists again by itself when a watch ends or
// its resource version is too old: a long wait survives API server restarts
// and idle connection timeouts. When ctx ends first the error wraps
// ctx.Err(), so callers can tell a timeout with errors.Is.
func WaitFor[T client.Object](ctx context.Context, c client.WithWatch, obj T, list client.ObjectList,
	key client.ObjectKey, done func(T) (bool, error)) (T, error) {
	var last T
	selector := fields.OneTermEqualSelector("metadata.name", key.Name).String()
	options := func(opts *metav1.ListOptions) *client.ListOptions {
		opts.FieldSelector = selector
		return &client.ListOptions{Namespace: key.Namespace, Limit: opts.Limit, Continue: opts.Continue, Raw: opts}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			l := list.DeepCopyObject().(client.ObjectList)
			return l, c.List(ctx, l, options(&opts))
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), options(&opts))
		},
	}
	check := func(o runtime.Object) (bool, error) {
		t, ok := o.(T)
		// The name is checked again for clients that ignore field selectors.
		if !ok || t.GetName() != key.Name {
			return false, nil
		}
		last = t
		return done(t)
	}
	// No precondition: it would read the informer's store, which is already
	// at the newest version while the versions before it still wait to be
	// delivered, so done would see Running, then Pending, then Running. The
	// informer delivers the listed object as an Added event anyway, so an
	// object that ended before the watch began is still seen, and every
	// version reaches done in order.
	_, err := watchtools.UntilWithSync(ctx, cache.ToListWatcherWithWatchListSemantics(lw, c), obj, nil,
		func(ev watch.Event) (bool, error) {
			switch ev.Type {
			case watch.Added, watch.Modified:
				return check(ev.Object)
			case watch.Deleted:
				if t, ok := ev.Object.(T); ok && t.GetName() == key.Name {
					return false, fmt.Errorf("%s was deleted while waiting for it", key.Name)
				}
			}
			return false, nil
		})
	if err != nil && ctx.Err() != nil {
		return last, fmt.Errorf("waiting for %s: %w", key.Name, ctx.Err())
	}
	return last, err
}

// spinner is drawn in turn on a terminal while Progress waits.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// spinInterval is how often a terminal's progress line is redrawn, so the
// spinner and the time waited move while nothing else does.
const spinInterval = 200 * time.Millisecond

// Progress shows the state of something a command waits for. On a terminal
// it redraws one line in place: a spinner, the state and the time waited.
// Elsewhere (a pipe, a CI log) it writes a line "NAME STATE" only when the
// state changes, so that logs stay short and readable.
type Progress struct {
	out   io.Writer
	name  string
	tty   bool
	clock clock.PassiveClock
	start time.Time

	mu    sync.Mutex
	state string
	frame int
	stop  chan struct{}
	done  chan struct{}
}

// NewProgress starts showing the progress of name on out; tty says whether
// out is a terminal. Call Stop when the wait ends.
func NewProgress(out io.Writer, name string, tty bool, clk clock.PassiveClock) *Progress {
	p := &Progress{out: out, name: name, tty: tty, clock: clk, start: clk.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	if !tty {
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(spinInterval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// Set records the current state; an empty state is shown as "-" and, before
// any other state, not at all.
func (p *Progress) Set(state string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The state is status text; on a terminal it is redrawn in place, where
	// a "\r" or an escape sequence of its own would draw anything.
	state = Safe(state)
	changed := state != p.state
	p.state = state
	switch {
	case p.tty:
		p.draw()
	case changed:
		fmt.Fprintf(p.out, "%s %s\n", p.name, OrDash(state))
	}
}

// draw redraws the terminal's line; p.mu is held.
func (p *Progress) draw() {
	fmt.Fprintf(p.out, "\r%s %s  %s   ", spinner[p.frame%len(spinner)], OrDash(p.state),
		duration.HumanDuration(p.clock.Since(p.start)))
	p.frame++
}

// Stop ends the display. On a terminal it ends the redrawn line, so that
// what is printed next starts on a line of its own.
func (p *Progress) Stop() {
	if !p.tty {
		return
	}
	close(p.stop)
	<-p.done
	fmt.Fprintln(p.out)
}
