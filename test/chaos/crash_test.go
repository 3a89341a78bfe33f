//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chaos

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/test/harness"
)

// TestCrash_KilledManagerNeverDuplicatesOrLosesARun kills the manager with
// SIGKILL at random moments while a burst of tasks fires and manual runs are
// asked for, restarting it each time. Afterwards every Job has exactly one
// TaskRun, no TaskRun points at a Job that never existed, every run ended,
// and deleting the tasks leaves none stuck on its finalizer.
func TestCrash_KilledManagerNeverDuplicatesOrLosesARun(t *testing.T) {
	cluster := takeCluster(t)
	tasks, manual, kills := size(300, 30), size(50, 5), size(20, 4)
	g := NewWithT(t)
	ctx := t.Context()
	ns := harness.Namespace(t, cluster)
	obs, err := harness.StartObserver(ctx, cluster.Config)
	g.Expect(err).NotTo(HaveOccurred())
	// One replica without leader election: a restarted replica starts at
	// once instead of waiting out the dead one's Lease, so many crashes fit
	// in the test. Crash safety is the reconcilers' business, not the Lease's.
	op := startOperator(t, "--leader-elect=false")
	m, err := op.StartReplica(ctx)
	g.Expect(err).NotTo(HaveOccurred())

	names := createTasks(t, ns, tasks, 3*time.Second)
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("%d tasks, %d manual runs, %d kills; seed %d", tasks, manual, kills, seed)

	// The kills straddle a minute boundary, when every task fires at once.
	next := time.Now().Truncate(time.Minute).Add(time.Minute)
	time.Sleep(time.Until(next.Add(-5 * time.Second)))
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range manual {
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Millisecond)
			createManualRun(t, ns, fmt.Sprintf("manual-%03d", i), names[i%len(names)])
		}
	})
	for i := range kills {
		time.Sleep(time.Duration(500+rng.IntN(3500)) * time.Millisecond)
		m.Kill(syscall.SIGKILL)
		t.Logf("kill %d/%d at %s", i+1, kills, time.Now().Format("15:04:05.000"))
		m, err = op.StartReplica(ctx)
		g.Expect(err).NotTo(HaveOccurred())
	}
	wg.Wait()
	// Every task fires on that minute, however late the CronJob controller
	// is; only then do the tasks stop.
	g.Eventually(func() (int, error) { return jobsScheduledAt(t, ns, next) }).
		WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Equal(tasks))
	suspendAll(t, ns, names)

	g.Eventually(func() error { return runsMatchJobs(ctx, cluster, ns, true) }).
		WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	g.Expect(obs.JobsWithoutOneRun(ns)).To(BeEmpty(), "over the whole test, as the watch saw it")
	all, finished := obs.RunCount()
	t.Logf("%d runs recorded, %d finished", all, finished)
	g.Expect(all).To(BeNumerically(">=", tasks+manual), "every task fired and every manual run started")
	deleteTasks(t, ns)
}

// jobsScheduledAt counts the namespace's Jobs that the CronJob controller
// made for the given time.
func jobsScheduledAt(t *testing.T, ns string, at time.Time) (int, error) {
	var jobs batchv1.JobList
	if err := clusterOf(t).Client.List(t.Context(), &jobs, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	n := 0
	for _, j := range jobs.Items {
		s, err := time.Parse(time.RFC3339, j.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
		if err == nil && s.Equal(at) {
			n++
		}
	}
	return n, nil
}
