//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/example/platform-operator/test/harness"
)

// cluster is the kwok cluster shared by all tests in the package. TestMain
// sets it before any test runs.
var cluster *harness.Cluster

// operator is the operator running against the cluster: two manager
// replicas, as the default install runs them, judging canaries against
// prometheus.
var operator *harness.Operator

// prometheus is the Prometheus the operator's canary analysis queries: it
// scrapes the traffic simulator (test/trafficsim), which serves requests
// per track of every application on the cluster.
var prometheus *harness.Prometheus

// ownClusterOptions lists the tests that need a kwok cluster of their own,
// with its options: an API server with flags of its own (tracing, a client
// certificate for webhooks, owner-reference enforcement), a
// controller-manager the test stops (that would stall every other test's
// runs), CRDs Helm must own, a namespaced manager whose roles have the
// names of the shared operator's. Each test starts its cluster when it
// starts (ownCluster), so the others do not wait for it.
var ownClusterOptions = map[string]harness.ClusterOptions{
	"TestMissedRuns_EachPolicyRunsWhatItPromisesAfterTheControllerManagerWasDown": {},
	"TestHelm_InstallUpgradeAndUninstallInAnyNamespaceLeaveOnlyTheCRDs":           {NoCRDs: true},
	"TestNamespacedMode_ServesItsNamespacesWithRolesAndLeavesOthersAlone":         {},
	tracingTest: {}, // an API server that traces, from startOTLP
}

// ownCluster starts the cluster of ownClusterOptions that t needs, logs how
// long it took, and deletes it when t ends.
func ownCluster(t *testing.T) *harness.Cluster {
	t.Helper()
	opts, ok := ownClusterOptions[t.Name()]
	if !ok {
		t.Fatalf("no cluster of its own for %s: list it in ownClusterOptions", t.Name())
	}
	started := time.Now()
	short, _, _ := strings.Cut(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "_")
	c, teardown, err := harness.StartCluster(context.Background(), fmt.Sprintf("%s-%08x", short, rand.Uint32()), opts)
	if err != nil {
		t.Fatalf("starting a cluster of its own: %v", err)
	}
	t.Cleanup(teardown)
	// The harness creates one cluster at a time: this includes the wait
	// for others' (its log says how long that was).
	t.Logf("cluster %s of its own started in %s", c.Name, time.Since(started).Round(time.Millisecond))
	return c
}

// ownOperator starts, on a cluster of t's own (ownCluster), an operator of
// one replica, stopped when t ends, and returns the cluster, the operator
// and a namespace of t's in that cluster.
func ownOperator(t *testing.T) (*harness.Cluster, *harness.Operator, string) {
	t.Helper()
	own := ownCluster(t)
	op, err := harness.StartOperator(t.Context(), own, harness.OperatorOptions{Replicas: 1})
	if err != nil {
		t.Fatalf("starting an operator on the cluster of its own: %v", err)
	}
	t.Cleanup(op.Stop)
	return own, op, harness.Namespace(t, own)
}

// TestMain creates the package's shared kwok cluster and operator, runs the
// tests and deletes the cluster whatever happens to them.
func TestMain(m *testing.M) {
	harness.ReapIfAsked()
	os.Exit(runSuite(m))
}

// runSuite does the work of TestMain and returns the exit code, so that its
// deferred calls run before os.Exit.
func runSuite(m *testing.M) int {
	ctx := context.Background()
	c, teardown, err := harness.StartCluster(ctx, fmt.Sprintf("e2e-%08x", rand.Uint32()), harness.ClusterOptions{})
	if err != nil {
		harness.Logf("%v", err)
		return 1
	}
	defer teardown()
	cluster = c
	flag.Parse()
	stopOTLP, err := startOTLP()
	if err != nil {
		harness.Logf("starting the OTLP receiver: %v", err)
		return 1
	}
	defer stopOTLP()
	stopClientCA, err := startClientCA()
	if err != nil {
		harness.Logf("writing the webhook client CA: %v", err)
		return 1
	}
	defer stopClientCA()
	sim, err := harness.StartTrafficSim(ctx, cluster.Config)
	if err != nil {
		harness.Logf("starting the traffic simulator: %v", err)
		return 1
	}
	defer sim.Stop()
	dir, err := os.MkdirTemp("", "e2e-prometheus-")
	if err != nil {
		harness.Logf("%v", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if prometheus, err = harness.StartPrometheus(ctx, dir, sim.ScrapeTarget()); err != nil {
		harness.Logf("starting Prometheus: %v", err)
		return 1
	}
	defer prometheus.Stop()
	operator, err = harness.StartOperator(ctx, cluster, harness.OperatorOptions{Replicas: 2, Restart: true,
		Args: []string{"--prometheus-address=" + prometheus.Address()}})
	if err != nil {
		harness.Logf("starting the operator: %v", err)
		return 1
	}
	defer operator.Stop()
	code := m.Run()
	// A replica that gave up its Lease under load is restarted, as in a
	// cluster; one that crashed fails the run even if every test passed.
	for _, e := range operator.Exits() {
		if e.Panicked() {
			harness.Logf("%s crashed (%v); the end of its log:\n%s", e.Replica, e.Err, e.LogTail)
			code = 1
		}
	}
	return code
}

// newNamespace creates a namespace for t in the package's cluster; see
// harness.Namespace.
func newNamespace(t *testing.T) string {
	t.Helper()
	return harness.Namespace(t, cluster)
}
