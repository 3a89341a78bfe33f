// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command cachefloor is the floor of the benchmark's memory figure: a bare
// client that keeps in memory what the manager's cache keeps — the same
// kinds, the same selection of children, the same transforms — and nothing
// else: no controllers, queues, indexes, webhooks or metrics. It fills its
// cache, waits until its resident memory stops falling, and prints it as
// JSON:
//
//	cachefloor --kubeconfig=PATH
//	{"rssBytes":...,"heapAllocBytes":...,"syncSeconds":...}
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/example/platform-operator/test/bench/internal/cached"
)

func main() {
	// --kubeconfig is controller-runtime's flag, which it registers.
	qps := flag.Float64("qps", 200, "the client's requests per second")
	burst := flag.Int("burst", 400, "the client's burst")
	settle := flag.Duration("settle", 20*time.Second, "how long the resident memory must not fall before it is read")
	// The manager's own default (cmd/main.go, defaultGCPercent): the floor
	// runs the collector as the manager does.
	gc := flag.Int("gc-percent", 25, "Go's GOGC for this process")
	heapProfile := flag.String("heap-profile", "", "where to write the heap profile of the reading (pprof), when set")
	flag.Parse()
	debug.SetGCPercent(*gc)
	ctrllog.SetLogger(logr.Discard())
	if err := floor(*qps, *burst, *settle, *heapProfile); err != nil {
		fmt.Fprintln(os.Stderr, "cachefloor:", err)
		os.Exit(1)
	}
}

func floor(qps float64, burst int, settle time.Duration, heapProfile string) error {
	cfg, err := config.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	c, err := cached.Start(ctx, cfg, true)
	if err != nil {
		return err
	}
	r := cached.Reading{SyncSeconds: time.Since(start).Seconds()}
	// The lists that filled the cache are garbage now; like the manager,
	// the floor leaves returning that memory to the runtime's own pace.
	low, since := rss(), time.Now()
	for time.Since(since) < settle {
		time.Sleep(2 * time.Second)
		if now := rss(); now < low*0.99 {
			low, since = now, time.Now()
		}
	}
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	mem, err := cached.ProcessMemory(0)
	if err != nil {
		return err
	}
	r.RSSBytes, r.RSSFileBytes, r.HeapAllocBytes = mem.RSS, mem.File, float64(m.HeapAlloc)
	r.ProfiledInUseBytes = inUse()
	if heapProfile != "" {
		if err := writeHeapProfile(heapProfile); err != nil {
			return err
		}
	}
	runtime.KeepAlive(c)
	return json.NewEncoder(os.Stdout).Encode(r)
}

// rss is this process's resident memory in bytes, 0 when it cannot be read.
func rss() float64 {
	m, err := cached.ProcessMemory(0)
	if err != nil {
		return 0
	}
	return m.RSS
}

// inUse is the bytes the heap profile counts in use. The profile is that
// of the last completed collection cycle: two more collections publish
// the state of the one before them, as pprof's heap endpoint does.
func inUse() float64 {
	runtime.GC()
	runtime.GC()
	n, _ := runtime.MemProfile(nil, true)
	records := make([]runtime.MemProfileRecord, n+64)
	n, ok := runtime.MemProfile(records, true)
	if !ok {
		return 0
	}
	var total int64
	for _, r := range records[:n] {
		total += r.InUseBytes()
	}
	return float64(total)
}

// writeHeapProfile writes the heap profile (as of the collections inUse
// ran) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
