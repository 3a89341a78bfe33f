// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/pprof/profile"

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
// objects allocated right after a collection), in bytes, and the bytes in
// use its heap profile counts at that collection (exact when the manager
// records every allocation, GODEBUG=memprofilerate=1; an estimate from
// samples otherwise).
type memoryReading struct{ rss, heap, profiled float64 }

// liveMemory waits for the manager to be idle, has it collect garbage (the
// heap profile endpoint with gc=1 does) twice, and reads its RSS and the
// live heap the second collection marked. The first collection moves what
// sync.Pools hold to their victim caches, which it keeps; only the second
// frees them (the pooled buffers of the decoders and of the HTTP/2
// transport, some hundred KiB that would otherwise come and go between
// readings).
func (b *bench) liveMemory(ctx context.Context) (memoryReading, error) {
	if _, err := quiesce(ctx, b.manager, 10*time.Second, 30*time.Minute); err != nil {
		return memoryReading{}, err
	}
	var heapProfile []byte
	for range 2 {
		var err error
		if heapProfile, err = get(ctx, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", b.pprofPort)); err != nil {
			return memoryReading{}, err
		}
	}
	profiled, err := inUseBytes(heapProfile)
	if err != nil {
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
	heap := s.heapLive
	if heap == 0 {
		heap = s.heapAlloc // a manager without the runtime's metrics
	}
	return memoryReading{rss: mem.RSS, heap: heap, profiled: profiled}, nil
}

// inUseBytes sums a heap profile's inuse_space: the bytes of the objects
// the last collection found live, by the allocations the profile recorded.
func inUseBytes(data []byte) (float64, error) {
	p, err := profile.ParseData(data)
	if err != nil {
		return 0, fmt.Errorf("heap profile: %w", err)
	}
	i := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "inuse_space" })
	if i < 0 {
		return 0, errors.New("heap profile without inuse_space")
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[i]
	}
	return float64(total), nil
}
