//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chaos

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/example/platform-operator/test/harness"
)

// TestAPIServerRestart_ManagerReconnectsAndConverges stops and starts the
// cluster's kube-apiserver while runs are in flight. The manager must ride it
// out by itself (same process, no restart) and, within 30 s of the API server
// serving again, have recorded every Job exactly once with the phase the Job
// reached, including a run asked for after the restart.
//
// The manager runs without leader election here: with it, a leader that
// cannot renew its Lease for the renew deadline (10 s) steps down and exits,
// by design, and its Deployment restarts it; that path is the crash test's.
func TestAPIServerRestart_ManagerReconnectsAndConverges(t *testing.T) {
	cluster := takeCluster(t)
	g := NewWithT(t)
	ctx := t.Context()
	ns := harness.Namespace(t, cluster)
	op := startOperator(t, "--leader-elect=false")
	m, err := op.StartReplica(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	names := createTasks(t, ns, size(20, 5), 10*time.Second)
	for i := range size(5, 2) {
		createManualRun(t, ns, fmt.Sprintf("before-%d", i), names[i%len(names)])
	}
	g.Eventually(func() int { return runningRuns(t, ns) }).WithTimeout(time.Minute).Should(BeNumerically(">", 0))

	down, err := cluster.RestartAPIServer(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	served := time.Now()
	t.Logf("the API server was away for %s", down.Round(time.Millisecond))
	createManualRun(t, ns, "after", names[0])

	g.Eventually(func() error { return runsMatchJobs(ctx, cluster, ns, false) }).
		WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
	t.Logf("converged %s after the API server served again", time.Since(served).Round(time.Millisecond))
	g.Expect(m.Alive()).To(BeTrue(), "the manager reconnected by itself")

	suspendAll(t, ns, names)
	g.Eventually(func() error { return runsMatchJobs(ctx, cluster, ns, true) }).
		WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	deleteTasks(t, ns)
}
