//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chaos

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/localwebhook"
	"github.com/example/platform-operator/test/harness"
)

// nextImage is the version the canaries of these tests release.
const nextImage = "registry.example.com/app:v1.0.1"

// analysedApp is an application of replicas pods released by canary steps,
// each judged by error_rate at most 0.5 % measured every 5 s.
func analysedApp(ns, name string, steps ...int32) *platformv1.AppDeployment {
	ad := &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: platformv1.AppDeploymentSpec{
			Image:    "registry.example.com/app:v1.0.0",
			Replicas: ptr.To[int32](4),
			Strategy: platformv1.Strategy{
				Type:           platformv1.StrategyCanary,
				CanaryCriteria: []platformv1.CanaryCriterion{{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}},
				Analysis:       platformv1.Analysis{IntervalSeconds: 5, MinMeasurements: 2},
			},
			Rollback: platformv1.RollbackPolicy{ProviderErrorGraceSeconds: 10},
		},
	}
	for _, w := range steps {
		ad.Spec.Strategy.Steps = append(ad.Spec.Strategy.Steps, platformv1.CanaryStep{Weight: w})
	}
	return ad
}

// TestCrash_KilledManagerDuringAnalysisResumesFromStatus kills the manager
// at random moments while canaries are measured against a real Prometheus:
// every release must still end promoted, and no step may ever be recorded
// as completed on fewer Passes than minMeasurements (the counts live in
// status; a measurement taken but not yet recorded is lost with the
// manager, never counted twice).
func TestCrash_KilledManagerDuringAnalysisResumesFromStatus(t *testing.T) {
	cluster := takeCluster(t)
	apps, kills := size(3, 2), size(10, 4)
	g := NewWithT(t)
	ctx := t.Context()
	ns := harness.Namespace(t, cluster)
	prom := startAnalysis(t)
	op := startOperator(t, "--leader-elect=false", "--prometheus-address="+prom.Address())
	m, err := op.StartReplica(ctx)
	g.Expect(err).NotTo(HaveOccurred())

	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("%d applications, %d kills; seed %d", apps, kills, seed)
	ads := make([]*platformv1.AppDeployment, 0, apps)
	watches := make([]*harness.AnalysisWatch, 0, apps)
	for i := range apps {
		ad := analysedApp(ns, fmt.Sprintf("app-%d", i), 25, 50)
		watches = append(watches, harness.WatchAnalysis(t, cluster, ns, ad.Name))
		mustEventually(t, func() error { return client.IgnoreAlreadyExists(cluster.Client.Create(ctx, ad)) })
		ads = append(ads, ad)
	}
	for _, ad := range ads {
		waitVersion(t, ad, "v1.0.0")
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range kills {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(1000+rng.IntN(5000)) * time.Millisecond):
			}
			m.Kill(syscall.SIGKILL)
			t.Logf("kill %d/%d at %s", i+1, kills, time.Now().Format("15:04:05.000"))
			var err error
			if m, err = op.StartReplica(ctx); err != nil {
				t.Errorf("restarting the manager: %v", err)
				return
			}
		}
	})
	for _, ad := range ads {
		mustEventually(t, func() error {
			got := &platformv1.AppDeployment{}
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got); err != nil {
				return err
			}
			got.Spec.Image = nextImage
			return cluster.Client.Update(ctx, got)
		})
	}
	for _, ad := range ads {
		waitVersion(t, ad, "v1.0.1")
	}
	close(stop)
	wg.Wait()
	for i, ad := range ads {
		if v := watches[i].Violations(); len(v) > 0 {
			t.Errorf("%s: promoted on too little evidence: %v", ad.Name, v)
		}
		if n := watches[i].Completed(); n != 2 {
			t.Errorf("%s: %d step completions seen with their evidence, want 2", ad.Name, n)
		}
	}
}

// TestBlackHolePrometheus_DelaysNoOtherReconcile points the manager at a
// Prometheus that accepts connections and never answers, while more
// analysed canaries than the controller has workers wait on it: a release
// without analysis and new ScheduleTasks must go on as if nothing waited,
// and no reconcile pass may last as long as a measurement's timeout.
func TestBlackHolePrometheus_DelaysNoOtherReconcile(t *testing.T) {
	cluster := takeCluster(t)
	g := NewWithT(t)
	ctx := t.Context()
	ns := harness.Namespace(t, cluster)
	hole := blackHole(t)
	op := startOperator(t, "--leader-elect=false", "--metrics-secure=false", "--prometheus-address=http://"+hole,
		"--appdeployment-max-concurrent-reconciles=2", "--scheduletask-max-concurrent-reconciles=2")
	m, err := op.StartReplica(ctx)
	g.Expect(err).NotTo(HaveOccurred())

	// Six analysed canaries, each measured every 20 s with a 10 s timeout
	// that the black hole uses up: 30 s of waiting per round for two
	// workers, were the waiting done on them.
	analysed := make([]*platformv1.AppDeployment, 0, 6)
	for i := range 6 {
		ad := analysedApp(ns, fmt.Sprintf("analysed-%d", i), 50)
		ad.Spec.Strategy.Analysis.IntervalSeconds = 20
		mustEventually(t, func() error { return client.IgnoreAlreadyExists(cluster.Client.Create(ctx, ad)) })
		analysed = append(analysed, ad)
	}
	releaseNext(t, analysed)
	// Every one of them waits in its preflight on the black hole.
	for _, ad := range analysed {
		g.Eventually(func(g Gomega) {
			got := &platformv1.AppDeployment{}
			g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got)).To(Succeed())
			g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseProviderError), got.Status.Message)
		}).WithTimeout(time.Minute).Should(Succeed())
	}

	// Meanwhile: a release nothing measures, and tasks.
	start := time.Now()
	plain := analysedApp(ns, "plain", 50)
	plain.Spec.Strategy.CanaryCriteria, plain.Spec.Strategy.Analysis = nil, platformv1.Analysis{}
	plain.Spec.Strategy.Type, plain.Spec.Strategy.Steps = platformv1.StrategyRolling, nil
	mustEventually(t, func() error { return client.IgnoreAlreadyExists(cluster.Client.Create(ctx, plain)) })
	tasks := make([]*platformv1.ScheduleTask, 0, 10)
	for i := range 10 {
		st := testutil.NewScheduleTask(ns, fmt.Sprintf("task-%02d", i))
		mustEventually(t, func() error { return client.IgnoreAlreadyExists(cluster.Client.Create(ctx, st)) })
		tasks = append(tasks, st)
	}
	waitVersion(t, plain, "v1.0.0")
	for _, st := range tasks {
		g.Eventually(func(g Gomega) {
			got := &platformv1.ScheduleTask{}
			g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(st), got)).To(Succeed())
			g.Expect(got.Status.Conditions).To(ContainElement(And(
				HaveField("Type", platformv1.ConditionReady), HaveField("Status", metav1.ConditionTrue))))
		}).WithTimeout(time.Minute).Should(Succeed())
	}
	t.Logf("the plain release and 10 tasks were ready %s after they were created",
		time.Since(start).Round(time.Millisecond))

	// No pass waited for Prometheus: none lasted more than 5 s (a
	// measurement's timeout here is 10 s).
	for _, controller := range []string{"appdeployment", "scheduletask"} {
		slow, total := slowPasses(t, m, controller, 5)
		if total == 0 || slow > 0 {
			t.Errorf("%s: %v of %v passes took more than 5 s", controller, slow, total)
		}
	}
}

// blackHole listens on a loopback port, accepts every connection and never
// answers; it closes with the test.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", localwebhook.Host+":0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// slowPasses reads, from a manager started with --metrics-secure=false, how
// many reconcile passes of controller took more than seconds (a bound of
// the histogram's buckets), of all.
func slowPasses(t *testing.T, m *harness.Manager, controller string, seconds float64) (slow, total uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	metricsURL := fmt.Sprintf("http://%s:%d/metrics", localwebhook.Host, m.MetricsPort)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape %s: %v", metricsURL, err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", metricsURL, err)
	}
	f := families["platform_operator_reconcile_duration_seconds"]
	if f == nil {
		t.Fatalf("%s serves no platform_operator_reconcile_duration_seconds", metricsURL)
	}
	for _, metric := range f.GetMetric() {
		match := false
		for _, l := range metric.GetLabel() {
			if l.GetName() == "controller" && l.GetValue() == controller {
				match = true
			}
		}
		if !match {
			continue
		}
		h := metric.GetHistogram()
		total += h.GetSampleCount()
		below := uint64(0)
		for _, b := range h.GetBucket() {
			if b.GetUpperBound() <= seconds {
				below = b.GetCumulativeCount()
			}
		}
		slow += h.GetSampleCount() - below
	}
	return slow, total
}

// TestSlowPrometheus_MeasurementsAreErrorsAndNothingRollsBack puts a proxy
// in front of a real Prometheus and, once the canaries are being measured,
// has it hold every answer until the manager gives up on the query (its
// per-query timeout): every measurement meanwhile is an Error, never a
// Fail, no canary rolls back for them (past the grace they pause), no
// reconcile pass of any controller lasts more than 1 s, and once
// Prometheus answers again the canaries are measured and promoted.
func TestSlowPrometheus_MeasurementsAreErrorsAndNothingRollsBack(t *testing.T) {
	cluster := takeCluster(t)
	g := NewWithT(t)
	ctx := t.Context()
	ns := harness.Namespace(t, cluster)
	slow, m := proxiedManager(t)

	ads := make([]*platformv1.AppDeployment, 0, 4)
	for i := range size(4, 2) {
		ad := analysedApp(ns, fmt.Sprintf("slow-%d", i), 50)
		ad.Spec.Strategy.Analysis.MinMeasurements = 3
		mustEventually(t, func() error { return client.IgnoreAlreadyExists(cluster.Client.Create(ctx, ad)) })
		ads = append(ads, ad)
	}
	releaseNext(t, ads)
	// Each canary measured at least once, and not done: then Prometheus
	// slows down.
	for _, ad := range ads {
		g.Eventually(func(g Gomega) {
			c := criterion(t, g, ad)
			g.Expect(ptr.Deref(c.Passes, 0)).To(BeNumerically(">=", 1))
		}).WithTimeout(2 * time.Minute).Should(Succeed())
	}
	slow.set(holding)
	held := time.Now()
	t.Logf("Prometheus held from %s", held.Format("15:04:05.000"))

	// Past the grace (10 s) with measurements every 5 s: Errors, then a
	// pause; meanwhile a ScheduleTask is made ready as ever.
	st := testutil.NewScheduleTask(ns, "meanwhile")
	mustEventually(t, func() error { return client.IgnoreAlreadyExists(cluster.Client.Create(ctx, st)) })
	for _, ad := range ads {
		g.Eventually(func(g Gomega) {
			got := &platformv1.AppDeployment{}
			g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got)).To(Succeed())
			g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseProviderError), got.Status.Message)
		}).WithTimeout(time.Minute).Should(Succeed())
	}
	g.Eventually(func(g Gomega) {
		got := &platformv1.ScheduleTask{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(st), got)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, platformv1.ConditionReady)).To(BeTrue())
	}).WithTimeout(30 * time.Second).Should(Succeed())
	for _, ad := range ads {
		got := &platformv1.AppDeployment{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got)).To(Succeed())
		c := criterion(t, g, ad)
		t.Logf("%s after %s held: %d passes, %d errors, %d fails; %s", ad.Name, time.Since(held).Round(time.Second),
			ptr.Deref(c.Passes, 0), ptr.Deref(c.Errors, 0), ptr.Deref(c.Fails, 0), got.Status.Message)
		g.Expect(ptr.Deref(c.Errors, 0)).To(BeNumerically(">=", 1), "%s: no measurement counted as an Error", ad.Name)
		g.Expect(ptr.Deref(c.Fails, 0)).To(BeZero(), "%s: a measurement Prometheus did not answer counted as a Fail", ad.Name)
		g.Expect(got.Status.Phase).NotTo(Equal(platformv1.PhaseDegraded), got.Status.Message)
		g.Expect(got.Status.LastOutcome.Result).NotTo(Equal(platformv1.OutcomeRolledBack))
	}
	for _, controller := range []string{"appdeployment", "scheduletask"} {
		slowN, total := slowPasses(t, m, controller, 1)
		if total == 0 || slowN > 0 {
			t.Errorf("%s: %v of %v passes took more than 1 s", controller, slowN, total)
		}
	}

	// Prometheus answers again: measured within two intervals, and
	// promoted on passing measurements.
	slow.set(passing)
	back := time.Now()
	g.Eventually(func(g Gomega) {
		for _, ad := range ads {
			got := &platformv1.AppDeployment{}
			g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got)).To(Succeed())
			if got.Status.StableVersion == "v1.0.1" {
				continue // promoted, on measurements taken since
			}
			c := got.Status.Canary
			g.Expect(c).NotTo(BeNil(), "%s: %s", ad.Name, got.Status.Message)
			g.Expect(c.Analysis).NotTo(BeNil(), "%s: %s", ad.Name, got.Status.Message)
			g.Expect(c.Analysis.MeasuredAt).NotTo(BeNil(), "%s: %s", ad.Name, got.Status.Message)
			g.Expect(c.Analysis.MeasuredAt.Time).To(BeTemporally(">", back.Add(-time.Second)), "%s measured again", ad.Name)
		}
	}).WithTimeout(2*5*time.Second+5*time.Second).Should(Succeed(), "measured again within two intervals")
	for _, ad := range ads {
		waitVersion(t, ad, "v1.0.1")
	}
}

// startAnalysis starts, for t, the traffic simulator and a Prometheus that
// scrapes it, which the canaries are judged against.
func startAnalysis(t *testing.T) *harness.Prometheus {
	t.Helper()
	g := NewWithT(t)
	sim, err := harness.StartTrafficSim(t.Context(), clusterOf(t).Config)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(sim.Stop)
	prom, err := harness.StartPrometheus(t.Context(), t.TempDir(), sim.ScrapeTarget())
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(prom.Stop)
	return prom
}

// proxiedManager starts the analysis's Prometheus (startAnalysis), a
// promProxy in front of it, and one manager, without leader election and
// with plain metrics, that queries it through the proxy.
func proxiedManager(t *testing.T) (*promProxy, *harness.Manager) {
	t.Helper()
	proxy := startPromProxy(t, startAnalysis(t).Address())
	op := startOperator(t, "--leader-elect=false", "--metrics-secure=false", "--prometheus-address="+proxy.url)
	m, err := op.StartReplica(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return proxy, m
}

// releaseNext waits for each application's first version, then asks it
// for nextImage, which its canary releases.
func releaseNext(t *testing.T, ads []*platformv1.AppDeployment) {
	t.Helper()
	c := clusterOf(t).Client
	for _, ad := range ads {
		waitVersion(t, ad, "v1.0.0")
		mustEventually(t, func() error {
			got := &platformv1.AppDeployment{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(ad), got); err != nil {
				return err
			}
			got.Spec.Image = nextImage
			return c.Update(t.Context(), got)
		})
	}
}

// criterion is the canary's one criterion's status as stored.
func criterion(t *testing.T, g Gomega, ad *platformv1.AppDeployment) platformv1.CriterionStatus {
	got := &platformv1.AppDeployment{}
	g.Expect(clusterOf(t).Client.Get(t.Context(), client.ObjectKeyFromObject(ad), got)).To(Succeed())
	g.Expect(got.Status.Canary).NotTo(BeNil(), got.Status.Message)
	g.Expect(got.Status.Canary.Analysis).NotTo(BeNil(), got.Status.Message)
	g.Expect(got.Status.Canary.Analysis.Criteria).To(HaveLen(1), got.Status.Message)
	return got.Status.Canary.Analysis.Criteria[0]
}

// promProxy passes requests to a Prometheus, holds them, or drops them,
// as set.
type promProxy struct {
	url  string
	mode atomic.Int32
}

// Modes of a promProxy.
const (
	// passing passes every request to Prometheus.
	passing int32 = iota
	// holding answers no request until its client gives up: a Prometheus
	// too slow for the query's timeout.
	holding
	// down closes every connection at once, unanswered: a Prometheus
	// that is stopped.
	down
)

// set puts the proxy in mode.
func (p *promProxy) set(mode int32) { p.mode.Store(mode) }

// startPromProxy starts a promProxy in front of the Prometheus at target
// (a URL), passing requests until set otherwise.
func startPromProxy(t *testing.T, target string) *promProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &promProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	closing := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p.mode.Load() {
		case holding:
			// The query is a POST: its request's context ends when the
			// client hangs up only once its body has been read.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-closing:
			}
		case down:
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() {
		close(closing)
		srv.Close()
	})
	p.url = srv.URL
	return p
}

// TestPrometheusOutage_CanariesWaitAndResumeNothingElseWaits stops
// Prometheus (a proxy in front of it drops every connection) while many
// canaries are being measured every 10 s: none is promoted or rolled back
// for it, no reconcile pass lasts more than 1 s, a ScheduleTask created
// during the outage is ready as fast as one created before it, and once
// Prometheus is back every canary is measured again within two intervals.
// Full size: 100 canaries, 5 minutes; -short: 10, 30 s.
func TestPrometheusOutage_CanariesWaitAndResumeNothingElseWaits(t *testing.T) {
	cluster := takeCluster(t)
	g := NewWithT(t)
	ctx := t.Context()
	ns := harness.Namespace(t, cluster)
	proxy, m := proxiedManager(t)
	const interval = 10 * time.Second
	canaries, outage := size(100, 10), time.Duration(size(300, 30))*time.Second

	ads := make([]*platformv1.AppDeployment, 0, canaries)
	for i := range canaries {
		ad := analysedApp(ns, fmt.Sprintf("app-%03d", i), 50)
		ad.Spec.Replicas = ptr.To[int32](2)
		// Never done within the test: in flight throughout.
		ad.Spec.Strategy.Analysis = platformv1.Analysis{IntervalSeconds: int32(interval.Seconds()), MinMeasurements: 100}
		mustEventually(t, func() error { return client.IgnoreAlreadyExists(cluster.Client.Create(ctx, ad)) })
		ads = append(ads, ad)
	}
	releaseNext(t, ads)
	g.Eventually(func(g Gomega) {
		for _, ad := range ads {
			g.Expect(ptr.Deref(criterion(t, g, ad).Passes, 0)).To(BeNumerically(">=", 1), "%s measured", ad.Name)
		}
	}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
	before := timeToReady(t, ns, "before")

	proxy.set(down)
	stopped := time.Now()
	t.Logf("Prometheus stopped at %s for %s; a task was ready %s after its create before",
		stopped.Format("15:04:05.000"), outage, before.Round(time.Millisecond))
	time.Sleep(outage / 2)
	during := timeToReady(t, ns, "during")
	time.Sleep(time.Until(stopped.Add(outage)))
	proxy.set(passing)
	back := time.Now()

	// Every canary measured again within two intervals of Prometheus's
	// return.
	g.Eventually(func(g Gomega) {
		for _, ad := range ads {
			got := &platformv1.AppDeployment{}
			g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got)).To(Succeed())
			c := got.Status.Canary
			g.Expect(c).NotTo(BeNil(), "%s: %s", ad.Name, got.Status.Message)
			g.Expect(c.Analysis).NotTo(BeNil(), "%s: %s", ad.Name, got.Status.Message)
			g.Expect(c.Analysis.MeasuredAt).NotTo(BeNil(), "%s: %s", ad.Name, got.Status.Message)
			g.Expect(c.Analysis.MeasuredAt.Time).To(BeTemporally(">=", back.Truncate(time.Second)),
				"%s measured again: %s", ad.Name, got.Status.Message)
		}
	}).WithTimeout(2*interval+5*time.Second).WithPolling(time.Second).Should(Succeed(),
		"every canary measured within two intervals of Prometheus's return")
	t.Logf("every canary measured again %s after Prometheus was back", time.Since(back).Round(time.Millisecond))

	// Nothing promoted or rolled back for the outage.
	for _, ad := range ads {
		got := &platformv1.AppDeployment{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got)).To(Succeed())
		g.Expect(got.Status.StableVersion).To(Equal("v1.0.0"), "%s promoted: %s", ad.Name, got.Status.Message)
		g.Expect(got.Status.Phase).NotTo(Equal(platformv1.PhaseDegraded), "%s: %s", ad.Name, got.Status.Message)
		g.Expect(got.Status.LastOutcome.Result).NotTo(Equal(platformv1.OutcomeRolledBack), ad.Name)
		g.Expect(ptr.Deref(criterion(t, g, ad).Fails, 0)).To(BeZero(), "%s: a Fail while Prometheus was down", ad.Name)
	}
	// No worker waited on Prometheus.
	t.Logf("a task was ready %s after its create during the outage", during.Round(time.Millisecond))
	g.Expect(during).To(BeNumerically("<=", 2*before+time.Second),
		"a task created during the outage waited longer than one before it")
	for _, controller := range []string{"appdeployment", "scheduletask"} {
		slowN, total := slowPasses(t, m, controller, 1)
		if total == 0 || slowN > 0 {
			t.Errorf("%s: %v of %v passes took more than 1 s", controller, slowN, total)
		}
	}
}

// timeToReady creates a ScheduleTask and returns how long it took to be
// seen Ready.
func timeToReady(t *testing.T, ns, name string) time.Duration {
	t.Helper()
	ctx := t.Context()
	st := testutil.NewScheduleTask(ns, name)
	start := time.Now()
	if err := clusterOf(t).Client.Create(ctx, st); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func(g Gomega) {
		got := &platformv1.ScheduleTask{}
		g.Expect(clusterOf(t).Client.Get(ctx, client.ObjectKeyFromObject(st), got)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, platformv1.ConditionReady)).To(BeTrue())
	}).WithTimeout(time.Minute).WithPolling(50 * time.Millisecond).Should(Succeed())
	return time.Since(start)
}
