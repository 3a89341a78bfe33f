//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package chaos holds the fault tests: the operator's managers are killed,
// lose their leader, or lose the API server while runs are in flight, on a
// kwok cluster of the package's own, and afterwards the runs must be exactly
// what the Jobs say, with nothing twice and nothing lost; and a replica
// serving the webhooks is killed or stopped under a steady load of writes,
// which may fail only the writes it was serving when killed. An upgrade is
// tested here too: the manager of an earlier version is replaced by this
// one, and nothing it made may change.
//
//	go test -tags e2e ./test/chaos/            # make test-chaos: full size
//	go test -tags e2e -short ./test/chaos/     # inside make test: smaller
//
// Each test has a kwok cluster to itself while it runs: it starts its own
// operator (one Lease, one set of webhooks per cluster), and some stop the
// API server. With -short the package makes two clusters and runs two tests
// at a time, one on each, since most of their time is spent waiting for
// fire times and hand-overs; at full size it makes one, and the tests run
// one after another.
package chaos

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/jobutil"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

// free holds the package's kwok clusters that no test is using.
var free chan *harness.Cluster

// inUse maps each running test to the cluster it took.
var inUse sync.Map

func TestMain(m *testing.M) {
	harness.ReapIfAsked()
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	flag.Parse()
	n := 1
	if testing.Short() {
		n = 2
	}
	free = make(chan *harness.Cluster, n)
	for range n {
		name := fmt.Sprintf("chaos-%08x", rand.Uint32())
		c, teardown, err := harness.StartCluster(context.Background(), name, harness.ClusterOptions{Nodes: 4})
		if err != nil {
			harness.Logf("%v", err)
			return 1
		}
		defer teardown()
		free <- c
	}
	return m.Run()
}

// takeCluster runs t in parallel with the package's other tests, and gives
// it a cluster of its own for as long as it runs, once one is free.
func takeCluster(t *testing.T) *harness.Cluster {
	t.Helper()
	t.Parallel()
	var c *harness.Cluster
	select {
	case c = <-free:
	case <-t.Context().Done():
		t.Fatal("no cluster became free")
	}
	inUse.Store(t, c)
	t.Cleanup(func() {
		inUse.Delete(t)
		free <- c
	})
	return c
}

// clusterOf returns the cluster t took.
func clusterOf(t *testing.T) *harness.Cluster {
	t.Helper()
	c, ok := inUse.Load(t)
	if !ok {
		t.Fatalf("%s took no cluster: call takeCluster first", t.Name())
	}
	return c.(*harness.Cluster)
}

// size picks the full or the -short size of a test.
func size(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

// startOperator starts an operator whose replicas run with args, and stops
// it when the test ends. It starts no replica.
func startOperator(t *testing.T, args ...string) *harness.Operator {
	t.Helper()
	op, err := harness.StartOperator(t.Context(), clusterOf(t), harness.OperatorOptions{Args: args})
	if err != nil {
		t.Fatalf("starting the operator: %v", err)
	}
	t.Cleanup(op.Stop)
	return op
}

// createTasks creates n tasks firing every minute whose pods run for runFor.
func createTasks(t *testing.T, ns string, n int, runFor time.Duration) []string {
	t.Helper()
	cluster := clusterOf(t)
	names := make([]string, n)
	for i := range n {
		st := testutil.NewScheduleTask(ns, fmt.Sprintf("task-%03d", i))
		st.Spec.Env = []corev1.EnvVar{{Name: "KWOK_RUN_FOR", Value: runFor.String()}}
		mustEventually(t, func() error { return cluster.Client.Create(t.Context(), st) })
		names[i] = st.Name
	}
	return names
}

// createManualRun asks for a manual run, retrying while no manager serves
// the admission webhooks (they fail closed).
func createManualRun(t *testing.T, ns, name, task string) {
	t.Helper()
	cluster := clusterOf(t)
	mustEventually(t, func() error {
		return client.IgnoreAlreadyExists(cluster.Client.Create(t.Context(), testutil.NewManualTaskRun(ns, name, task)))
	})
}

// suspendAll suspends the tasks, so that no more runs start.
func suspendAll(t *testing.T, ns string, names []string) {
	t.Helper()
	cluster := clusterOf(t)
	for _, name := range names {
		mustEventually(t, func() error {
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				st := &platformv1.ScheduleTask{}
				if err := cluster.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, st); err != nil {
					return err
				}
				st.Spec.Suspend = ptr.To(true)
				return cluster.Client.Update(t.Context(), st)
			})
		})
	}
}

// mustEventually retries fn for up to a minute: the webhooks may be between
// managers.
func mustEventually(t *testing.T, fn func() error) {
	t.Helper()
	NewWithT(t).Eventually(fn).WithContext(t.Context()).
		WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// runsMatchJobs checks, on the API server, that every Job of the namespace
// that carries the task label has exactly one TaskRun pointing at its UID,
// that every TaskRun points at a live Job, and that each TaskRun's phase
// agrees with its Job: a complete Job's run Succeeded, a failed Job's run
// Failed. With finished set, every run must also have ended.
func runsMatchJobs(ctx context.Context, cluster *harness.Cluster, ns string, finished bool) error {
	var jobs batchv1.JobList
	err := cluster.Client.List(ctx, &jobs, client.InNamespace(ns), client.HasLabels{platformv1.ScheduleTaskLabel})
	if err != nil {
		return err
	}
	var runs platformv1.TaskRunList
	if err := cluster.Client.List(ctx, &runs, client.InNamespace(ns)); err != nil {
		return err
	}
	byUID := map[string][]*platformv1.TaskRun{}
	for i := range runs.Items {
		tr := &runs.Items[i]
		if tr.Spec.JobRef == nil {
			return fmt.Errorf("TaskRun %s has no Job yet", tr.Name)
		}
		byUID[string(tr.Spec.JobRef.UID)] = append(byUID[string(tr.Spec.JobRef.UID)], tr)
		if finished && !tr.IsFinished() {
			return fmt.Errorf("TaskRun %s is still %s", tr.Name, tr.Status.Phase)
		}
	}
	for _, job := range jobs.Items {
		trs := byUID[string(job.UID)]
		if len(trs) != 1 {
			return fmt.Errorf("Job %s has %d TaskRuns", job.Name, len(trs))
		}
		delete(byUID, string(job.UID))
		want := phaseOf(&job)
		if want != "" && trs[0].Status.Phase != want {
			return fmt.Errorf("TaskRun %s is %s but its Job %s is %s", trs[0].Name, trs[0].Status.Phase, job.Name, want)
		}
	}
	for uid, trs := range byUID {
		return fmt.Errorf("TaskRun %s points at Job %s, which does not exist", trs[0].Name, uid)
	}
	return nil
}

// phaseOf is the phase a finished Job's run must have, or "" while it runs.
func phaseOf(job *batchv1.Job) platformv1.TaskRunPhase {
	switch finished, succeeded := jobutil.Finished(job); {
	case succeeded:
		return platformv1.TaskRunSucceeded
	case finished:
		return platformv1.TaskRunFailed
	}
	return ""
}

// deleteTasks deletes the tasks and checks that none is left behind, stuck
// on its finalizer.
func deleteTasks(t *testing.T, ns string) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	cluster := clusterOf(t)
	g.Expect(cluster.Client.DeleteAllOf(ctx, &platformv1.ScheduleTask{}, client.InNamespace(ns))).To(Succeed())
	g.Eventually(func(g Gomega) {
		var left platformv1.ScheduleTaskList
		g.Expect(cluster.Client.List(ctx, &left, client.InNamespace(ns))).To(Succeed())
		g.Expect(left.Items).To(BeEmpty(), "ScheduleTasks stuck in deletion")
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
}
