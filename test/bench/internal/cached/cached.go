// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package cached says what the manager's cache holds, for the benchmark's
// floors: a bare client that reads or keeps the same objects.
package cached

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller"
	"github.com/example/platform-operator/internal/index"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// Kinds are the kinds the manager's controllers watch, in the form they
// watch them (ReplicaSets as metadata), so the kinds its cache holds before
// it is ready.
func Kinds() []client.Object {
	return []client.Object{
		&platformv1.ScheduleTask{}, &platformv1.TaskRun{}, &batchv1.CronJob{}, &batchv1.Job{}, &corev1.Pod{},
		&platformv1.AppDeployment{}, &appsv1.Deployment{}, &corev1.Service{}, index.ReplicaSetMetadata(),
	}
}

// Start starts a cache of every kind of Kinds, with the manager's selection
// of children (controller.CacheOptions), and waits until it holds them.
// With transforms false it keeps whole objects; with true it keeps them as
// the manager does. It has no index, no handler, nothing else: a floor.
func Start(ctx context.Context, cfg *rest.Config, transforms bool) (cache.Cache, error) {
	opts, err := controller.CacheOptions()
	if err != nil {
		return nil, err
	}
	opts.Scheme = testenv.Scheme()
	if !transforms {
		opts.DefaultTransform = nil
		for obj, by := range opts.ByObject {
			by.Transform = nil
			opts.ByObject[obj] = by
		}
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	for _, obj := range Kinds() {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return nil, fmt.Errorf("informer for %T: %w", obj, err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.New("the cache did not sync")
	}
	return c, nil
}

// Reading is what the floor of the memory figure (test/bench/cachefloor)
// prints once its cache is full and its resident memory has settled.
type Reading struct {
	RSSBytes float64 `json:"rssBytes"`
	// RSSFileBytes is the part of RSSBytes that is pages of the program's
	// file (its code and read-only data), which grows with the binary and
	// not with the objects.
	RSSFileBytes   float64 `json:"rssFileBytes"`
	HeapAllocBytes float64 `json:"heapAllocBytes"`
	SyncSeconds    float64 `json:"syncSeconds"`
	// ProfiledInUseBytes is what the heap profile counts in use after a
	// collection: every live object's bytes when the process records
	// every allocation (GODEBUG=memprofilerate=1), a sample otherwise.
	ProfiledInUseBytes float64 `json:"profiledInUseBytes,omitempty"`
}

// Memory is a process's resident memory, from /proc/<pid>/status, in bytes.
type Memory struct {
	// RSS is the resident set, Peak its high-water mark; File the part of
	// RSS that is pages of mapped files (the program's binary above all),
	// Anon the rest (the heap, stacks and the runtime's own data).
	RSS, Peak, File, Anon float64
}

// ProcessMemory reads the memory of the process pid; pid 0 is this process.
func ProcessMemory(pid int) (Memory, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	fields := map[string]*float64{"VmRSS:": &m.RSS, "VmHWM:": &m.Peak, "RssFile:": &m.File, "RssAnon:": &m.Anon}
	for line := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && fields[f[0]] != nil {
			kb, _ := strconv.ParseFloat(f[1], 64)
			*fields[f[0]] = kb * 1024
		}
	}
	return m, nil
}
