//go:build e2e

/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

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

// TestMain creates the package's kwok cluster and operator, runs the tests
// and deletes the cluster whatever happens to them.
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
	operator, err = harness.StartOperator(ctx, cluster, harness.OperatorOptions{Replicas: 2,
		Args: []string{"--prometheus-address=" + prometheus.Address()}})
	if err != nil {
		harness.Logf("starting the operator: %v", err)
		return 1
	}
	defer operator.Stop()
	return m.Run()
}

// newNamespace creates a namespace for t in the package's cluster; see
// harness.Namespace.
func newNamespace(t *testing.T) string {
	t.Helper()
	return harness.Namespace(t, cluster)
}
