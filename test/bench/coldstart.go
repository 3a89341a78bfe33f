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
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/harness"
)

// cachedKinds are the kinds the manager's controllers watch, so the kinds
// its cache holds before it is ready.
func cachedKinds() []client.Object {
	return []client.Object{
		&platformv1.ScheduleTask{}, &platformv1.TaskRun{}, &batchv1.CronJob{}, &batchv1.Job{}, &corev1.Pod{},
		&platformv1.AppDeployment{}, &appsv1.Deployment{}, &corev1.Service{},
	}
}

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
	opts, err := controller.CacheOptions()
	if err != nil {
		return 0, err
	}
	opts.Scheme, opts.DefaultTransform = testenv.Scheme(), nil
	for obj, by := range opts.ByObject {
		by.Transform = nil
		opts.ByObject[obj] = by
	}
	cfg := rest.CopyConfig(b.cluster.Config)
	cfg.QPS, cfg.Burst = float32(b.cfg.QPS), b.cfg.Burst

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	c, err := cache.New(cfg, opts)
	if err != nil {
		return 0, err
	}
	for _, obj := range cachedKinds() {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return 0, fmt.Errorf("informer for %T: %w", obj, err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return 0, errors.New("the bare cache did not sync")
	}
	return time.Since(start), nil
}
