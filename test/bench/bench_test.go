//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/example/platform-operator/test/harness"
)

func TestMain(m *testing.M) {
	harness.ReapIfAsked()
	os.Exit(m.Run())
}

// TestBench_SmallRunKeepsTheInvariants runs the benchmark's ScheduleTask
// suites at a small size, trimmed to what it asserts (runSmall), and
// asserts what does not depend on the machine's speed: no writes when idle
// or after a restart, at most three writes per new task, one TaskRun per
// Job, every burst run recorded. Convergence is measured and printed, but
// how it compares with the bare client's time is make bench's figure, not
// an assertion: on two busy cores its ratio over about a second of work
// ranged from 1.1 to 2.3 between runs of the same code.
func TestBench_SmallRunKeepsTheInvariants(t *testing.T) {
	t.Parallel() // the AppDeployment run joins it once convergence is measured
	cfg := defaultConfig()
	cfg.Tasks, cfg.BurstTasks, cfg.MemoryTasks, cfg.MemoryRuns = 100, 20, 100, 400
	// Resyncs every 12 s (two fifths of the window): two or more full
	// resyncs fall in it, as the assertion on reconciles needs.
	cfg.Idle = 30 * time.Second
	cfg.MaxSizeTasks = 0 // the size-limit figure is the full benchmark's
	// At this size a bare client at the default 200 requests a second is
	// done in well under a second, where a watch's and a queue's fixed delays
	// would dominate the ratio; at 50 both sides are bound by the same client
	// limit, so the ratio measures the operator's extra work on any machine.
	cfg.QPS, cfg.Burst = 50, 100
	res, err := runSmall(t.Context(), cfg)
	if res != nil {
		var table strings.Builder
		printTable(&table, res)
		t.Log(table.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Convergence.Ratio <= 0 {
		t.Errorf("convergence was not measured")
	}
	if w := res.Convergence.ManagerWritesPer; w <= 0 || w > targetWrites {
		t.Errorf("%.2f manager writes per new task (%s), want at most %d", w,
			writesBy(res.Convergence.WritesPerTaskBy), targetWrites)
	}
	if got := res.Recording.Runs; got != cfg.BurstTasks {
		t.Errorf("%d runs of the burst recorded, want %d", got, cfg.BurstTasks)
	}
	if len(res.Duplicates) > 0 {
		t.Errorf("Jobs without exactly one TaskRun: %v", res.Duplicates)
	}
	objects := float64(cfg.MemoryTasks + cfg.MemoryRuns)
	if res.Idle.Reconciles < objects {
		t.Errorf("only %v reconciles while idle: no full resync happened (want at least %v)", res.Idle.Reconciles, objects)
	}
	if res.Idle.Writes != 0 {
		t.Errorf("the manager made %v writes while idle, want 0", res.Idle.Writes)
	}
	if n := res.Memory.JobsInCache; n != 0 {
		t.Errorf("%d Jobs of finished runs still selected by the manager's cache, want 0", n)
	}
	if res.Memory.EventsSent == 0 || res.Memory.EventsLost != 0 {
		t.Errorf("the manager sent %v events and lost %v; want some sent and none lost",
			res.Memory.EventsSent, res.Memory.EventsLost)
	}
	if res.ColdStart.Writes != 0 {
		t.Errorf("the manager made %v writes after a restart, want 0", res.ColdStart.Writes)
	}
}

// TestBench_SmallAppDeploymentRunKeepsTheInvariants runs the AppDeployment
// suite at a small size, trimmed to what it asserts (runAppDeploySmall), and
// asserts what does not depend on the machine's
// speed: every AppDeployment Ready, no writes when idle through resyncs, at
// most targetWritesPerApp writes per new AppDeployment, every canary
// promoted, and every measurement taken once per due time.
func TestBench_SmallAppDeploymentRunKeepsTheInvariants(t *testing.T) {
	t.Parallel()
	waitForConvergence(t)
	cfg := defaultConfig()
	cfg.Suites = []string{suiteAppDeploy}
	cfg.Apps, cfg.Canaries, cfg.AppIdle = 20, 10, 30*time.Second
	res, err := runAppDeploySmall(t.Context(), cfg)
	if res != nil {
		var table strings.Builder
		printTable(&table, &results{Started: time.Now(), Machine: describeMachine(), Config: cfg, AppDeploy: res})
		t.Log(table.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Apps != cfg.Apps {
		t.Errorf("%d AppDeployments seen Ready, want %d", res.Apps, cfg.Apps)
	}
	if w := res.WritesPerApp; w <= 0 || w > targetWritesPerApp {
		t.Errorf("%.2f manager writes per new AppDeployment (%s), want at most %d", w, writesBy(res.WritesPerAppBy),
			targetWritesPerApp)
	}
	// Resyncs every two fifths of the window: every AppDeployment at least
	// twice.
	if objects := float64(2 * (cfg.Apps + cfg.Canaries)); res.IdleReconciles < objects {
		t.Errorf("only %v reconciles while idle: no full resync happened (want at least %v)", res.IdleReconciles, objects)
	}
	if res.IdleWrites != 0 {
		t.Errorf("the manager made %v writes while idle, want 0", res.IdleWrites)
	}
	if res.Promoted != cfg.Canaries {
		t.Errorf("%d of %d canaries promoted", res.Promoted, cfg.Canaries)
	}
	// One step of canaryPasses Passes each (a window short of samples adds
	// a NoData): none taken before it was due, so none taken twice for one
	// due time, and each placed after the one before it or its step's start.
	if want := cfg.Canaries * canaryPasses; res.Measurements < want || res.Repeated != 0 || res.Unplaced != 0 {
		t.Errorf("%d step measurements (%d taken before due, %d not placed), want at least %d, each taken once when due",
			res.Measurements, res.Repeated, res.Unplaced, want)
	}
}
