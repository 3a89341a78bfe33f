// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/appdeployment"
	"github.com/example/platform-operator/internal/testutil/localwebhook"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/bench/internal/cached"
	"github.com/example/platform-operator/test/harness"
)

// The canary fleet of figure 10: how many namespaces hold the fleet's
// canaries, how often each is measured, the criteria of each, and the
// noisy namespace of the fairness half, whose every query the proxy holds
// fleetNoisyDelay.
const (
	fleetNamespaces    = 50
	fleetInterval      = 60 * time.Second
	fleetCriteria      = 3
	fleetNoisy         = "bench-fleet-noisy"
	fleetNoisyDelay    = 2 * time.Second
	fleetNoisyCriteria = 10
	// fleetReplicas are each canary's pods; its canary has one more at
	// both steps.
	fleetReplicas = 2
)

// Targets of figure 10.
const (
	fleetTargetLateness = 2 * time.Second
	fleetTargetCores    = 0.5
)

// fleetResult is figure 10: a fleet of canaries measured at once against
// a real Prometheus through a counting proxy, alone and beside a noisy
// namespace whose queries are slow.
type fleetResult struct {
	Canaries   int     `json:"canaries"`
	Namespaces int     `json:"namespaces"`
	Criteria   int     `json:"criteria"`
	Interval   float64 `json:"intervalSeconds"`
	// MaxInFlight is the manager's --analysis-max-in-flight.
	MaxInFlight int `json:"maxInFlight"`
	// Alone is the fleet by itself; Beside is the fleet while the noisy
	// namespace's NoisyCanaries canaries of NoisyCriteria criteria are
	// measured too, each of their queries held NoisyDelay by the proxy.
	Alone         fleetWindow `json:"alone"`
	Beside        fleetWindow `json:"beside"`
	NoisyCanaries int         `json:"noisyCanaries"`
	NoisyCriteria int         `json:"noisyCriteria"`
	NoisyDelay    float64     `json:"noisyDelaySeconds"`
	// Noisy is the noisy namespace's own lateness in the Beside window,
	// of its canaries measured often enough to tell (see
	// measurementLateness); NoisyMeasured its measurements that started
	// in the window, of NoisyDue that fell due (an interval each).
	Noisy         stats `json:"noisy"`
	NoisyMeasured int   `json:"noisyMeasured"`
	NoisyDue      int   `json:"noisyDue"`
	// PeakRSSMiB is the manager's peak RSS since its start.
	PeakRSSMiB float64 `json:"peakRssMiB"`
}

// fleetWindow is one window of the figure: the fleet's measurements that
// started in it, their lateness, and what the proxy and the manager saw.
type fleetWindow struct {
	Seconds float64 `json:"seconds"`
	// Lateness is when a measurement started (the time its queries ask
	// Prometheus about) minus when it was due (the one before it, as
	// status records it, plus the interval), of the measurements whose
	// due time the proxy can tell (each canary's third and later).
	Lateness     stats `json:"lateness"`
	Measurements int   `json:"measurements"`
	// Queries are the fleet's queries the proxy passed in the window;
	// InFlight the most of the manager's queries it held at once.
	Queries  int `json:"queries"`
	InFlight int `json:"inFlight"`
	// Cores is the manager's CPU time over the window's length; RSSMiB
	// its highest RSS read in it.
	Cores  float64 `json:"cores"`
	RSSMiB float64 `json:"rssMiB"`
	// OperatorLateness is the manager's own lateness histogram's p99 over
	// the window (appdeployment_analysis_lateness_seconds, every
	// namespace's, bucket bounds), beside what the proxy saw; -1 when it
	// is past the last bound (60 s).
	OperatorLatenessP99 float64 `json:"operatorLatenessP99"`
}

// runFleet measures figure 10 on a new kwok cluster of its own with a
// traffic simulator, a Prometheus and, between the manager and it, the
// counting proxy.
func runFleet(ctx context.Context, cfg config) (*fleetResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := cfg.Fleet
	pods := (n + cfg.FleetNoisy) * (fleetReplicas + 1)
	c, teardown, err := harness.StartCluster(ctx, fmt.Sprintf("bench-fleet-%d", time.Now().Unix()), harness.ClusterOptions{
		Nodes: max(4, pods/podsPerNode+1), KwokctlArgs: []string{"--disable-qps-limits"},
	})
	if err != nil {
		return nil, err
	}
	defer func() { cancel(); teardown() }()
	restCfg := rest.CopyConfig(c.Config)
	restCfg.QPS, restCfg.Burst = float32(cfg.QPS), cfg.Burst
	cl, err := client.New(restCfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return nil, err
	}
	prom, err := startTraffic(ctx, c.Config)
	if err != nil {
		return nil, err
	}
	defer prom.stop()
	proxy, err := startQueryProxy(prom.Address(), fleetNoisy, fleetNoisyDelay)
	if err != nil {
		return nil, err
	}
	defer proxy.close()
	op, err := harness.StartOperator(ctx, c, harness.OperatorOptions{Args: []string{
		"--leader-elect=false", "--metrics-secure=false",
		fmt.Sprintf("--kube-api-qps=%g", cfg.QPS), fmt.Sprintf("--kube-api-burst=%d", cfg.Burst),
		"--prometheus-address=" + proxy.url,
	}})
	if err != nil {
		return nil, err
	}
	defer op.Stop()
	m, err := op.StartReplica(ctx)
	if err != nil {
		return nil, err
	}
	res := &fleetResult{
		Canaries: n, Namespaces: fleetNamespaces, Criteria: fleetCriteria, Interval: fleetInterval.Seconds(),
		MaxInFlight: appdeployment.DefaultMaxInFlight, NoisyCanaries: cfg.FleetNoisy,
		NoisyCriteria: fleetNoisyCriteria, NoisyDelay: fleetNoisyDelay.Seconds(),
	}
	fleet := make([]types.NamespacedName, n)
	for i := range fleet {
		fleet[i] = types.NamespacedName{Namespace: fmt.Sprintf("bench-fleet-%02d", i%fleetNamespaces),
			Name: fmt.Sprintf("canary-%04d", i)}
	}
	harness.Logf("bench: fleet, %d canaries in %d namespaces", n, fleetNamespaces)
	if err := startCanaries(ctx, cl, cfg, fleet, fleetCriteria); err != nil {
		return res, err
	}
	// Every canary at its second step, measured there twice: from then on
	// each measurement's due time is the one before it's, which the proxy
	// sees.
	if err := proxy.waitMeasured(ctx, fleet, len(fleet), 3, 10*time.Minute); err != nil {
		return res, err
	}
	if res.Alone, err = fleetMeasure(ctx, proxy, m, fleet, cfg.FleetWindow); err != nil {
		return res, err
	}
	noisy := make([]types.NamespacedName, cfg.FleetNoisy)
	for i := range noisy {
		noisy[i] = types.NamespacedName{Namespace: fleetNoisy, Name: fmt.Sprintf("noisy-%04d", i)}
	}
	harness.Logf("bench: fleet, beside %d noisy canaries of %d criteria, their queries held %s",
		len(noisy), fleetNoisyCriteria, fleetNoisyDelay)
	if err := startCanaries(ctx, cl, cfg, noisy, fleetNoisyCriteria); err != nil {
		return res, err
	}
	// One noisy canary measured, then an interval more, in which every
	// other's first measurement falls due: their load has begun. (Their
	// namespace's share of the slots serves far fewer than all of them in
	// an interval: that is the point.)
	if err := proxy.waitMeasured(ctx, noisy, 1, 1, 10*time.Minute); err != nil {
		return res, err
	}
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(fleetInterval):
	}
	start := time.Now()
	if res.Beside, err = fleetMeasure(ctx, proxy, m, fleet, cfg.FleetWindow); err != nil {
		return res, err
	}
	end := time.Now()
	res.Noisy = newStats(proxy.lateness(noisy, start, end))
	res.NoisyMeasured = proxy.started(noisy, start, end)
	res.NoisyDue = len(noisy) * int(end.Sub(start)/fleetInterval)
	if mem, err := cached.ProcessMemory(m.PID()); err == nil {
		res.PeakRSSMiB = mem.Peak / (1 << 20)
	}
	return res, nil
}

// fleetApp is a canary of the fleet: two pods (and one canary pod at
// either step), a first step at 25 % judged once, a second at 50 % that
// waits for a person, so that it is measured
// every fleetInterval for as long as the run lasts; criteria criteria,
// the first two built in, the rest PromQL with a CEL condition, all of
// which a healthy simulated version passes.
func fleetApp(key types.NamespacedName, criteria int) *platformv1.AppDeployment {
	ad := &platformv1.AppDeployment{}
	ad.Namespace, ad.Name = key.Namespace, key.Name
	ad.Spec = platformv1.AppDeploymentSpec{
		Image:    appImage + appVersion1,
		Replicas: ptr.To[int32](fleetReplicas),
		Strategy: platformv1.Strategy{
			Type: platformv1.StrategyCanary,
			Steps: []platformv1.CanaryStep{
				{Weight: 25},
				{Weight: 50, Approval: platformv1.ApprovalManual},
			},
			Analysis: platformv1.Analysis{IntervalSeconds: int32(fleetInterval / time.Second), MinMeasurements: 1},
		},
	}
	s := &ad.Spec.Strategy
	s.CanaryCriteria = append(s.CanaryCriteria,
		platformv1.CanaryCriterion{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(50.0)},
		platformv1.CanaryCriterion{Metric: platformv1.MetricLatencyP99, Threshold: ptr.To(30.0)})
	for i := 2; i < criteria; i++ {
		s.CanaryCriteria = append(s.CanaryCriteria, platformv1.CanaryCriterion{
			Name:             fmt.Sprintf("requests-%d", i),
			Query:            `sum(rate(http_requests_total{app="{{name}}",track="{{track}}"}[{{interval}}]))`,
			SuccessCondition: "result >= 0.0",
		})
	}
	return ad
}

// startCanaries creates the AppDeployments of keys at the first version,
// waits until each is Ready, and sets the second version, which each
// releases by its canary.
func startCanaries(ctx context.Context, c client.Client, cfg config, keys []types.NamespacedName, criteria int) error {
	seen := map[string]bool{}
	for _, k := range keys {
		if !seen[k.Namespace] {
			seen[k.Namespace] = true
			if err := createNamespace(ctx, c, k.Namespace); err != nil {
				return err
			}
		}
	}
	if err := parallel(ctx, len(keys), cfg.Workers, func(i int) error {
		return c.Create(ctx, fleetApp(keys[i], criteria))
	}); err != nil {
		return err
	}
	if err := waitApps(ctx, c, keys, 15*time.Minute, func(ad *platformv1.AppDeployment) bool {
		return ad.Status.ObservedGeneration == ad.Generation && ad.Status.StableVersion == appVersion1
	}); err != nil {
		return fmt.Errorf("the first version released: %w", err)
	}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"image":%q}}`, appImage+appVersion2))
	return parallel(ctx, len(keys), cfg.Workers, func(i int) error {
		ad := &platformv1.AppDeployment{}
		ad.Namespace, ad.Name = keys[i].Namespace, keys[i].Name
		return c.Patch(ctx, ad, patch)
	})
}

// waitApps waits until ok holds for every AppDeployment of keys, reading
// them a namespace at a time.
func waitApps(ctx context.Context, c client.Client, keys []types.NamespacedName, within time.Duration,
	ok func(*platformv1.AppDeployment) bool) error {
	want := map[types.NamespacedName]bool{}
	namespaces := map[string]bool{}
	for _, k := range keys {
		want[k], namespaces[k.Namespace] = true, true
	}
	var done int
	err := poll(ctx, time.Now().Add(within), func() (bool, error) {
		done = 0
		for ns := range namespaces {
			var list platformv1.AppDeploymentList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			for i := range list.Items {
				ad := &list.Items[i]
				if want[client.ObjectKeyFromObject(ad)] && ok(ad) {
					done++
				}
			}
		}
		return done == len(keys), nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d: %w", done, len(keys), err)
	}
	return nil
}

// fleetMeasure watches the fleet for d: the lateness of its measurements
// that start in the window as the proxy saw them, the proxy's most
// queries in flight, and the manager's CPU and memory.
func fleetMeasure(ctx context.Context, proxy *queryProxy, m *harness.Manager, fleet []types.NamespacedName,
	d time.Duration) (fleetWindow, error) {
	var w fleetWindow
	before, err := scrape(ctx, m)
	if err != nil {
		return w, err
	}
	proxy.resetInFlight()
	queries := proxy.queryCount()
	start := time.Now()
	var maxRSS float64
	end := start.Add(d)
	for time.Now().Before(end) {
		if mem, err := cached.ProcessMemory(m.PID()); err == nil {
			maxRSS = max(maxRSS, mem.RSS)
		}
		select {
		case <-ctx.Done():
			return w, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	after, err := scrape(ctx, m)
	if err != nil {
		return w, err
	}
	took := time.Since(start)
	late := proxy.lateness(fleet, start, time.Now())
	w.Seconds, w.Lateness, w.Measurements = took.Seconds(), newStats(late), len(late)
	w.Queries, w.InFlight = proxy.queryCount()-queries, proxy.maxInFlight()
	w.Cores, w.RSSMiB = (after.cpuSeconds-before.cpuSeconds)/took.Seconds(), maxRSS/(1<<20)
	if w.OperatorLatenessP99 = quantileUpTo(before.lateness, after.lateness, 0.99); math.IsInf(w.OperatorLatenessP99, 0) ||
		math.IsNaN(w.OperatorLatenessP99) {
		w.OperatorLatenessP99 = -1
	}
	return w, nil
}

// queryProxy stands between the manager and Prometheus: it passes every
// query on, holding those about one namespace for a while first, counts
// the queries in flight at once, and notes each measurement it sees start.
type queryProxy struct {
	url   string
	srv   *http.Server
	slow  string
	delay time.Duration

	mu       sync.Mutex
	inFlight int
	most     int
	queries  int
	// starts are, per AppDeployment, the distinct times its queries asked
	// about, in order: each is when one of its measurements started (the
	// measurer queries every criterion at the measurement's start).
	starts map[types.NamespacedName][]time.Time
}

// queryLabels find the namespace and the application a query is about:
// the operator puts both in every selector of a canary's queries.
var (
	namespaceLabel = regexp.MustCompile(`namespace="([^"]+)"`)
	appLabel       = regexp.MustCompile(`app="([^"]+)"`)
)

// startQueryProxy serves a proxy to the Prometheus at target that holds
// the queries about namespace slow for delay.
func startQueryProxy(target, slow string, delay time.Duration) (*queryProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(localwebhook.Host, "0"))
	if err != nil {
		return nil, err
	}
	p := &queryProxy{url: "http://" + l.Addr().String(), slow: slow, delay: delay,
		starts: map[types.NamespacedName][]time.Time{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second}
	p.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.enter()
		defer p.leave()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		form, _ := url.ParseQuery(string(body))
		for k, v := range r.URL.Query() {
			form[k] = append(form[k], v...)
		}
		if p.note(form) == p.slow {
			select {
			case <-time.After(p.delay):
			case <-r.Context().Done():
				return
			}
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rp.ServeHTTP(w, r)
	})
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

// note records the query of form (its measurement's start) and returns
// the namespace it is about ("" for one about none, the outage probe).
func (p *queryProxy) note(form url.Values) string {
	q := form.Get("query")
	ns, app := namespaceLabel.FindStringSubmatch(q), appLabel.FindStringSubmatch(q)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queries++
	if ns == nil || app == nil {
		return ""
	}
	at, err := strconv.ParseFloat(form.Get("time"), 64)
	if err != nil {
		return ns[1]
	}
	sec, frac := math.Modf(at)
	t := time.Unix(int64(sec), int64(frac*1e9))
	k := types.NamespacedName{Namespace: ns[1], Name: app[1]}
	if s := p.starts[k]; len(s) == 0 || !s[len(s)-1].Equal(t) {
		p.starts[k] = append(s, t)
	}
	return ns[1]
}

func (p *queryProxy) enter() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight++
	p.most = max(p.most, p.inFlight)
}

func (p *queryProxy) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight--
}

// resetInFlight starts counting the most queries in flight anew.
func (p *queryProxy) resetInFlight() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.most = p.inFlight
}

// maxInFlight is the most queries in flight since resetInFlight.
func (p *queryProxy) maxInFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.most
}

// queryCount is how many queries the proxy has seen.
func (p *queryProxy) queryCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queries
}

// started counts the measurements of keys that started from from to to.
func (p *queryProxy) started(keys []types.NamespacedName, from, to time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, k := range keys {
		for _, s := range p.starts[k] {
			if !s.Before(from) && !s.After(to) {
				n++
			}
		}
	}
	return n
}

// waitMeasured waits until n AppDeployments of keys have started k
// measurements each.
func (p *queryProxy) waitMeasured(ctx context.Context, keys []types.NamespacedName, n, k int,
	within time.Duration) error {
	var done int
	err := poll(ctx, time.Now().Add(within), func() (bool, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		done = 0
		for _, key := range keys {
			if len(p.starts[key]) >= k {
				done++
			}
		}
		return done >= n, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d canaries measured %d times, want %d: %w", done, len(keys), k, n, err)
	}
	return nil
}

// lateness is, of the measurements of keys that started from from to to,
// how late each started (see measurementLateness).
func (p *queryProxy) lateness(keys []types.NamespacedName, from, to time.Time) []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Duration
	for _, k := range keys {
		out = append(out, measurementLateness(p.starts[k], fleetInterval, from, to)...)
	}
	return out
}

// measurementLateness is, for one canary's measurement starts, how late
// each that started from from to to was: its start minus its due time,
// the start before it as status records it (whole seconds) plus interval.
// A canary's first two measurements are left out: the first is due an
// interval after its first step's pods were ready, the second after its
// second step's, which the starts do not show. A measurement due in the
// window that had not started by its end counts as late by that much at
// least, so that one kept waiting is not missed.
func measurementLateness(starts []time.Time, interval time.Duration, from, to time.Time) []time.Duration {
	var out []time.Duration
	for i := 2; i < len(starts); i++ {
		if starts[i].Before(from) || starts[i].After(to) {
			continue
		}
		out = append(out, max(0, starts[i].Sub(starts[i-1].Truncate(time.Second).Add(interval))))
	}
	if n := len(starts); n >= 2 {
		due := starts[n-1].Truncate(time.Second).Add(interval)
		if !due.Before(from) && due.Before(to) {
			out = append(out, to.Sub(due))
		}
	}
	return out
}

func (p *queryProxy) close() { _ = p.srv.Close() }

// fleetRows prints figure 10.
func fleetRows(tw io.Writer, r *results) {
	f := r.Fleet
	if f == nil {
		fmt.Fprintf(tw, "10\tcanary fleet\tnot measured\t-\t-\n")
		return
	}
	window := func(w fleetWindow) string {
		return fmt.Sprintf("lateness p50 %s  p99 %s  max %s (%d measurements, %ds); %d in flight at most; "+
			"manager %.2f cores, %.0f MiB; its own lateness p99 (every namespace's) %s",
			ms(w.Lateness.P50), ms(w.Lateness.P99), ms(w.Lateness.Max), w.Measurements, int(w.Seconds), w.InFlight,
			w.Cores, w.RSSMiB, bound(w.OperatorLatenessP99))
	}
	met := func(w fleetWindow) bool {
		return w.Measurements > 0 && w.Lateness.P99 <= fleetTargetLateness.Seconds() && w.InFlight <= f.MaxInFlight
	}
	row(tw, "10", fmt.Sprintf("%d canaries in %d namespaces, %d criteria every %.0fs", f.Canaries, f.Namespaces,
		f.Criteria, f.Interval), window(f.Alone),
		fmt.Sprintf("lateness p99 <= %s, <= %d in flight, <= %.1f cores", fleetTargetLateness, f.MaxInFlight,
			fleetTargetCores),
		met(f.Alone) && f.Alone.Cores <= fleetTargetCores)
	row(tw, "", fmt.Sprintf("beside %d canaries of %d criteria, queries held %.0fs", f.NoisyCanaries, f.NoisyCriteria,
		f.NoisyDelay), window(f.Beside),
		fmt.Sprintf("the others' lateness p99 <= %s, <= %d in flight", fleetTargetLateness, f.MaxInFlight), met(f.Beside))
	row(tw, "", "  the noisy namespace", fmt.Sprintf("%d measurements started of %d due; lateness p50 %s  p99 %s "+
		"(%d measurements told); peak RSS %.0f MiB", f.NoisyMeasured, f.NoisyDue, ms(f.Noisy.P50), ms(f.Noisy.P99),
		f.Noisy.Count, f.PeakRSSMiB), "-", true)
}

// bound is a histogram's bucket bound as figure 10 prints it: "<= 1000.0ms",
// or "> 60s" past the last (-1).
func bound(seconds float64) string {
	if seconds < 0 {
		return "> 60s"
	}
	return "<= " + ms(seconds)
}
