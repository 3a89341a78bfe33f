// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/appdeployment"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/bench/internal/cached"
	"github.com/example/platform-operator/test/harness"
)

// Namespaces of the AppDeployment suite, on its own cluster.
const (
	nsAppBaseline  = "bench-app-baseline"
	nsAppAdmission = "bench-app-admission"
	nsApps         = "bench-apps"
	nsCanaries     = "bench-canaries"
	nsAppFloor     = "bench-app-floor"
)

// Versions of the AppDeployment suite's releases. The traffic simulator
// answers 0.1 % of the requests of pods of these tags with errors, so a
// canary of the second passes an error-rate criterion of 0.5 %.
const (
	appVersion1 = "v1.0.0"
	appVersion2 = "v1.1.0"
	appImage    = "harbor.example.com/bench-service:"
)

// canaryInterval is the canaries' analysis interval, and canaryPasses the
// Passes their one step needs: three measurements, 10 s apart.
const (
	canaryInterval = 10 * time.Second
	canaryPasses   = 3
)

// Targets of the AppDeployment figures.
const (
	// targetWritesPerApp is the ceiling on manager writes per new
	// AppDeployment.
	targetWritesPerApp = 14
	// targetLateness bounds the p99 of a measurement's lateness, and
	// targetPromotion the p99 of the time from the last passing measurement
	// to the promotion begun.
	targetLateness  = 1.0
	targetPromotion = 2.0
)

// appDeployResult is figure 7: AppDeployments created at once, idle, and
// canaries analysing at once.
type appDeployResult struct {
	// Apps AppDeployments of Replicas pods each, strategy rolling.
	Apps     int `json:"apps"`
	Replicas int `json:"replicas"`
	// OperatorSeconds is from the first create to the last AppDeployment
	// seen Ready at its generation, the median of OperatorRuns;
	// BaselineSeconds a bare client's for the
	// same writes, waiting for the same Deployments to be available: the
	// median of BaselineRuns.
	OperatorSeconds float64 `json:"operatorSeconds"`
	// ConvergenceProfile is the manager's CPU profile (pprof) over the
	// last of OperatorRuns, saved beside the JSON.
	ConvergenceProfile []byte `json:"-"`
	// ConvergenceRequests is where the last of OperatorRuns went in the
	// manager's API requests, its client's rate limiter and its CPU.
	ConvergenceRequests burstDiagnosis `json:"convergenceRequests"`
	OperatorRuns        []float64      `json:"operatorRuns"`
	BaselineSeconds     float64        `json:"baselineSeconds"`
	BaselineRuns        []float64      `json:"baselineRuns"`
	Ratio               float64        `json:"ratio"`
	// FloorSeconds is the median of FloorRuns: the same bare client with
	// its creates going through the operator's admission, served by a
	// standby replica that reconciles nothing; FloorRatio is
	// OperatorSeconds over it.
	FloorSeconds float64   `json:"floorSeconds"`
	FloorRuns    []float64 `json:"floorRuns"`
	FloorRatio   float64   `json:"floorRatio"`
	// WritesPerApp counts the manager's writes of stored objects per new
	// AppDeployment; WritesPerAppBy splits them by "verb resource";
	// AccessReviewsPerApp the access reviews, not counted as writes.
	WritesPerApp        float64            `json:"managerWritesPerApp"`
	WritesPerAppBy      map[string]float64 `json:"managerWritesPerAppBy"`
	AccessReviewsPerApp float64            `json:"accessReviewsPerApp"`
	// IdleSeconds of nothing happening, with the manager resyncing every two
	// fifths of it: IdleWrites writes, IdleReconciles reconciles.
	IdleSeconds    float64 `json:"idleSeconds"`
	IdleWrites     float64 `json:"idleWrites"`
	IdleReconciles float64 `json:"idleReconciles"`
	// Canaries analysing at once, each measured canaryPasses times
	// IntervalSeconds apart.
	Canaries        int     `json:"canaries"`
	IntervalSeconds float64 `json:"intervalSeconds"`
	// Measurements counts the step measurements seen; Repeated those taken
	// again before the next was due (a measurement taken twice for one due
	// time); Unplaced those whose due time the watch could not tell.
	Measurements int `json:"measurements"`
	Repeated     int `json:"repeatedMeasurements"`
	Unplaced     int `json:"unplacedMeasurements"`
	// Lateness is, per measurement, the moment the watch first saw it in
	// status minus the moment it was due: it includes the queries and the
	// status write. LatenessTaken is the status's measuredAt minus the due
	// time, in the whole seconds status keeps.
	Lateness      stats `json:"lateness"`
	LatenessTaken stats `json:"latenessTaken"`
	// PromotionBegun is, per canary, from its last passing measurement
	// (status measuredAt, whole seconds, so up to 1 s early) to the stable
	// Deployment seen with the new template; PromotionBegunSeen from that
	// measurement seen in status to the same moment.
	PromotionBegun     stats `json:"promotionBegun"`
	PromotionBegunSeen stats `json:"promotionBegunSeen"`
	// PromotionComplete is from the last passing measurement to the outcome
	// Promoted seen. Its parts: StableRollout from the stable Deployment's
	// new template seen to its rollout seen complete, and PromotionRecorded
	// from there to the outcome seen. RolloutFloor is the same rollout of
	// bare Deployments, a bare client changing as many templates at once.
	PromotionComplete stats `json:"promotionComplete"`
	StableRollout     stats `json:"stableRollout"`
	PromotionRecorded stats `json:"promotionRecorded"`
	RolloutFloor      stats `json:"rolloutFloor"`
	// Promoted counts the canaries promoted.
	Promoted int `json:"promoted"`
	// AnalysisSeconds is from the new version set to the last canary
	// promoted; CPUSeconds the manager's CPU time in it; RSSMiB the highest
	// RSS read in it, PeakRSSMiB the process's peak since its start.
	AnalysisSeconds float64 `json:"analysisSeconds"`
	CPUSeconds      float64 `json:"cpuSeconds"`
	RSSMiB          float64 `json:"rssMiB"`
	PeakRSSMiB      float64 `json:"peakRssMiB"`
	// PrometheusQueries is the queries Prometheus evaluated in that time
	// (prometheus_engine_query_duration_seconds_count, inner_eval).
	PrometheusQueries float64 `json:"prometheusQueries"`
	// RoutedCanaries canaries moved by weight on HTTPRoutes at once
	// (figure 7e), RoutedPromoted of them promoted. RouteStep is, per
	// step, from its start (the canary seen at the step with its pods
	// ready) to the route seen with the step's weight, accepted by the
	// gateway; RouteStepsUnplaced the steps the watch could not place, and
	// RouteStepsEarly those whose route it saw accepted before it saw the
	// step's pods ready (the operator's watch was ahead: counted as 0 s).
	// RouteFloor is a bare client's write of the same weights on routes
	// of its own, to the route seen accepted.
	RoutedCanaries     int   `json:"routedCanaries"`
	RoutedPromoted     int   `json:"routedPromoted"`
	RouteStep          stats `json:"routeStep"`
	RouteStepsUnplaced int   `json:"routeStepsUnplaced"`
	RouteStepsEarly    int   `json:"routeStepsEarly"`
	RouteFloor         stats `json:"routeFloor"`
}

// appBench is the AppDeployment suite in progress, on a cluster of its own.
type appBench struct {
	cfg     config
	cluster *harness.Cluster
	// client has the manager's client settings; bare is another such
	// client, the bare client's in the operator's place.
	client  client.Client
	bare    client.Client
	watch   *appWatch
	prom    *traffic
	op      *harness.Operator
	manager *harness.Manager
	// pprofPort serves the manager's /debug/pprof/.
	pprofPort int
	res       *appDeployResult
}

// traffic is the traffic simulator and a Prometheus scraping it, which
// the AppDeployment suites run beside: the simulator serves the request
// metrics of every application pod, and Prometheus is what the canary
// analysis queries.
type traffic struct {
	*harness.Prometheus
	sim *harness.TrafficSim
	dir string
}

// startTraffic starts the traffic simulator on the cluster of cfg and a
// Prometheus scraping it.
func startTraffic(ctx context.Context, cfg *rest.Config) (*traffic, error) {
	sim, err := harness.StartTrafficSim(ctx, cfg)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-prometheus-")
	if err != nil {
		sim.Stop()
		return nil, err
	}
	prom, err := harness.StartPrometheus(ctx, dir, sim.ScrapeTarget())
	if err != nil {
		sim.Stop()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &traffic{Prometheus: prom, sim: sim, dir: dir}, nil
}

// stop stops Prometheus and the simulator and removes Prometheus's data.
func (t *traffic) stop() {
	t.Stop()
	t.sim.Stop()
	_ = os.RemoveAll(t.dir)
}

// runAppDeploy measures figure 7 on a new kwok cluster with a manager, a
// traffic simulator and a Prometheus of its own, so that it does not move
// the other figures, nor they it.
func runAppDeploy(ctx context.Context, cfg config) (*appDeployResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, teardown, err := harness.StartCluster(ctx, fmt.Sprintf("bench-app-%d", time.Now().Unix()), harness.ClusterOptions{
		Nodes:       cfg.appNodes(),
		KwokctlArgs: []string{"--disable-qps-limits"},
	})
	if err != nil {
		return nil, err
	}
	// Watches stop before the cluster goes (see run).
	defer func() { cancel(); teardown() }()
	b := &appBench{cfg: cfg, cluster: c, res: &appDeployResult{}}
	restCfg := rest.CopyConfig(c.Config)
	restCfg.QPS, restCfg.Burst = float32(cfg.QPS), cfg.Burst
	if b.client, err = client.New(restCfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, err
	}
	if b.bare, err = client.New(restCfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, err
	}
	if b.watch, err = startAppWatch(ctx, c.Config, int32(cfg.AppReplicas)); err != nil {
		return nil, err
	}
	if b.prom, err = startTraffic(ctx, c.Config); err != nil {
		return b.res, err
	}
	defer b.prom.stop()
	// The baseline runs before the operator exists, so nothing reacts to its
	// objects, and without admission webhooks: the strictest yardstick. It
	// runs beside the traffic simulator and Prometheus, as the operator
	// does: the simulator follows every pod and Prometheus scrapes it every
	// second, which takes a share of the same two cores from both sides.
	harness.Logf("bench: AppDeployments, the bare client")
	if b.res.BaselineSeconds, b.res.BaselineRuns, err = b.baseline(ctx, nsAppBaseline); err != nil {
		return b.res, fmt.Errorf("AppDeployment baseline: %w", err)
	}
	b.op, err = harness.StartOperator(ctx, c, harness.OperatorOptions{Args: b.managerArgs()})
	if err != nil {
		return b.res, err
	}
	defer b.op.Stop()
	harness.Logf("bench: AppDeployments, the bare client through the operator's admission")
	_, err = withStandby(ctx, c, b.op, func() error {
		var err error
		b.res.FloorSeconds, b.res.FloorRuns, err = b.baseline(ctx, nsAppAdmission)
		return err
	})
	if err != nil {
		return b.res, fmt.Errorf("AppDeployment admission floor: %w", err)
	}
	if b.pprofPort, err = harness.FreePort(); err != nil {
		return b.res, err
	}
	if b.manager, err = b.op.StartReplica(ctx, fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", b.pprofPort)); err != nil {
		return b.res, err
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"AppDeployments created at once", b.convergence},
		{"canaries analysing at once", b.canaries},
		{"weighted canaries on routes", b.routed},
		{"the rollout floor", b.rolloutFloor},
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

// podsPerNode is how many pods a kwok node takes: kwokctl's nodes allow 110,
// as a kubelet does by default.
const podsPerNode = 100

// appNodes is how many nodes the suite's cluster needs for its pods at their
// most: the AppDeployments', the canaries' and the rollout floor's at one
// surge pod each, and the weighted canaries' with up to half their pods in
// the canary and one surge pod.
func (c config) appNodes() int {
	pods := c.Apps*c.AppReplicas + 2*c.Canaries*(c.AppReplicas+1) + c.RoutedCanaries*(c.AppReplicas+c.AppReplicas/2+2)
	return max(4, pods/podsPerNode+1)
}

// managerArgs are the manager's flags: as the main suites run it, with the
// Prometheus the canaries are judged against.
func (b *appBench) managerArgs() []string {
	return []string{
		"--leader-elect=false",
		"--metrics-secure=false",
		fmt.Sprintf("--kube-api-qps=%g", b.cfg.QPS),
		fmt.Sprintf("--kube-api-burst=%d", b.cfg.Burst),
		"--prometheus-address=" + b.prom.Address(),
	}
}

// rollingApp is the i-th AppDeployment of figure 7a: strategy rolling, with
// a port, so it has a Deployment and a Service.
func (b *appBench) rollingApp(namespace string, i int) *platformv1.AppDeployment {
	return &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("app-%05d", i)},
		Spec: platformv1.AppDeploymentSpec{
			Image:    appImage + appVersion1,
			Replicas: ptr.To(int32(b.cfg.AppReplicas)),
			Port:     8080,
			Strategy: platformv1.Strategy{Type: platformv1.StrategyRolling},
		},
	}
}

// canaryApp is the i-th AppDeployment of figure 7d: strategy canary, one
// step at 30 %, judged by its error rate every canaryInterval, without a
// Service.
func (b *appBench) canaryApp(i int) *platformv1.AppDeployment {
	ad := b.rollingApp(nsCanaries, i)
	ad.Name = fmt.Sprintf("canary-%05d", i)
	// No port, so no Service: kwok's Service range (a /24) holds figure 7a's
	// Services and few more.
	ad.Spec.Port = 0
	ad.Spec.Strategy = platformv1.Strategy{
		Type:          platformv1.StrategyCanary,
		CanaryPercent: 30,
		CanaryCriteria: []platformv1.CanaryCriterion{
			{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)},
		},
		Analysis: platformv1.Analysis{IntervalSeconds: int32(canaryInterval / time.Second), MinMeasurements: canaryPasses},
	}
	return ad
}

// keys are the keys of n objects named by name(i) in namespace.
func keys(namespace string, n int, name func(int) string) []types.NamespacedName {
	out := make([]types.NamespacedName, n)
	for i := range out {
		out[i] = types.NamespacedName{Namespace: namespace, Name: name(i)}
	}
	return out
}

// appName is the name of the i-th AppDeployment of figure 7a.
func appName(i int) string { return fmt.Sprintf("app-%05d", i) }

// canaryName is the name of the i-th AppDeployment of figure 7d.
func canaryName(i int) string { return fmt.Sprintf("canary-%05d", i) }

// baseline times a bare client doing, per AppDeployment, the writes the
// operator makes for a new one: create the AppDeployment, apply its stable
// Deployment and its Service (the very objects the operator renders),
// write its status Progressing, and, once the Deployment is seen
// available, record the event that says it is released and write its
// status Ready.
//
// It does so baselineRuns times, in namespaces prefix-0, prefix-1, ..., and
// returns the median and every run's seconds.
func (b *appBench) baseline(ctx context.Context, prefix string) (float64, []float64, error) {
	return medianOfRuns(prefix, func(namespace string) (time.Duration, error) {
		return b.baselineOnce(ctx, namespace)
	})
}

// baselineOnce is one run of the bare client, in namespace; see baseline.
func (b *appBench) baselineOnce(ctx context.Context, namespace string) (time.Duration, error) {
	if err := createNamespace(ctx, b.cluster.Client, namespace); err != nil {
		return 0, err
	}
	n := b.cfg.Apps
	names := keys(namespace, n, appName)
	// As figure 1's bare client (see bench.baselineOnce): a user creates
	// the AppDeployments, and in the operator's place a client of its own
	// with one queue and Workers goroutines, as the operator has, makes each
	// one's children and first status once its create returns, then its
	// last writes once its Deployment is seen available.
	jobs := make(chan func() error, 2*n)
	var mu sync.Mutex
	created := make([]*platformv1.AppDeployment, n)
	children := func(i int, ad *platformv1.AppDeployment) func() error {
		return func() error {
			d, err := appdeployment.DesiredStableDeployment(ad)
			if err != nil {
				return err
			}
			owner := client.FieldOwner(appdeployment.FieldManager)
			if err := b.bare.Apply(ctx, d, owner, client.ForceOwnership); err != nil {
				return err
			}
			if err := b.bare.Apply(ctx, appdeployment.DesiredService(ad), owner, client.ForceOwnership); err != nil {
				return err
			}
			if err := b.bare.Status().Update(ctx, progressing(ad)); err != nil {
				return err
			}
			// Handed to the feeder only now: its last write is made on the
			// version this one returned.
			mu.Lock()
			created[i] = ad
			mu.Unlock()
			return nil
		}
	}
	start := time.Now()
	feedCtx, stopFeeding := context.WithCancel(ctx)
	defer stopFeeding()
	go func() {
		queued := make([]bool, n)
		left := n
		for left > 0 {
			for i, key := range names {
				mu.Lock()
				ad := created[i]
				mu.Unlock()
				if queued[i] || ad == nil {
					continue
				}
				if _, ok := b.watch.rolledOutAt(key, ad.Spec.Image); ok {
					queued[i], left = true, left-1
					jobs <- func() error { return b.released(ctx, ad) }
				}
			}
			select {
			case <-feedCtx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	var creating errgroup.Group
	creating.Go(func() error {
		return parallel(ctx, n, b.cfg.Workers, func(i int) error {
			ad := b.rollingApp(namespace, i)
			if err := b.client.Create(ctx, ad); err != nil {
				return err
			}
			jobs <- children(i, ad)
			return nil
		})
	})
	err := parallel(ctx, 2*n, b.cfg.Workers, func(int) error {
		select {
		case job := <-jobs:
			return job()
		case <-time.After(10 * time.Minute):
			return errors.New("no Deployment became available for 10m")
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err := errors.Join(creating.Wait(), err); err != nil {
		return 0, err
	}
	took := time.Since(start)
	// Gone before the operator starts, so it never sees them.
	return took, deleteNamespace(ctx, b.cluster.Client, namespace)
}

// progressing is ad with the status the operator writes once a new
// AppDeployment's children are made: its generation observed and
// Progressing, so that `kubectl wait` and the CLI see the rollout begun.
// The design needs that write as much as the last one; the yardstick makes
// it too.
func progressing(ad *platformv1.AppDeployment) *platformv1.AppDeployment {
	ad.Status = platformv1.AppDeploymentStatus{
		ObservedGeneration: ad.Generation, CurrentVersion: appVersion1,
		Phase: platformv1.PhaseProgressing, Message: "rolling out",
	}
	meta.SetStatusCondition(&ad.Status.Conditions, metav1.Condition{
		Type: platformv1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: platformv1.ReasonRollingOut,
		Message: "rolling out", ObservedGeneration: ad.Generation,
	})
	return ad
}

// released is the bare client's work once an AppDeployment's Deployment is
// available: the event, and the status written once.
func (b *appBench) released(ctx context.Context, ad *platformv1.AppDeployment) error {
	if err := b.bare.Create(ctx, releasedEvent(ad)); err != nil {
		return err
	}
	ad.Status = platformv1.AppDeploymentStatus{
		ObservedGeneration: ad.Generation,
		CurrentVersion:     appVersion1, StableVersion: appVersion1,
		Phase: platformv1.PhaseHealthy, Message: "released",
	}
	meta.SetStatusCondition(&ad.Status.Conditions, metav1.Condition{
		Type: platformv1.ConditionReady, Status: metav1.ConditionTrue, Reason: platformv1.ReasonReleased,
		Message: "released", ObservedGeneration: ad.Generation,
	})
	return b.bare.Status().Update(ctx, ad)
}

// releasedEvent is the event the operator records when an AppDeployment's
// first version is released, as its event recorder would write it.
func releasedEvent(ad *platformv1.AppDeployment) *eventsv1.Event {
	now := metav1.NowMicro()
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ad.Namespace, Name: fmt.Sprintf("%s.%x", ad.Name, now.UnixNano())},
		EventTime:  now, ReportingController: "platform-operator", ReportingInstance: "bench",
		Action: "Release", Reason: appdeployment.EventReleased, Type: corev1.EventTypeNormal,
		Note: ad.Spec.Image + " created",
		Regarding: corev1.ObjectReference{APIVersion: platformv1.GroupVersion.String(), Kind: "AppDeployment",
			Namespace: ad.Namespace, Name: ad.Name, UID: ad.UID},
	}
}

// convergence is figure 7a and 7b: Apps AppDeployments created at once,
// timed to the last seen Ready, baselineRuns times as the bare client is
// (the first runs each in a namespace of their own, deleted before the
// next; the last in nsApps, kept), and the manager's writes for the last.
func (b *appBench) convergence(ctx context.Context) error {
	times, err := runsBeforeTheLast(ctx, b.cluster.Client, b.manager, nsApps,
		func(namespace string) (time.Duration, error) { return b.convergeOnce(ctx, namespace) })
	if err != nil {
		return err
	}
	before, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	// The manager's CPU profile over the last run, as long as the slowest
	// run before it took and a little more: where its time goes.
	profiled := make(chan []byte, 1)
	go func() {
		seconds := 30
		if len(times) > 0 {
			seconds = int(slices.Max(times).Seconds()) + 2
		}
		url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", b.pprofPort, seconds)
		p, err := get(ctx, url)
		if err != nil {
			harness.Logf("bench: no CPU profile of figure 7a: %v", err)
		}
		profiled <- p
	}()
	took, err := b.convergeOnce(ctx, nsApps)
	if err != nil {
		return err
	}
	end, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	b.res.ConvergenceRequests = diagnoseBurst(before, end, nil, nil)
	b.res.ConvergenceRequests.Seconds = took.Seconds()
	times = append(times, took)
	b.res.ConvergenceProfile = <-profiled
	n := b.cfg.Apps
	r := b.res
	r.Apps, r.Replicas = n, b.cfg.AppReplicas
	for _, t := range times {
		r.OperatorRuns = append(r.OperatorRuns, t.Seconds())
	}
	r.OperatorSeconds = newStats(times).P50
	r.Ratio = ratio(r.OperatorSeconds, r.BaselineSeconds)
	r.FloorRatio = ratio(r.OperatorSeconds, r.FloorSeconds)
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

// convergeOnce creates Apps AppDeployments in a new namespace and returns
// the time from the first create until the last is seen Ready.
func (b *appBench) convergeOnce(ctx context.Context, namespace string) (time.Duration, error) {
	if err := createNamespace(ctx, b.cluster.Client, namespace); err != nil {
		return 0, err
	}
	n := b.cfg.Apps
	start := time.Now()
	err := parallel(ctx, n, b.cfg.Workers, func(i int) error {
		return b.client.Create(ctx, b.rollingApp(namespace, i))
	})
	if err != nil {
		return 0, err
	}
	names := keys(namespace, n, appName)
	var last time.Time
	var ready int
	err = poll(ctx, time.Now().Add(30*time.Minute), func() (bool, error) {
		ready, last = b.watch.countReady(names, 1)
		return ready == n, nil
	})
	if err != nil {
		return 0, fmt.Errorf("%d of %d AppDeployments Ready: %w", ready, n, err)
	}
	return last.Sub(start), nil
}

// canaries is figure 7d: Canaries AppDeployments released at the first
// version, then the second set on all of them at once, each judged against
// the real Prometheus until promoted.
func (b *appBench) canaries(ctx context.Context) error {
	if err := createNamespace(ctx, b.cluster.Client, nsCanaries); err != nil {
		return err
	}
	n := b.cfg.Canaries
	names := keys(nsCanaries, n, canaryName)
	err := parallel(ctx, n, b.cfg.Workers, func(i int) error {
		return b.client.Create(ctx, b.canaryApp(i))
	})
	if err != nil {
		return err
	}
	if err := b.waitFirstReady(ctx, names, 20*time.Minute); err != nil {
		return err
	}
	if _, err := quiesce(ctx, b.manager, 3*time.Second, 10*time.Minute); err != nil {
		return err
	}
	before, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	queriesBefore, err := prometheusQueries(ctx, b.prom.Prometheus)
	if err != nil {
		return err
	}
	start := time.Now()
	image := appImage + appVersion2
	if err := b.setImage(ctx, names, image); err != nil {
		return err
	}
	var maxRSS float64
	promoted := 0
	err = poll(ctx, time.Now().Add(20*time.Minute), func() (bool, error) {
		if mem, err := cached.ProcessMemory(b.manager.PID()); err == nil {
			maxRSS = max(maxRSS, mem.RSS)
		}
		promoted = b.watch.countPromoted(names, appVersion2)
		return promoted == n, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d canaries promoted: %w", promoted, n, err)
	}
	end := time.Now()
	after, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	queriesAfter, err := prometheusQueries(ctx, b.prom.Prometheus)
	if err != nil {
		return err
	}
	mem, err := cached.ProcessMemory(b.manager.PID())
	if err != nil {
		return err
	}
	r := b.res
	r.Canaries, r.Promoted, r.IntervalSeconds = n, promoted, canaryInterval.Seconds()
	r.AnalysisSeconds, r.CPUSeconds = end.Sub(start).Seconds(), after.cpuSeconds-before.cpuSeconds
	r.RSSMiB, r.PeakRSSMiB = maxRSS/(1<<20), mem.Peak/(1<<20)
	r.PrometheusQueries = queriesAfter - queriesBefore
	b.analyse(names, image)
	return nil
}

// waitFirstReady waits until every AppDeployment of names is seen Ready at
// its first generation.
func (b *appBench) waitFirstReady(ctx context.Context, names []types.NamespacedName, within time.Duration) error {
	var ready int
	err := poll(ctx, time.Now().Add(within), func() (bool, error) {
		ready, _ = b.watch.countReady(names, 1)
		return ready == len(names), nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d AppDeployments Ready at the first version: %w", ready, len(names), err)
	}
	return nil
}

// setImage sets image on the AppDeployments of names at once, Workers at a
// time.
func (b *appBench) setImage(ctx context.Context, names []types.NamespacedName, image string) error {
	patch := fmt.Appendf(nil, `{"spec":{"image":%q}}`, image)
	return parallel(ctx, len(names), b.cfg.Workers, func(i int) error {
		ad := &platformv1.AppDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: names[i].Namespace, Name: names[i].Name}}
		return b.client.Patch(ctx, ad, client.RawPatch(types.MergePatchType, patch))
	})
}

// analyse turns the watch's notes of the canaries into figure 7d's
// latencies.
func (b *appBench) analyse(names []types.NamespacedName, image string) {
	r := b.res
	var late, lateTaken, begun, begunSeen, complete, rollout, recorded []time.Duration
	lastOf := map[types.NamespacedName]measurementNote{}
	for _, m := range b.watch.measurementsOf(nsCanaries, appVersion2) {
		r.Measurements++
		switch {
		case m.due.IsZero():
			r.Unplaced++
		case m.taken.Before(m.due):
			// Taken before it was due: the one before it was measured
			// again, or this one was started for a due time already served.
			r.Repeated++
		default:
			late = append(late, m.seen.Sub(m.due))
			lateTaken = append(lateTaken, m.taken.Sub(m.due))
		}
		if m.last {
			lastOf[m.step.app] = m
		}
	}
	for _, k := range names {
		m, ok := lastOf[k]
		if !ok {
			continue
		}
		if t, ok := b.watch.templateAt(k, image); ok {
			begun = append(begun, t.Sub(m.taken))
			begunSeen = append(begunSeen, t.Sub(m.seen))
			if done, ok := b.watch.rolledOutAt(k, image); ok {
				rollout = append(rollout, done.Sub(t))
				if p, ok := b.watch.promotedAt(k, appVersion2); ok {
					recorded = append(recorded, p.Sub(done))
				}
			}
		}
		if p, ok := b.watch.promotedAt(k, appVersion2); ok {
			complete = append(complete, p.Sub(m.taken))
		}
	}
	r.Lateness, r.LatenessTaken = newStats(late), newStats(lateTaken)
	r.PromotionBegun, r.PromotionBegunSeen = newStats(begun), newStats(begunSeen)
	r.PromotionComplete, r.StableRollout, r.PromotionRecorded = newStats(complete), newStats(rollout), newStats(recorded)
}

// rolloutFloor is the floor of a promotion's rollout: Canaries bare
// Deployments shaped as the canaries' stable ones (3 pods, a new pod ready
// before an old one goes), their templates changed at once by a bare
// client; per Deployment, from the new template seen to the rollout seen
// complete. It is the Deployment controller's and kwok's work, not the
// operator's.
func (b *appBench) rolloutFloor(ctx context.Context) error {
	if err := createNamespace(ctx, b.cluster.Client, nsAppFloor); err != nil {
		return err
	}
	n := b.cfg.Canaries
	names := keys(nsAppFloor, n, canaryName)
	apply := func(i int, version string) error {
		ad := b.canaryApp(i)
		ad.Namespace, ad.Spec.Image = nsAppFloor, appImage+version
		// The schema's default, which an AppDeployment stored would have.
		ad.Spec.ProgressDeadlineSeconds = platformv1.DefaultProgressDeadlineSeconds
		d, err := appdeployment.DesiredStableDeployment(ad)
		if err != nil {
			return err
		}
		// No owner: there is no AppDeployment, and the garbage collector
		// would remove a Deployment owned by none.
		d.OwnerReferences = nil
		return b.client.Apply(ctx, d, client.FieldOwner("bench"), client.ForceOwnership)
	}
	wait := func(image string) error {
		var done int
		return poll(ctx, time.Now().Add(20*time.Minute), func() (bool, error) {
			done, _ = b.watch.countRolledOut(names, image)
			return done == n, nil
		})
	}
	if err := parallel(ctx, n, b.cfg.Workers, func(i int) error { return apply(i, appVersion1) }); err != nil {
		return err
	}
	if err := wait(appImage + appVersion1); err != nil {
		return err
	}
	if err := parallel(ctx, n, b.cfg.Workers, func(i int) error { return apply(i, appVersion2) }); err != nil {
		return err
	}
	image := appImage + appVersion2
	if err := wait(image); err != nil {
		return err
	}
	floor := make([]time.Duration, 0, n)
	for _, k := range names {
		t, _ := b.watch.templateAt(k, image)
		done, _ := b.watch.rolledOutAt(k, image)
		floor = append(floor, done.Sub(t))
	}
	b.res.RolloutFloor = newStats(floor)
	// Gone before the idle figure: nothing of it is the operator's.
	return deleteNamespace(ctx, b.cluster.Client, nsAppFloor)
}

// idle is figure 7c: the manager is started again with --sync-period at two
// fifths of the window, and its writes are counted over the window once it
// has settled.
func (b *appBench) idle(ctx context.Context) error {
	b.manager.Kill(syscall.SIGTERM)
	m, err := b.op.StartReplica(ctx, fmt.Sprintf("--sync-period=%s", b.cfg.AppIdle*2/5))
	if err != nil {
		return err
	}
	b.manager = m
	before, err := quiesce(ctx, m, 5*time.Second, 10*time.Minute)
	if err != nil {
		return err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.cfg.AppIdle):
	}
	after, err := scrape(ctx, m)
	if err != nil {
		return err
	}
	r := b.res
	r.IdleSeconds = time.Since(start).Seconds()
	r.IdleWrites, r.IdleReconciles = after.writes-before.writes, after.reconciles-before.reconciles
	return nil
}

// prometheusQueries is how many queries Prometheus has evaluated, from its
// own metrics.
func prometheusQueries(ctx context.Context, p *harness.Prometheus) (float64, error) {
	body, err := get(ctx, p.Address()+"/metrics")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, `prometheus_engine_query_duration_seconds_count{slice="inner_eval"}`) {
			var v float64
			_, err := fmt.Sscanf(line[strings.LastIndex(line, " ")+1:], "%g", &v)
			return v, err
		}
	}
	return 0, nil
}

// appDeployRows are figure 7's rows.
func appDeployRows(tw io.Writer, r *results) {
	a := r.AppDeploy
	if a == nil {
		fmt.Fprintf(tw, "7\tAppDeployments\tnot measured\t-\t-\n")
		return
	}
	nearFloor := a.FloorSeconds > 0 && a.FloorRatio <= floorMargin
	row(tw, "7a", fmt.Sprintf("%d AppDeployments (%d pods each) created at once", a.Apps, a.Replicas),
		fmt.Sprintf("operator %.1fs (median of %s) / bare client %.1fs (median of %s) = %.2f", a.OperatorSeconds,
			seconds(a.OperatorRuns), a.BaselineSeconds, seconds(a.BaselineRuns), a.Ratio),
		fmt.Sprintf("<= %.2f or <= %.1f x floor", targetRatio, floorMargin),
		a.Apps > 0 && (a.Ratio <= targetRatio || nearFloor))
	row(tw, "", "floor: bare client through the operator's admission",
		fmt.Sprintf("%.1fs (median of %s); operator / floor = %.2f", a.FloorSeconds, seconds(a.FloorRuns), a.FloorRatio),
		fmt.Sprintf("<= %.1f", floorMargin), nearFloor)
	if a.ConvergenceRequests.Requests > 0 {
		requestsRow(tw, "7a's last run", a.ConvergenceRequests)
	}
	row(tw, "7b", "manager writes per new AppDeployment",
		fmt.Sprintf("%.2f (%s); beside them %.2f access reviews", a.WritesPerApp, writesBy(a.WritesPerAppBy),
			a.AccessReviewsPerApp),
		fmt.Sprintf("<= %d", targetWritesPerApp), a.Apps > 0 && a.WritesPerApp <= targetWritesPerApp)
	idleFor := time.Duration(a.IdleSeconds * float64(time.Second)).Round(time.Second)
	row(tw, "7c", fmt.Sprintf("idle writes, %s with full resyncs", idleFor),
		fmt.Sprintf("%.0f writes (%.0f reconciles)", a.IdleWrites, a.IdleReconciles), "0",
		a.IdleSeconds > 0 && a.IdleWrites == 0)
	lat := func(s stats) string { return fmt.Sprintf("p50 %.2fs  p99 %.2fs  max %.2fs", s.P50, s.P99, s.Max) }
	row(tw, "7d", fmt.Sprintf("%d canaries, measurement lateness (seen - due)", a.Canaries),
		fmt.Sprintf("%s (%d measurements, %d taken twice, %d not placed; measuredAt - due: p99 %.0fs)",
			lat(a.Lateness), a.Measurements, a.Repeated, a.Unplaced, a.LatenessTaken.P99),
		fmt.Sprintf("p99 <= %gs", targetLateness),
		a.Lateness.Count > 0 && a.Lateness.P99 <= targetLateness && a.Repeated == 0)
	row(tw, "", "last passing measurement -> promotion begun",
		fmt.Sprintf("%s (from the measurement seen in status: %s)", lat(a.PromotionBegun), lat(a.PromotionBegunSeen)),
		fmt.Sprintf("p99 <= %gs", targetPromotion), a.PromotionBegun.Count > 0 && a.PromotionBegun.P99 <= targetPromotion)
	fmt.Fprintf(tw, "\tlast passing measurement -> promoted\t%s; %d of %d promoted\t-\t-\n",
		lat(a.PromotionComplete), a.Promoted, a.Canaries)
	fmt.Fprintf(tw, "\tof which the stable rollout / the same of bare Deployments\t%s / %s\t-\t-\n",
		lat(a.StableRollout), lat(a.RolloutFloor))
	fmt.Fprintf(tw, "\tof which stable rolled out -> Promoted\t%s\t-\t-\n", lat(a.PromotionRecorded))
	fmt.Fprintf(tw, "7e\t%d weighted canaries on routes (%v%%), step start -> weight written and accepted\t"+
		"%s (%d steps, %d seen accepted before their pods ready, %d not placed); %d of %d promoted\t-\t-\n",
		a.RoutedCanaries, routedSteps, lat(a.RouteStep), a.RouteStep.Count, a.RouteStepsEarly, a.RouteStepsUnplaced,
		a.RoutedPromoted, a.RoutedCanaries)
	fmt.Fprintf(tw, "\tfloor: a bare client's weight write -> the route accepted\t%s (%d writes)\t-\t-\n",
		lat(a.RouteFloor), a.RouteFloor.Count)
	fmt.Fprintf(tw, "\tmanager during the analysis\tCPU %.1fs in %.0fs (%.0f%% of a core), RSS up to %.0f MiB "+
		"(peak %.0f MiB); %.0f Prometheus queries\t-\t-\n",
		a.CPUSeconds, a.AnalysisSeconds, 100*ratio(a.CPUSeconds, a.AnalysisSeconds), a.RSSMiB, a.PeakRSSMiB,
		a.PrometheusQueries)
}
