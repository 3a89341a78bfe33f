// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/example/platform-operator/test/bench/internal/cached"
	"github.com/example/platform-operator/test/harness"
)

// coldStartProfileTime is how long the CPU profile of a cold start runs:
// past the time to ready, into the first reconciles.
const coldStartProfileTime = 15 * time.Second

// profileFromStart takes a CPU profile of a manager that is starting with
// its pprof endpoint on port, from the first moment the endpoint answers;
// nil (logged) when it cannot.
func (b *bench) profileFromStart(ctx context.Context, port int) []byte {
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", port, int(coldStartProfileTime.Seconds()))
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		p, err := get(ctx, url)
		if err == nil {
			return p
		}
		if ctx.Err() != nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	harness.Logf("bench: no CPU profile of the cold start: the pprof endpoint on port %d did not answer", port)
	return nil
}

// bareCacheSync is the floor of the cold start: the time a bare client
// takes to fill a cache with what the manager's holds — the same kinds, the
// same selection of children, with the manager's client settings — and
// nothing else: no transforms, no indexes, no process to start. A manager
// is ready no sooner than it has read every object it keeps.
func (b *bench) bareCacheSync(ctx context.Context) (time.Duration, error) {
	cfg := rest.CopyConfig(b.cluster.Config)
	cfg.QPS, cfg.Burst = float32(b.cfg.QPS), b.cfg.Burst
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	if _, err := cached.Start(ctx, cfg, false); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// cacheFloor is the floor of the memory figure: the resident memory of a
// bare client that keeps what the manager's cache keeps, and nothing else
// (test/bench/cachefloor), built and run as a process of its own with the
// manager's client settings. It reads the process once its resident memory
// has not fallen for settle; its heap is read after a collection, whatever
// settle is.
func (b *bench) cacheFloor(ctx context.Context, settle time.Duration) (cached.Reading, error) {
	r, _, err := b.runCacheFloor(ctx, settle, false)
	return r, err
}

// profiledCacheFloor is cacheFloor with every allocation recorded
// (GODEBUG=memprofilerate=1), so that its reading carries the bytes of
// the live objects as a heap profile counts them: the instrument the
// manager's slope is read with (see runForeign).
func (b *bench) profiledCacheFloor(ctx context.Context) (cached.Reading, []byte, error) {
	return b.runCacheFloor(ctx, 0, true)
}

// runCacheFloor runs cachefloor, and returns its reading and, profiled,
// its heap profile.
func (b *bench) runCacheFloor(ctx context.Context, settle time.Duration,
	profiled bool) (cached.Reading, []byte, error) {
	dir, err := os.MkdirTemp("", "cachefloor-")
	if err != nil {
		return cached.Reading{}, nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "cachefloor")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./test/bench/cachefloor")
	build.Dir = b.cluster.Repo
	if out, err := build.CombinedOutput(); err != nil {
		return cached.Reading{}, nil, fmt.Errorf("build: %w\n%s", err, out)
	}
	args := []string{"--kubeconfig=" + b.cluster.Kubeconfig,
		fmt.Sprintf("--qps=%g", b.cfg.QPS), fmt.Sprintf("--burst=%d", b.cfg.Burst), "--settle=" + settle.String()}
	profile := filepath.Join(dir, "heap.pb.gz")
	if profiled {
		args = append(args, "--heap-profile="+profile)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	if profiled {
		cmd.Env = append(os.Environ(), "GODEBUG=memprofilerate=1")
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return cached.Reading{}, nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	var r cached.Reading
	if err := json.Unmarshal(out, &r); err != nil {
		return cached.Reading{}, nil, fmt.Errorf("read %q: %w", out, err)
	}
	if !profiled {
		return r, nil, nil
	}
	heap, err := os.ReadFile(profile)
	return r, heap, err
}
