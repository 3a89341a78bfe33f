//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chaos

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

// TestWebhook_AReplicaLostUnderLoadFailsOnlyTheWritesInFlight writes
// ScheduleTasks at a steady rate (creates and updates, each through both
// admission webhooks, which fail closed) while the two replicas that
// serve them behind their Service (the harness's balancer, see
// harness.Operator) are taken away: one killed with SIGKILL, then, with a
// replacement ready, the other stopped with SIGTERM. A kill may fail only
// the writes in flight when it struck, never more, and none once the
// replica is seen dead; a graceful stop fails none, since the replica
// stops being ready before it stops serving (--shutdown-delay).
func TestWebhook_AReplicaLostUnderLoadFailsOnlyTheWritesInFlight(t *testing.T) {
	cluster := takeCluster(t)
	g := NewWithT(t)
	ctx := t.Context()
	ns := harness.Namespace(t, cluster)
	op := startOperator(t)
	replicas := make([]*harness.Manager, 0, 2)
	for range 2 {
		p, err := op.StartReplica(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		replicas = append(replicas, p)
	}
	perSecond, phase := size(50, 25), time.Duration(size(10, 3))*time.Second

	load := startWrites(t, ns, perSecond)
	loaded := time.Now()
	time.Sleep(phase)

	// SIGKILL, as a batch of writes is being admitted: the writes in
	// flight through the victim fail.
	<-load.ticks
	time.Sleep(5 * time.Millisecond)
	killed := time.Now()
	replicas[0].Kill(syscall.SIGKILL)
	// The balancer has left it out (the process is reaped), and the API
	// server's connections to it are closed within moments, as a Service
	// and a client see a dead pod.
	seenDead := time.Now().Add(deathSeen)
	time.Sleep(phase)
	_, err := op.StartReplica(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	time.Sleep(phase)

	// SIGTERM: the replica fails its readiness, serves out its shutdown
	// delay and stops; no write fails.
	stopped := time.Now()
	replicas[1].Kill(syscall.SIGTERM)
	t.Logf("%s stopped gracefully in %s", replicas[1].Name, time.Since(stopped).Round(time.Millisecond))
	time.Sleep(phase)
	writes := load.stop()
	rate := float64(len(writes)) / time.Since(loaded).Seconds()

	var inFlight, failed, failedLater, failedStopping int
	var firstFailures []string
	for _, w := range writes {
		if w.skipped {
			continue
		}
		overlaps := w.start.Before(seenDead) && w.end.After(killed)
		if overlaps {
			inFlight++
		}
		if w.err == nil {
			continue
		}
		failed++
		if !overlaps {
			failedLater++
		}
		if !w.end.Before(stopped) {
			failedStopping++
		}
		if len(firstFailures) < 5 {
			firstFailures = append(firstFailures, fmt.Sprintf("%s at %s (kill at %s, seen dead by %s, stop at %s): %v",
				w.what, w.start.Format("15:04:05.000"), killed.Format("15:04:05.000"),
				seenDead.Format("15:04:05.000"), stopped.Format("15:04:05.000"), w.err))
		}
	}
	t.Logf("%d writes, %.1f a second (%d asked for); %d in flight at the kill, %d failed",
		len(writes), rate, perSecond, inFlight, failed)
	// A busy machine delays the load's ticks; it must still be a load.
	g.Expect(rate).To(BeNumerically(">=", 0.75*float64(perSecond)), "the load ran at most of its rate")
	g.Expect(failedLater).To(BeZero(),
		"writes failed that were not in flight at the kill (%d while a replica stopped gracefully): %v",
		failedStopping, firstFailures)
	g.Expect(failed).To(BeNumerically("<=", inFlight), "more writes failed than were in flight at the kill")
}

// deathSeen is how long after a replica's process is reaped a write may
// still be sent to it: the balancer leaves it out at once, but the API
// server learns that its kept-alive connections through the balancer were
// closed only as the close reaches it.
const deathSeen = 100 * time.Millisecond

// write is one write of the load: what it was, when it started and ended,
// and how it failed.
type write struct {
	what       string
	start, end time.Time
	err        error
	// skipped is an update of a task whose create failed.
	skipped bool
}

// writeLoad writes ScheduleTasks at a steady rate until stopped.
type writeLoad struct {
	// ticks has a value each time a batch of writes starts (when nobody
	// waits, the value is dropped).
	ticks  chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	writes []write
}

// startWrites writes perSecond times a second, in batches every tenth of
// a second as many clients writing at once would (testutil.Pace, which
// makes up a late batch), each write in its own goroutine (so a slow
// write does not slow the rate): a new suspended
// task, or an update of the last one created, in turn. Every write goes
// through the mutating and validating webhooks of ScheduleTask.
func startWrites(t *testing.T, ns string, perSecond int) *writeLoad {
	t.Helper()
	cfg := clusterOf(t).Config
	cfg.QPS, cfg.Burst = float32(4*perSecond), 4*perSecond
	c, err := client.New(cfg, client.Options{Scheme: clusterOf(t).Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &writeLoad{cancel: cancel, ticks: make(chan struct{})}
	l.wg.Go(func() {
		testutil.Pace(ctx, perSecond, time.Second/10, func(from, to int) {
			for i := from; i < to; i++ {
				l.wg.Go(func() { l.record(writeTask(c, ns, i)) })
			}
			select {
			case l.ticks <- struct{}{}:
			default:
			}
		})
	})
	t.Cleanup(func() { l.stop() })
	return l
}

// writeTask is the i-th write: the even ones create task i/2, the odd
// ones change the schedule of the task the write before created (a
// task not there yet is waited for, and one whose create failed makes
// the update a write skipped).
func writeTask(c client.Client, ns string, i int) write {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := fmt.Sprintf("load-%05d", i/2)
	w := write{start: time.Now()}
	if i%2 == 0 {
		st := testutil.NewScheduleTask(ns, name)
		st.Spec.Suspend = ptr.To(true)
		w.what = "create " + name
		w.err = c.Create(ctx, st)
	} else {
		w.what = "update " + name
		patch := fmt.Appendf(nil, `{"spec":{"schedule":"%d * * * *"}}`, i%60)
		for {
			// The write is its last attempt.
			attempt := time.Now()
			st := &platformv1.ScheduleTask{}
			st.Namespace, st.Name = ns, name
			w.err = c.Patch(ctx, st, client.RawPatch("application/merge-patch+json", patch))
			if !apierrors.IsNotFound(w.err) {
				w.start = attempt
				break
			}
			if time.Since(w.start) > 5*time.Second {
				// Its create failed: nothing to update.
				w.skipped, w.err = true, nil
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	w.end = time.Now()
	return w
}

// record keeps w.
func (l *writeLoad) record(w write) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, w)
}

// stop ends the load, waits for the writes in flight and returns them all
// by their start.
func (l *writeLoad) stop() []write {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.writes)
	slices.SortFunc(out, func(a, b write) int { return a.start.Compare(b.start) })
	return out
}
