//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

// The small benchmark of `make test` runs the benchmark's suites trimmed to
// what its tests assert. The full run (run, runAppDeploy) also measures
// what only a reader of its table needs: the admission floors, the
// rollout floor, CPU profiles over the burst and the cold start, the
// memory figure's settled RSS, heap profile, cache floor and object sizes,
// the cold start's bare cache sync. Those take minutes of waiting (a
// profile covers a minute; each settled reading twenty seconds or more)
// and no test reads them, so the small run leaves them out. What it keeps
// is the full run's own code wherever that code measures only asserted
// figures (the baseline, convergence, the canaries, the AppDeployment idle
// window), and the same steps without the unasserted readings elsewhere.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/internal/controller"
	"github.com/example/platform-operator/internal/recorder"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/harness"
)

// convergenceMeasured is closed once the small run has measured
// convergence, or ended before: the AppDeployment small run, on a cluster
// of its own, starts only then, so the convergence figure the small run
// prints is not measured beside it, and runs beside the rest of it
// (recording, memory, cold start, idle), which it cannot move: those
// assert counts.
var (
	convergenceMeasured = make(chan struct{})
	convergenceOnce     sync.Once
)

// convergenceDone closes convergenceMeasured, once.
func convergenceDone() { convergenceOnce.Do(func() { close(convergenceMeasured) }) }

// waitForConvergence waits until the small run has measured convergence,
// when -run selects it and -parallel lets both run at once (with one at a
// time, it waits for nothing: the small run cannot start before it ends).
func waitForConvergence(t *testing.T) {
	t.Helper()
	if !selected("TestBench_SmallRunKeepsTheInvariants") || flag.Lookup("test.parallel").Value.String() == "1" {
		return
	}
	select {
	case <-convergenceMeasured:
	case <-t.Context().Done():
	}
}

// selected reports whether -test.run selects the top-level test name; an
// invalid pattern selects everything and is left for the testing package
// to report.
func selected(name string) bool {
	pattern := flag.Lookup("test.run").Value.String()
	if pattern == "" {
		return true
	}
	top, _, _ := strings.Cut(pattern, "/")
	re, err := regexp.Compile(top)
	return err != nil || re.MatchString(name)
}

// runSmall is run for the small benchmark: the baseline, then convergence,
// the burst's recording, the cluster grown to MemoryTasks tasks and
// MemoryRuns runs, a cold start and the idle window, keeping of each what
// TestBench_SmallRunKeepsTheInvariants asserts.
func runSmall(ctx context.Context, cfg config) (*results, error) {
	defer convergenceDone()
	res := &results{Started: time.Now().UTC(), Machine: describeMachine(), Config: cfg}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, teardown, err := harness.StartCluster(ctx, fmt.Sprintf("bench-%d", time.Now().Unix()), harness.ClusterOptions{
		Nodes:       4,
		KwokctlArgs: []string{"--disable-qps-limits"},
	})
	if err != nil {
		return nil, err
	}
	defer func() { cancel(); teardown() }()
	b := &bench{cfg: cfg, cluster: c, res: res}
	restCfg := rest.CopyConfig(c.Config)
	restCfg.QPS, restCfg.Burst = float32(cfg.QPS), cfg.Burst
	if b.client, err = client.New(restCfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, err
	}
	if b.bare, err = client.New(restCfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, err
	}
	if b.obs, err = harness.StartObserver(ctx, c.Config); err != nil {
		return nil, err
	}
	// The convergence ratio's yardstick, before the operator exists, as in
	// the full run.
	if err := b.baseline(ctx); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	b.operator, err = harness.StartOperator(ctx, c, harness.OperatorOptions{Args: b.managerArgs()})
	if err != nil {
		return nil, err
	}
	defer b.operator.Stop()
	if err := b.startManager(ctx); err != nil {
		return nil, err
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"convergence", b.convergence},
		{"run recording", b.smallRecording},
		{"tasks and runs of the memory figure", b.smallMemory},
		{"cold start", b.smallColdStart},
		{"idle writes", b.smallIdle},
	}
	for _, s := range steps {
		harness.Logf("bench: %s", s.name)
		start := time.Now()
		if err := s.fn(ctx); err != nil {
			return res, fmt.Errorf("%s: %w", s.name, err)
		}
		harness.Logf("bench: %s done in %s", s.name, time.Since(start).Round(time.Second))
		if s.name == "convergence" {
			convergenceDone()
		}
	}
	res.Duplicates, res.RunsChecked = b.obs.JobsWithoutOneRun(""), true
	return res, nil
}

// smallRecording is recording without the CPU profile of the burst (which
// covers its first minute, and which the test would wait for): BurstTasks
// tasks fire on one minute, and every run must be recorded, finished, once.
func (b *bench) smallRecording(ctx context.Context) error {
	if err := b.createNamespace(ctx, nsBurst); err != nil {
		return err
	}
	runFor := b.cfg.RunFor.String()
	err := parallel(ctx, b.cfg.BurstTasks, b.cfg.Workers, func(i int) error {
		st := task(nsBurst, i, "* * * * *")
		st.Spec.Env = []corev1.EnvVar{{Name: "KWOK_RUN_FOR", Value: runFor}}
		return b.client.Create(ctx, st)
	})
	if err != nil {
		return err
	}
	if _, err := b.waitReady(ctx, nsBurst, b.cfg.BurstTasks, 10*time.Minute); err != nil {
		return err
	}
	minute := time.Now().Truncate(time.Minute).Add(time.Minute)
	harness.Logf("bench: %d tasks fire at %s", b.cfg.BurstTasks, minute.Format(time.TimeOnly))
	var notes map[types.UID]harness.JobNote
	err = poll(ctx, minute.Add(b.cfg.RunFor).Add(5*time.Minute), func() (bool, error) {
		notes = map[types.UID]harness.JobNote{}
		done := 0
		for uid, n := range b.obs.JobsIn(nsBurst) {
			if !n.Scheduled.Equal(minute) {
				continue
			}
			notes[uid] = n
			for _, r := range b.obs.RunsOf(uid) {
				if !n.Completed.IsZero() && !r.Succeeded.IsZero() {
					done++
				}
			}
		}
		return done == b.cfg.BurstTasks, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d recorded runs of %s (have %d Jobs): %w", b.cfg.BurstTasks, minute, len(notes), err)
	}
	for uid, n := range notes {
		if runs := b.obs.RunsOf(uid); len(runs) != 1 {
			return fmt.Errorf("the Job %s has %d TaskRuns", n.Key, len(runs))
		}
	}
	b.res.Recording.Runs = len(notes)
	return b.deleteNamespace(ctx, nsBurst)
}

// smallMemory grows the cluster as memory does (MemoryTasks tasks,
// MemoryRuns finished runs, written as the operator writes them) for the
// cold start and the idle window, and reads what the test asserts once the
// manager is idle: the Jobs its cache still selects and its events. The
// memory readings themselves, their floor and the heap profile are the
// full run's.
func (b *bench) smallMemory(ctx context.Context) error {
	if err := b.growForMemory(ctx, 30*time.Minute); err != nil {
		return err
	}
	s, err := quiesce(ctx, b.manager, 10*time.Second, 30*time.Minute)
	if err != nil {
		return err
	}
	m := &b.res.Memory
	m.Tasks, m.Runs = b.cfg.MemoryTasks, b.cfg.MemoryRuns
	// The Jobs the manager's cache selects, by the cache options it runs
	// with.
	opts, err := controller.CacheOptions()
	if err != nil {
		return err
	}
	_, selector := cachingOf(opts, &batchv1.Job{})
	if selector == nil {
		return errors.New("the manager's cache selects every Job")
	}
	var selected metav1.PartialObjectMetadataList
	selected.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("JobList"))
	if err := b.cluster.Client.List(ctx, &selected, client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return err
	}
	m.JobsInCache = len(selected.Items)
	m.EventsSent = s.events[recorder.OutcomeSent]
	m.EventsLost = s.events[recorder.OutcomeDropped] + s.events[recorder.OutcomeFailed]
	return nil
}

// smallColdStart is coldStart without its CPU profile and bare cache sync:
// a new manager, resyncing every two fifths of the idle window, reconciles
// every object once and must write nothing.
func (b *bench) smallColdStart(ctx context.Context) error {
	b.manager.Kill(syscall.SIGTERM)
	if err := b.startManager(ctx, fmt.Sprintf("--sync-period=%s", b.cfg.syncPeriod())); err != nil {
		return err
	}
	m := b.manager
	ready := time.Since(m.Started)
	want := float64(b.cfg.MemoryTasks + b.cfg.MemoryRuns)
	var s sample
	err := poll(ctx, time.Now().Add(15*time.Minute), func() (bool, error) {
		var err error
		s, err = scrape(ctx, m)
		return err == nil && s.reconciles >= want && s.depth == 0, err
	})
	if err != nil {
		return fmt.Errorf("waiting for %v reconciles after the start (have %v): %w", want, s.reconciles, err)
	}
	if s, err = quiesce(ctx, m, 5*time.Second, 10*time.Minute); err != nil {
		return err
	}
	c := &b.res.ColdStart
	c.ReadySeconds, c.Writes, c.Reconciles = ready.Seconds(), s.writes, s.reconciles
	return nil
}

// smallIdle is idle without the memory reading at rest that follows it.
func (b *bench) smallIdle(ctx context.Context) error {
	before, err := quiesce(ctx, b.manager, 3*time.Second, 10*time.Minute)
	if err != nil {
		return err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.cfg.Idle):
	}
	after, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	i := &b.res.Idle
	i.Seconds = time.Since(start).Seconds()
	i.Writes, i.Reconciles = after.writes-before.writes, after.reconciles-before.reconciles
	return nil
}

// runAppDeploySmall is runAppDeploy for the small benchmark: no baseline,
// admission floor or rollout floor (the test asserts no ratio), and
// convergence measured once, on the run whose writes the test counts.
func runAppDeploySmall(ctx context.Context, cfg config) (*appDeployResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, teardown, err := harness.StartCluster(ctx, fmt.Sprintf("bench-app-%d", time.Now().Unix()), harness.ClusterOptions{
		Nodes:       cfg.appNodes(),
		KwokctlArgs: []string{"--disable-qps-limits"},
	})
	if err != nil {
		return nil, err
	}
	defer func() { cancel(); teardown() }()
	b := &appBench{cfg: cfg, cluster: c, res: &appDeployResult{}}
	restCfg := rest.CopyConfig(c.Config)
	restCfg.QPS, restCfg.Burst = float32(cfg.QPS), cfg.Burst
	if b.client, err = client.New(restCfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, err
	}
	if b.watch, err = startAppWatch(ctx, c.Config, int32(cfg.AppReplicas)); err != nil {
		return nil, err
	}
	if b.prom, err = startTraffic(ctx, c.Config); err != nil {
		return b.res, err
	}
	defer b.prom.stop()
	if b.op, err = harness.StartOperator(ctx, c, harness.OperatorOptions{Args: b.managerArgs()}); err != nil {
		return b.res, err
	}
	defer b.op.Stop()
	if b.manager, err = b.op.StartReplica(ctx); err != nil {
		return b.res, err
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"AppDeployments created at once", b.smallConvergence},
		{"canaries analysing at once", b.canaries},
		{"AppDeployment idle writes", b.idle},
	}
	for _, s := range steps {
		harness.Logf("bench: %s", s.name)
		start := time.Now()
		if err := s.fn(ctx); err != nil {
			return b.res, fmt.Errorf("%s: %w", s.name, err)
		}
		harness.Logf("bench: %s done in %s", s.name, time.Since(start).Round(time.Second))
	}
	return b.res, nil
}

// smallConvergence is the last run of convergence alone: Apps
// AppDeployments created at once, all Ready, and the manager's writes for
// them once it is idle.
func (b *appBench) smallConvergence(ctx context.Context) error {
	before, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	took, err := b.convergeOnce(ctx, nsApps)
	if err != nil {
		return err
	}
	n := b.cfg.Apps
	r := b.res
	r.Apps, r.Replicas = n, b.cfg.AppReplicas
	r.OperatorRuns, r.OperatorSeconds = []float64{took.Seconds()}, took.Seconds()
	after, err := quiesce(ctx, b.manager, 3*time.Second, 10*time.Minute)
	if err != nil {
		return err
	}
	total, by := storedWrites(before, after)
	r.WritesPerApp, r.AccessReviewsPerApp = total/float64(n), (after.reviews-before.reviews)/float64(n)
	r.WritesPerAppBy = map[string]float64{}
	for what, w := range by {
		r.WritesPerAppBy[what] = w / float64(n)
	}
	return nil
}
