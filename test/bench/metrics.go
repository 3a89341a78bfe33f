// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/controller/taskrun"
	"github.com/example/platform-operator/internal/testutil/localwebhook"
	"github.com/example/platform-operator/test/bench/internal/cached"
	"github.com/example/platform-operator/test/harness"
)

// sample is one scrape of a manager's /metrics, reduced to what the
// benchmark reads.
type sample struct {
	// writes counts the manager's POST, PUT, PATCH and DELETE requests to the
	// API server (client-go's rest_client_requests_total).
	writes float64
	// stored counts the manager's writes of stored objects by
	// "verb resource[/subresource]" (platform_operator_api_writes_total);
	// reviews its access and token reviews, which store nothing.
	stored  map[string]float64
	reviews float64
	// reconciles counts finished reconciles of every controller.
	reconciles float64
	// depth is the sum of the controllers' work queue depths.
	depth float64
	// heapInuse is the Go heap in use, in bytes (whole spans);
	// heapAlloc the bytes of the objects allocated in it, which right after
	// a collection is the live heap; heapLive the live heap the last
	// collection marked (go_gc_heap_live_bytes), which allocations after it
	// — the scrape's own, say — do not move.
	heapInuse, heapAlloc, heapLive float64
	// heapFree is heap memory free and not yet returned to the operating
	// system (idle minus released), which counts in the RSS; heapGoal the
	// heap size at which the next collection starts; stacks the goroutine
	// stacks; runtimeSys the runtime's own structures (the collector's
	// metadata, spans, caches, profiling buckets).
	heapFree, heapGoal, stacks, runtimeSys float64
	// taskPasses counts the ScheduleTask controller's finished reconciles,
	// taskErrors those that ended in an error.
	taskPasses, taskErrors float64
	// taskPassTime and runPassTime are the ScheduleTask and TaskRun
	// controllers' reconcile time histograms, as total seconds and count.
	taskPassTime, runPassTime sumCount
	// taskQueueWait is the ScheduleTask work queue's wait histogram
	// (workqueue_queue_duration_seconds): cumulative counts by upper bound.
	taskQueueWait []bucket
	// limiterWait is the time requests waited in the client's rate limiter
	// (rest_client_rate_limiter_duration_seconds), apiTime the time the API
	// server took to answer (rest_client_request_duration_seconds), both
	// over every verb, with limiterBuckets the limiter's histogram.
	limiterWait, apiTime sumCount
	limiterBuckets       []bucket
	// webhookRefused counts the webhook server's refusals before any
	// webhook saw the request (platform_operator_webhook_rejected_total:
	// 429s beyond --webhook-max-in-flight among them); webhookTime and
	// webhookBuckets time its webhooks' handling of each request
	// (controller_runtime_webhook_latency_seconds).
	webhookRefused float64
	webhookTime    sumCount
	webhookBuckets []bucket
	// webhookByPath is webhookTime by the webhook's path.
	webhookByPath map[string]sumCount
	// cpuSeconds is the manager's CPU time (process_cpu_seconds_total).
	cpuSeconds float64
	// lateness is the canary measurements' lateness histogram
	// (platform_operator_appdeployment_analysis_lateness_seconds).
	lateness []bucket
	// reconcileTime is every controller's reconcile time histogram
	// (controller_runtime_reconcile_time_seconds), buckets added up.
	reconcileTime []bucket
	// events counts the controllers' events by outcome (sent, dropped,
	// failed: platform_operator_events_total).
	events map[string]float64
}

// sumCount is a histogram's sum and count.
type sumCount struct{ sum, count float64 }

// add adds o's observations to s.
func (s *sumCount) add(o sumCount) {
	s.sum += o.sum
	s.count += o.count
}

// since is what was observed between before and s.
func (s sumCount) since(before sumCount) sumCount {
	return sumCount{sum: s.sum - before.sum, count: s.count - before.count}
}

// meanDelta is the mean of the observations between two scrapes, 0 when
// there were none (JSON has no NaN).
func meanDelta(before, after sumCount) float64 {
	if n := after.count - before.count; n > 0 {
		return (after.sum - before.sum) / n
	}
	return 0
}

// bucket is one cumulative bucket of a histogram.
type bucket struct {
	le    float64
	count float64
}

// quantileUpTo is the upper bound of the bucket in which quantile q of the
// observations between two scrapes of a histogram falls: an upper bound on
// that quantile. It is 0 when there were none (or no histogram), which
// JSON can hold where NaN cannot: the AppDeployment suite's manager has a
// ScheduleTask queue that no task passes through.
func quantileUpTo(before, after []bucket, q float64) float64 {
	if len(after) == 0 {
		return 0
	}
	delta := func(i int) float64 {
		d := after[i].count
		if i < len(before) {
			d -= before[i].count
		}
		return d
	}
	total := delta(len(after) - 1)
	if total <= 0 {
		return 0
	}
	for i := range after {
		if total > 0 && delta(i) >= q*total {
			return after[i].le
		}
	}
	return math.Inf(1)
}

// quantile estimates quantile q of a cumulative histogram as Prometheus's
// histogram_quantile does: linearly within the bucket it falls in; 0 when
// the histogram is empty, the last finite bound when q falls past it.
func quantile(buckets []bucket, q float64) float64 {
	if len(buckets) == 0 || buckets[len(buckets)-1].count == 0 {
		return 0
	}
	rank := q * buckets[len(buckets)-1].count
	lower, below := 0.0, 0.0
	for _, b := range buckets {
		if b.count >= rank {
			if math.IsInf(b.le, 1) {
				return lower
			}
			if b.count == below {
				return b.le
			}
			return lower + (b.le-lower)*(rank-below)/(b.count-below)
		}
		lower, below = b.le, b.count
	}
	return lower
}

// scrape reads the manager's metrics; the benchmark runs it with
// --metrics-secure=false, so plain HTTP on loopback.
func scrape(ctx context.Context, m *harness.Manager) (sample, error) {
	url := fmt.Sprintf("http://%s:%d/metrics", localwebhook.Host, m.MetricsPort)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return sample{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return sample{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return sample{}, fmt.Errorf("parse metrics of %s: %w", url, err)
	}
	var s sample
	for _, m := range families["rest_client_requests_total"].GetMetric() {
		switch label(m, "method") {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			s.writes += m.GetCounter().GetValue()
		}
	}
	s.stored = map[string]float64{}
	for _, m := range families["platform_operator_api_writes_total"].GetMetric() {
		if reviewGroups[label(m, "group")] {
			s.reviews += m.GetCounter().GetValue()
			continue
		}
		what := label(m, "verb") + " " + label(m, "resource")
		if sub := label(m, "subresource"); sub != "" {
			what += "/" + sub
		}
		s.stored[what] += m.GetCounter().GetValue()
	}
	s.limiterWait, s.limiterBuckets = histogramSum(families["rest_client_rate_limiter_duration_seconds"])
	s.apiTime, _ = histogramSum(families["rest_client_request_duration_seconds"])
	s.webhookRefused = sum(families["platform_operator_webhook_rejected_total"])
	s.webhookTime, s.webhookBuckets = histogramSum(families["controller_runtime_webhook_latency_seconds"])
	s.webhookByPath = map[string]sumCount{}
	for _, m := range families["controller_runtime_webhook_latency_seconds"].GetMetric() {
		h := m.GetHistogram()
		t := s.webhookByPath[label(m, "webhook")]
		t.sum += h.GetSampleSum()
		t.count += float64(h.GetSampleCount())
		s.webhookByPath[label(m, "webhook")] = t
	}
	s.cpuSeconds = sum(families["process_cpu_seconds_total"])
	_, s.lateness = histogramSum(families["platform_operator_appdeployment_analysis_lateness_seconds"])
	s.reconciles = sum(families["controller_runtime_reconcile_total"])
	s.depth = sum(families["workqueue_depth"])
	s.heapInuse = sum(families["go_memstats_heap_inuse_bytes"])
	s.heapAlloc = sum(families["go_memstats_heap_alloc_bytes"])
	s.heapLive = sum(families["go_gc_heap_live_bytes"])
	s.heapFree = sum(families["go_memstats_heap_idle_bytes"]) - sum(families["go_memstats_heap_released_bytes"])
	s.heapGoal = sum(families["go_memstats_next_gc_bytes"])
	s.stacks = sum(families["go_memstats_stack_sys_bytes"])
	for _, name := range []string{"go_memstats_gc_sys_bytes", "go_memstats_other_sys_bytes", "go_memstats_mspan_sys_bytes",
		"go_memstats_mcache_sys_bytes", "go_memstats_buck_hash_sys_bytes"} {
		s.runtimeSys += sum(families[name])
	}
	for _, m := range families["controller_runtime_reconcile_total"].GetMetric() {
		if label(m, "controller") == scheduletask.ControllerName {
			s.taskPasses += m.GetCounter().GetValue()
			if label(m, "result") == "error" {
				s.taskErrors += m.GetCounter().GetValue()
			}
		}
	}
	_, s.reconcileTime = histogramSum(families["controller_runtime_reconcile_time_seconds"])
	s.events = map[string]float64{}
	for _, m := range families["platform_operator_events_total"].GetMetric() {
		s.events[label(m, "outcome")] += m.GetCounter().GetValue()
	}
	for _, m := range families["controller_runtime_reconcile_time_seconds"].GetMetric() {
		h := sumCount{m.GetHistogram().GetSampleSum(), float64(m.GetHistogram().GetSampleCount())}
		switch label(m, "controller") {
		case scheduletask.ControllerName:
			s.taskPassTime = h
		case taskrun.ControllerName:
			s.runPassTime = h
		}
	}
	for _, m := range families["workqueue_queue_duration_seconds"].GetMetric() {
		if label(m, "name") != scheduletask.ControllerName {
			continue
		}
		for _, b := range m.GetHistogram().GetBucket() {
			s.taskQueueWait = append(s.taskQueueWait, bucket{le: b.GetUpperBound(), count: float64(b.GetCumulativeCount())})
		}
		s.taskQueueWait = append(s.taskQueueWait, bucket{le: math.Inf(1), count: float64(m.GetHistogram().GetSampleCount())})
	}
	return s, nil
}

// histogramSum adds up every series of a histogram family: the sum and
// count of its observations, and its cumulative buckets.
func histogramSum(f *dto.MetricFamily) (sumCount, []bucket) {
	var total sumCount
	var buckets []bucket
	for _, m := range f.GetMetric() {
		h := m.GetHistogram()
		total.sum += h.GetSampleSum()
		total.count += float64(h.GetSampleCount())
		for i, b := range h.GetBucket() {
			if i == len(buckets) {
				buckets = append(buckets, bucket{le: b.GetUpperBound()})
			}
			buckets[i].count += float64(b.GetCumulativeCount())
		}
	}
	if len(buckets) > 0 {
		buckets = append(buckets, bucket{le: math.Inf(1), count: total.count})
	}
	return total, buckets
}

// reviewGroups are the API groups whose creates ask a question and store
// nothing: SubjectAccessReviews and the like, which admission asks.
var reviewGroups = map[string]bool{"authorization.k8s.io": true, "authentication.k8s.io": true}

// storedWrites is the writes of stored objects between two samples, in all
// and by what was written.
func storedWrites(before, after sample) (total float64, by map[string]float64) {
	by = map[string]float64{}
	for what, n := range after.stored {
		if d := n - before.stored[what]; d > 0 {
			by[what] = d
			total += d
		}
	}
	return total, by
}

// get returns the body of a GET of url.
func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// label returns the value of a metric's label.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sum adds up every series of a counter or gauge family.
func sum(f *dto.MetricFamily) float64 {
	var total float64
	for _, m := range f.GetMetric() {
		total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
	}
	return total
}

// quiesce waits until the manager has made no write and had nothing queued
// for the given quiet time, and returns the sample it ended on. Reconciles
// may go on: with a short --sync-period, resyncs never stop.
func quiesce(ctx context.Context, m *harness.Manager, quiet, timeout time.Duration) (sample, error) {
	deadline := time.Now().Add(timeout)
	last, err := scrape(ctx, m)
	if err != nil {
		return sample{}, err
	}
	since := time.Now()
	for {
		select {
		case <-ctx.Done():
			return sample{}, ctx.Err()
		case <-time.After(time.Second):
		}
		s, err := scrape(ctx, m)
		if err != nil {
			return sample{}, err
		}
		if s.writes != last.writes || s.depth > 0 {
			since = time.Now()
		}
		last = s
		if time.Since(since) >= quiet {
			return s, nil
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("the manager was still busy after %s (queue depth %v)", timeout, s.depth)
		}
	}
}

// settleFor is how long a process's RSS must not fall before the memory
// figure reads it, the manager's and the floor's alike
// (test/bench/cachefloor's -settle): the runtime returns freed heap to the
// operating system at its own pace, and a reading taken while it does would
// count memory the process is giving back.
const settleFor = 20 * time.Second

// settled waits, once the manager is idle, until its RSS has not fallen by
// more than 1 % for settleFor (at most timeout), and then reads its memory
// and metrics.
func settled(ctx context.Context, m *harness.Manager, timeout time.Duration) (sample, cached.Memory, error) {
	deadline := time.Now().Add(timeout)
	mem, err := cached.ProcessMemory(m.PID())
	if err != nil {
		return sample{}, mem, err
	}
	low, since := mem.RSS, time.Now()
	for time.Since(since) < settleFor && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return sample{}, mem, ctx.Err()
		case <-time.After(2 * time.Second):
		}
		if mem, err = cached.ProcessMemory(m.PID()); err != nil {
			return sample{}, mem, err
		}
		if mem.RSS < low*0.99 {
			low, since = mem.RSS, time.Now()
		}
	}
	s, err := scrape(ctx, m)
	if err != nil {
		return sample{}, mem, err
	}
	mem, err = cached.ProcessMemory(m.PID())
	return s, mem, err
}
