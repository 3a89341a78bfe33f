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

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/bench/internal/cached"
)

// nsMaxSize is the namespace of the tasks at the size limits.
const nsMaxSize = "bench-maxsize"

// maxSizeResult is what the tasks at the size limits cost the manager: its
// memory before and after they were added, once idle and right after a
// garbage collection, so the difference is what the tasks keep alive.
type maxSizeResult struct {
	Tasks         int     `json:"tasks"`
	RSSBeforeMiB  float64 `json:"rssBeforeMiB"`
	RSSAfterMiB   float64 `json:"rssAfterMiB"`
	HeapBeforeMiB float64 `json:"heapInuseBeforeMiB"`
	HeapAfterMiB  float64 `json:"heapInuseAfterMiB"`
	// HeapPerTaskKiB is the growth of the live heap per task.
	HeapPerTaskKiB float64 `json:"heapPerTaskKiB"`
}

// maxSize adds MaxSizeTasks tasks whose command, args and env are at the
// API's limits (testutil.MaxSizeScheduleTask: every list at its maxItems,
// 32768 characters together) and measures what the manager keeps for
// them: the worst a tenant can make the operator hold per task, which the
// bounds exist to cap. It runs last, so it changes no other figure.
func (b *bench) maxSize(ctx context.Context) error {
	if b.cfg.MaxSizeTasks == 0 {
		return nil
	}
	before, err := b.liveMemory(ctx)
	if err != nil {
		return err
	}
	if err := b.createNamespace(ctx, nsMaxSize); err != nil {
		return err
	}
	err = parallel(ctx, b.cfg.MaxSizeTasks, b.cfg.Workers, func(i int) error {
		st := testutil.MaxSizeScheduleTask(nsMaxSize, fmt.Sprintf("task-%05d", i), testutil.WithSchedule(neverSchedule))
		return b.client.Create(ctx, st)
	})
	if err != nil {
		return err
	}
	if _, err := b.waitReady(ctx, nsMaxSize, b.cfg.MaxSizeTasks, 30*time.Minute); err != nil {
		return err
	}
	after, err := b.liveMemory(ctx)
	if err != nil {
		return err
	}
	r := &b.res.MaxSize
	r.Tasks = b.cfg.MaxSizeTasks
	r.RSSBeforeMiB, r.RSSAfterMiB = before.rss/(1<<20), after.rss/(1<<20)
	r.HeapBeforeMiB, r.HeapAfterMiB = before.heap/(1<<20), after.heap/(1<<20)
	r.HeapPerTaskKiB = (after.heap - before.heap) / 1024 / float64(b.cfg.MaxSizeTasks)
	return nil
}

// memoryReading is the manager's RSS and live Go heap (the bytes of the
// objects allocated right after a collection), in bytes.
type memoryReading struct{ rss, heap float64 }

// liveMemory waits for the manager to be idle, has it collect garbage (the
// heap profile endpoint with gc=1 does), and reads its RSS and live heap.
func (b *bench) liveMemory(ctx context.Context) (memoryReading, error) {
	if _, err := quiesce(ctx, b.manager, 10*time.Second, 30*time.Minute); err != nil {
		return memoryReading{}, err
	}
	if _, err := get(ctx, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", b.pprofPort)); err != nil {
		return memoryReading{}, err
	}
	s, err := scrape(ctx, b.manager)
	if err != nil {
		return memoryReading{}, err
	}
	mem, err := cached.ProcessMemory(b.manager.PID())
	if err != nil {
		return memoryReading{}, err
	}
	return memoryReading{rss: mem.RSS, heap: s.heapAlloc}, nil
}
