// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/harness"
)

// The admission figure's load (its rate is the configuration's
// AdmissionRate): how long the operator's webhooks serve it in all, and the
// slices the time is cut into, the
// operator's and the floor's in turn, so that both meet the same cluster
// (the objects earlier slices made, the manager reconciling them).
const (
	admissionSeconds = 60
	admissionSlice   = 10 * time.Second
	// admissionSwitchPause is the wait after each turn before the next
	// slice's writes (see ServeNoOpWebhooks).
	admissionSwitchPause = time.Second
	// admissionTimeout is how long a write may take before it counts as
	// timed out: the API server's webhook timeout (10 s) and some.
	admissionTimeout = 15 * time.Second
	// admissionProbePeriod is the balancer's readiness probe of each
	// replica, as a kubelet's at its shortest (periodSeconds: 1; the
	// chart's is 10): the harness's default of ten a second would cost
	// each replica ten TLS handshakes a second, in both sides' slices.
	admissionProbePeriod = time.Second
)

// Targets of the admission figure: a write's p99 at most the floor's p99
// and this much, and at most admissionTargetRatio times it.
const (
	admissionTargetExtra = 5 * time.Millisecond
	admissionTargetRatio = 1.5
)

// admissionResult is figure 9: writes of every kind the operator admits,
// at a steady rate, each timed at the client, through the operator's
// webhooks and through a no-op webhook server in their place.
type admissionResult struct {
	PerSecond int `json:"perSecond"`
	// Operator and Floor are the writes through the operator's webhooks
	// and through the no-op server (harness.ServeNoOpWebhooks).
	Operator admissionRun `json:"operator"`
	Floor    admissionRun `json:"floor"`
	// AccessReviewsPerWrite are the access reviews the webhooks asked for,
	// per write through them.
	AccessReviewsPerWrite float64 `json:"accessReviewsPerWrite"`
	// Served is what the replicas' webhook server saw of the operator's
	// slices: the client's time is the API server's and theirs.
	Served admissionServed `json:"served"`
	// Profile and FloorProfile are the replicas' CPU profiles (pprof, both
	// replicas merged) over one of the operator's slices and over the
	// floor's slice after it: with -diff_base, what admission costs them.
	Profile      []byte `json:"-"`
	FloorProfile []byte `json:"-"`
	// APIServerProfile and APIServerFloorProfile are the API server's over
	// the same slices: what a webhook's answers cost the API server (a
	// mutating webhook's patch is applied and the object decoded again).
	APIServerProfile      []byte `json:"-"`
	APIServerFloorProfile []byte `json:"-"`
	// Rounds are each round's p99s when the figure ran more than one
	// (BENCH_ADMISSION_ROUNDS); Operator and Floor are of every round's
	// writes.
	Rounds []admissionRound `json:"rounds,omitempty"`
}

// admissionRound is one round's p99 of a write through each side.
type admissionRound struct {
	P99Seconds      float64 `json:"p99Seconds"`
	FloorP99Seconds float64 `json:"floorP99Seconds"`
}

// admissionServed is the replicas' own account of the requests they
// served (the floor's slices send them none).
type admissionServed struct {
	// Requests are the admission and conversion requests their webhooks
	// handled; MeanSeconds and P99UpToSeconds (the upper bound of the
	// bucket p99 falls in) the time each took in the handler.
	Requests       float64 `json:"requests"`
	MeanSeconds    float64 `json:"meanSeconds"`
	P99UpToSeconds float64 `json:"p99UpToSeconds"`
	// Refused are the requests and connections the server refused before
	// any webhook saw them (429 beyond the in-flight limit among them).
	Refused float64 `json:"refused"`
	// MeanSecondsByPath is MeanSeconds by the webhook's path.
	MeanSecondsByPath map[string]float64 `json:"meanSecondsByPath"`
	// LimiterWaitMeanSeconds and APIMeanSeconds are the replicas' client
	// requests over the whole run (both sides' slices): the mean wait in
	// the client's rate limiter, and the mean time the API server took.
	LimiterWaitMeanSeconds float64 `json:"limiterWaitMeanSeconds"`
	APIMeanSeconds         float64 `json:"apiMeanSeconds"`
}

// admissionRun is one side's writes.
type admissionRun struct {
	Writes   int   `json:"writes"`
	Latency  stats `json:"latency"`
	Refused  int   `json:"refused"`
	TimedOut int   `json:"timedOut"`
	// ByKind is the latency of each kind of write.
	ByKind map[string]stats `json:"byKind"`
	// FirstRefusal is the first refused or timed-out write's error.
	FirstRefusal string `json:"firstRefusal,omitempty"`
	// WebhookCallMeanSeconds is the mean time of a call to one of the
	// project's webhooks as the API server timed it
	// (apiserver_admission_webhook_admission_duration_seconds): the
	// handler's, the transport's and the server's time to be scheduled.
	WebhookCallMeanSeconds float64 `json:"webhookCallMeanSeconds"`
	// WebhookCalls counts those calls.
	WebhookCalls float64 `json:"webhookCalls"`
	// ConversionMeanSeconds is the mean time of a conversion webhook call
	// as the API server timed it, Conversions counts them and
	// ConversionsFailed those that failed: the API server converts every
	// write of a kind served in two versions for the other version's
	// watch cache, so both sides answer as many.
	ConversionMeanSeconds float64 `json:"conversionMeanSeconds"`
	Conversions           float64 `json:"conversions"`
	ConversionsFailed     float64 `json:"conversionsFailed"`
	// Connections are the connections the API server opened to this
	// side's webhooks in its slices (harness.WebhookConnections), each a
	// TLS handshake: it keeps a few idle ones per host, and opens another
	// for every call beyond those in flight.
	Connections int64 `json:"connections"`
	// AnswerMeanSeconds is, by webhook server (replica, or "no-op"), the
	// mean time from the first byte of a request to the first byte of
	// its answer as the forwarder in front of them saw it, in this side's
	// slices (harness.WebhookAnswers): what a call costs at the server,
	// scheduling included, without the API server's part.
	AnswerMeanSeconds map[string]float64 `json:"answerMeanSeconds"`
	// Leader is the replica that held the lease at the end of the run.
	Leader string `json:"leader,omitempty"`
}

// admissionWrite is one write of the load.
type admissionWrite struct {
	kind string
	took time.Duration
	err  error
}

// runAdmission measures figure 9 on a new kwok cluster with the operator
// as installed: two replicas behind their Service, both serving webhooks.
func runAdmission(ctx context.Context, cfg config) (*admissionResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, teardown, err := harness.StartCluster(ctx, fmt.Sprintf("bench-adm-%d", time.Now().Unix()), harness.ClusterOptions{
		Nodes: 4, KwokctlArgs: []string{"--disable-qps-limits"},
	})
	if err != nil {
		return nil, err
	}
	defer func() { cancel(); teardown() }()
	op, err := harness.StartOperator(ctx, c, harness.OperatorOptions{Args: []string{
		"--leader-elect=true", "--metrics-secure=false",
		fmt.Sprintf("--kube-api-qps=%g", cfg.QPS), fmt.Sprintf("--kube-api-burst=%d", cfg.Burst),
	}, ProbePeriod: admissionProbePeriod})
	if err != nil {
		return nil, err
	}
	defer op.Stop()
	replicas := make([]*harness.Manager, 0, 2)
	pprofPorts := make([]int, 0, 2)
	for range 2 {
		port, err := harness.FreePort()
		if err != nil {
			return nil, err
		}
		m, err := op.StartReplica(ctx, fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", port))
		if err != nil {
			return nil, err
		}
		replicas, pprofPorts = append(replicas, m), append(pprofPorts, port)
	}
	restCfg := rest.CopyConfig(c.Config)
	rate := cfg.AdmissionRate
	restCfg.QPS, restCfg.Burst = float32(10*rate), 10*rate
	restCfg.Timeout = admissionTimeout
	cl, err := client.New(restCfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return nil, err
	}
	res := &admissionResult{PerSecond: rate}
	loads := map[bool]*admissionLoad{}
	for _, floor := range []bool{false, true} {
		ns := "bench-admission"
		if floor {
			ns += "-floor"
		}
		if err := createNamespace(ctx, c.Client, ns); err != nil {
			return nil, err
		}
		l := &admissionLoad{c: cl, ns: ns, perSecond: rate}
		// The task the TaskRuns name, suspended: a run makes a Job, not a
		// run of the schedule.
		if err := l.seed(ctx); err != nil {
			return nil, err
		}
		loads[floor] = l
	}
	before, err := replicasSample(ctx, replicas)
	if err != nil {
		return nil, err
	}
	tallies := map[bool]*sideTally{false: {}, true: {}}
	harness.Logf("bench: admission, %d writes a second, the operator's and the no-op webhooks in turn", rate)
	slicesPerRound := 2 * int(admissionSeconds*time.Second/admissionSlice)
	roundStart := map[bool]int{}
	for slice := range cfg.AdmissionRounds * slicesPerRound {
		if slice%slicesPerRound == 0 {
			roundStart = map[bool]int{false: loads[false].written(), true: loads[true].written()}
		}
		floor := slice%2 == 1
		var restore func()
		if floor {
			if restore, err = op.ServeNoOpWebhooks(); err != nil {
				return nil, err
			}
		}
		// The API server learns that the connections of the side left
		// are closed when its transport reads their end: a write sent on
		// one before that fails, as a replica's lost connection would.
		time.Sleep(admissionSwitchPause)
		// The second slice of each side is profiled: the first meets
		// caches and connections still cold.
		var profiled, apiProfiled chan []byte
		if slice == 2 || slice == 3 {
			profiled, apiProfiled = make(chan []byte, 1), make(chan []byte, 1)
			go func() { profiled <- profileReplicas(ctx, pprofPorts, admissionSlice) }()
			go func() { apiProfiled <- profileAPIServer(ctx, c.Config, admissionSlice) }()
		}
		tallies[floor].slice(ctx, c.Config, op, floor, func() { loads[floor].run(ctx, admissionSlice) })
		if profiled != nil {
			if floor {
				res.FloorProfile, res.APIServerFloorProfile = <-profiled, <-apiProfiled
			} else {
				res.Profile, res.APIServerProfile = <-profiled, <-apiProfiled
			}
		}
		if restore != nil {
			restore()
		}
		if cfg.AdmissionRounds > 1 && slice%slicesPerRound == slicesPerRound-1 {
			res.Rounds = append(res.Rounds, admissionRound{
				P99Seconds:      loads[false].summarySince(roundStart[false]).Latency.P99,
				FloorP99Seconds: loads[true].summarySince(roundStart[true]).Latency.P99,
			})
		}
	}
	after, err := replicasSample(ctx, replicas)
	if err != nil {
		return nil, err
	}
	res.Operator, res.Floor = loads[false].summary(), loads[true].summary()
	if leader, err := op.Leader(ctx); err == nil {
		res.Operator.Leader = leader.Name
	}
	for side, run := range map[bool]*admissionRun{false: &res.Operator, true: &res.Floor} {
		tallies[side].into(run)
	}
	if res.Operator.Writes > 0 {
		res.AccessReviewsPerWrite = (after.reviews - before.reviews) / float64(res.Operator.Writes)
	}
	res.Served = admissionServed{
		Requests:       after.webhookTime.count - before.webhookTime.count,
		MeanSeconds:    meanDelta(before.webhookTime, after.webhookTime),
		P99UpToSeconds: quantileUpTo(before.webhookBuckets, after.webhookBuckets, 0.99),
		Refused:        after.webhookRefused - before.webhookRefused,
	}
	res.Served.LimiterWaitMeanSeconds = meanDelta(before.limiterWait, after.limiterWait)
	res.Served.APIMeanSeconds = meanDelta(before.apiTime, after.apiTime)
	res.Served.MeanSecondsByPath = map[string]float64{}
	for path, t := range after.webhookByPath {
		res.Served.MeanSecondsByPath[path] = meanDelta(before.webhookByPath[path], t)
	}
	return res, nil
}

// sideTally is what one side's slices showed beside its writes: the API
// server's webhook calls, the connections it opened and the servers'
// answer times.
type sideTally struct {
	calls       apiCalls
	connections int64
	answers     map[string]harness.AnswerTimes
}

// slice runs one slice's load and adds what it showed.
func (t *sideTally) slice(ctx context.Context, cfg *rest.Config, op *harness.Operator, floor bool, load func()) {
	callsBefore, callsErr := webhookCalls(ctx, cfg)
	replicasBefore, noopBefore := op.WebhookConnections()
	answersBefore := op.WebhookAnswers()
	load()
	replicasAfter, noopAfter := op.WebhookConnections()
	if floor {
		t.connections += noopAfter - noopBefore
	} else {
		t.connections += replicasAfter - replicasBefore
	}
	if t.answers == nil {
		t.answers = map[string]harness.AnswerTimes{}
	}
	for name, a := range op.WebhookAnswers() {
		sum := t.answers[name]
		sum.Count += a.Count - answersBefore[name].Count
		sum.Sum += a.Sum - answersBefore[name].Sum
		t.answers[name] = sum
	}
	callsAfter, err := webhookCalls(ctx, cfg)
	if err != nil || callsErr != nil {
		harness.Logf("bench: the API server's webhook call times: %v", errors.Join(callsErr, err))
		return
	}
	t.calls.add(callsAfter.since(callsBefore))
}

// into writes the tally into the side's run.
func (t *sideTally) into(run *admissionRun) {
	run.WebhookCallMeanSeconds, run.WebhookCalls = meanDelta(sumCount{}, t.calls.admission), t.calls.admission.count
	run.ConversionMeanSeconds, run.Conversions = meanDelta(sumCount{}, t.calls.conversion), t.calls.conversion.count
	run.ConversionsFailed = t.calls.conversionFailed
	run.Connections = t.connections
	run.AnswerMeanSeconds = map[string]float64{}
	for name, a := range t.answers {
		if a.Count > 0 {
			run.AnswerMeanSeconds[name] = a.Sum.Seconds() / float64(a.Count)
		}
	}
}

// profileReplicas is the replicas' CPU profiles over d, merged into one;
// nil (and a log line) when one cannot be had.
func profileReplicas(ctx context.Context, ports []int, d time.Duration) []byte {
	profiles := make([]*profile.Profile, len(ports))
	var wg sync.WaitGroup
	for i, port := range ports {
		wg.Go(func() {
			b, err := get(ctx, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", port, int(d.Seconds())))
			if err == nil {
				profiles[i], err = profile.ParseData(b)
			}
			if err != nil {
				harness.Logf("bench: no CPU profile of the replica on pprof port %d: %v", port, err)
			}
		})
	}
	wg.Wait()
	if slices.Contains(profiles, nil) {
		return nil
	}
	merged, err := profile.Merge(profiles)
	if err != nil {
		harness.Logf("bench: the replicas' CPU profiles do not merge: %v", err)
		return nil
	}
	var b bytes.Buffer
	if err := merged.Write(&b); err != nil {
		return nil
	}
	return b.Bytes()
}

// profileAPIServer is the API server's CPU profile over d, from its own
// /debug/pprof (on by default; the cluster's admin may read it); nil (and
// a log line) when it cannot be had.
func profileAPIServer(ctx context.Context, cfg *rest.Config, d time.Duration) []byte {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = d + 30*time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err == nil {
		var b []byte
		b, err = cs.RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(int(d.Seconds()))).DoRaw(ctx)
		if err == nil {
			return b
		}
	}
	harness.Logf("bench: no CPU profile of the API server: %v", err)
	return nil
}

// apiCalls are the API server's timings of its calls to the project's
// webhooks: admission (apiserver_admission_webhook_admission_duration_seconds)
// and conversion (apiserver_crd_conversion_webhook_duration_seconds), and
// the conversions that failed.
type apiCalls struct {
	admission, conversion sumCount
	conversionFailed      float64
}

// since is what was called between before and c.
func (c apiCalls) since(before apiCalls) apiCalls {
	return apiCalls{
		admission:        c.admission.since(before.admission),
		conversion:       c.conversion.since(before.conversion),
		conversionFailed: c.conversionFailed - before.conversionFailed,
	}
}

// add adds o's calls to c.
func (c *apiCalls) add(o apiCalls) {
	c.admission.add(o.admission)
	c.conversion.add(o.conversion)
	c.conversionFailed += o.conversionFailed
}

// webhookCalls reads the API server's timings of its calls to the
// project's webhooks so far.
func webhookCalls(ctx context.Context, cfg *rest.Config) (apiCalls, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return apiCalls{}, err
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return apiCalls{}, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return apiCalls{}, err
	}
	var total apiCalls
	ours := "." + platformv1.GroupVersion.Group
	for _, m := range families["apiserver_admission_webhook_admission_duration_seconds"].GetMetric() {
		if strings.HasSuffix(label(m, "name"), ours) {
			total.admission.add(seriesSum(m))
		}
	}
	for _, m := range families["apiserver_crd_conversion_webhook_duration_seconds"].GetMetric() {
		if !strings.HasSuffix(label(m, "crd_name"), ours) {
			continue
		}
		h := seriesSum(m)
		total.conversion.add(h)
		if label(m, "succeeded") != "true" {
			total.conversionFailed += h.count
		}
	}
	return total, nil
}

// seriesSum is one histogram series' sum and count.
func seriesSum(m *dto.Metric) sumCount {
	return sumCount{sum: m.GetHistogram().GetSampleSum(), count: float64(m.GetHistogram().GetSampleCount())}
}

// replicasSample sums what admission's figure reads of the replicas'
// metrics: the access reviews they asked for, and their webhook server's
// refusals and handling times.
func replicasSample(ctx context.Context, replicas []*harness.Manager) (sample, error) {
	var total sample
	for _, m := range replicas {
		s, err := scrape(ctx, m)
		if err != nil {
			return sample{}, err
		}
		total.reviews += s.reviews
		total.webhookRefused += s.webhookRefused
		total.limiterWait.add(s.limiterWait)
		total.apiTime.add(s.apiTime)
		total.webhookTime.add(s.webhookTime)
		if total.webhookByPath == nil {
			total.webhookByPath = map[string]sumCount{}
		}
		for path, t := range s.webhookByPath {
			sum := total.webhookByPath[path]
			sum.add(t)
			total.webhookByPath[path] = sum
		}
		for i, b := range s.webhookBuckets {
			if i == len(total.webhookBuckets) {
				total.webhookBuckets = append(total.webhookBuckets, bucket{le: b.le})
			}
			total.webhookBuckets[i].count += b.count
		}
	}
	return total, nil
}

// admissionLoad writes, in its namespace, the mix of writes the operator
// admits, and keeps how each went.
type admissionLoad struct {
	c         client.Client
	ns        string
	perSecond int
	// next numbers the writes across slices.
	next   int
	mu     sync.Mutex
	writes []admissionWrite
}

// seedTask is the task the load's TaskRuns name.
const seedTask = "seed"

// seed creates what the load's updates and runs need.
func (l *admissionLoad) seed(ctx context.Context) error {
	st := testutil.NewScheduleTask(l.ns, seedTask)
	st.Spec.Suspend = ptr.To(true)
	return l.c.Create(ctx, st)
}

// run writes perSecond times a second for d (testutil.Pace, which makes
// up a tick a busy machine delays), each write in its own goroutine, and
// waits for the last.
func (l *admissionLoad) run(ctx context.Context, d time.Duration) {
	var wg sync.WaitGroup
	slice, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	started := 0
	testutil.Pace(slice, l.perSecond, time.Second/time.Duration(l.perSecond), func(from, to int) {
		for i := l.next + from; i < l.next+to; i++ {
			wg.Go(func() { l.record(l.write(ctx, i)) })
		}
		started = to
	})
	l.next += started
	wg.Wait()
}

// write is the i-th write of the mix, of ten: three ScheduleTask creates,
// two of their updates, two AppDeployment creates (a canary judged by a
// built-in metric and by PromQL with a CEL condition, both of which
// admission checks), two of their updates and a TaskRun.
func (l *admissionLoad) write(ctx context.Context, i int) admissionWrite {
	ctx, cancel := context.WithTimeout(ctx, admissionTimeout)
	defer cancel()
	var w admissionWrite
	start := time.Now()
	switch n := i / 10; i % 10 {
	case 0, 1, 2:
		w.kind = "create scheduletask"
		st := testutil.NewScheduleTask(l.ns, fmt.Sprintf("task-%05d-%d", n, i%10))
		st.Spec.Suspend = ptr.To(true)
		w.err = l.c.Create(ctx, st)
	case 3, 4:
		// Of a task made a second before (a create may take a good part
		// of one): one object per update, as tenants change their own.
		w.kind = "update scheduletask"
		patch := fmt.Appendf(nil, `{"spec":{"schedule":"%d * * * *"}}`, i%60)
		name := fmt.Sprintf("task-%05d-%d", n-l.perSecond/10, i%10-3)
		w.err = l.c.Patch(ctx, &platformv1.ScheduleTask{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: name}},
			client.RawPatch("application/merge-patch+json", patch))
	case 5, 6:
		w.kind = "create appdeployment"
		w.err = l.c.Create(ctx, admissionApp(l.ns, fmt.Sprintf("app-%05d-%d", n, i%10)))
	case 7, 8:
		// Of an application made a second before.
		w.kind = "update appdeployment"
		patch := fmt.Appendf(nil, `{"spec":{"strategy":{"analysis":{"intervalSeconds":%d}}}}`, 31+i%2)
		name := fmt.Sprintf("app-%05d-%d", n-l.perSecond/10, i%10-2)
		w.err = l.c.Patch(ctx, &platformv1.AppDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: name}},
			client.RawPatch("application/merge-patch+json", patch))
	default:
		w.kind = "create taskrun"
		w.err = l.c.Create(ctx, &platformv1.TaskRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: fmt.Sprintf("run-%05d", n)},
			Spec:       platformv1.TaskRunSpec{ScheduleTaskName: seedTask},
		})
	}
	w.took = time.Since(start)
	if apierrors.IsNotFound(w.err) {
		// An update of an object whose create failed, or, in the first
		// second, of one before the first.
		w.err = nil
		w.kind = "skipped"
	}
	return w
}

// admissionApp is an AppDeployment of no pods (admission is measured, not
// the rollout) and no port, released by a
// canary judged by error_rate and by a PromQL query with a CEL condition.
func admissionApp(ns, name string) *platformv1.AppDeployment {
	return &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: platformv1.AppDeploymentSpec{
			Image:    appImage + appVersion1,
			Replicas: ptr.To[int32](0),
			Strategy: platformv1.Strategy{
				Type:          platformv1.StrategyCanary,
				CanaryPercent: 20,
				CanaryCriteria: []platformv1.CanaryCriterion{
					{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)},
					{Name: "saturation",
						Query: `max(rate(process_cpu_seconds_total{namespace="{{namespace}}",` +
							`app="{{name}}",track="{{track}}"}[{{interval}}]))`,
						SuccessCondition: "result < 0.8"},
				},
				Analysis: platformv1.Analysis{IntervalSeconds: 30},
			},
		},
	}
}

// record keeps w.
func (l *admissionLoad) record(w admissionWrite) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, w)
}

// summary is the load's writes as figures.
func (l *admissionLoad) summary() admissionRun {
	return l.summarySince(0)
}

// written is how many writes the load has recorded.
func (l *admissionLoad) written() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.writes)
}

// summarySince is the summary of the writes recorded from the from-th on.
func (l *admissionLoad) summarySince(from int) admissionRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := admissionRun{ByKind: map[string]stats{}}
	all := make([]time.Duration, 0, len(l.writes))
	byKind := map[string][]time.Duration{}
	for _, w := range l.writes[from:] {
		if w.kind == "skipped" {
			continue
		}
		r.Writes++
		if w.err != nil {
			if timedOut(w.err) {
				r.TimedOut++
			} else {
				r.Refused++
			}
			if r.FirstRefusal == "" {
				r.FirstRefusal = w.kind + ": " + w.err.Error()
			}
			continue
		}
		all = append(all, w.took)
		byKind[w.kind] = append(byKind[w.kind], w.took)
	}
	r.Latency = newStats(all)
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		r.ByKind[kind] = newStats(byKind[kind])
	}
	return r
}

// timedOut reports whether err is a write that ran out of time, at the
// client or at the API server.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		(errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, io.ErrUnexpectedEOF)
}

// admissionRows prints figure 9.
func admissionRows(tw io.Writer, r *results) {
	a := r.Admission
	if a == nil {
		fmt.Fprintf(tw, "9\tadmission\tnot measured\t-\t-\n")
		return
	}
	op, fl := a.Operator, a.Floor
	limit := min(fl.Latency.P99+admissionTargetExtra.Seconds(), admissionTargetRatio*fl.Latency.P99)
	met := op.Writes > 0 && op.Refused+op.TimedOut == 0 &&
		(op.Latency.P99 <= limit || op.Latency.P99 <= floorMargin*fl.Latency.P99)
	row(tw, "9", fmt.Sprintf("%d writes a second, every kind admitted, %ds each side", a.PerSecond,
		admissionSeconds*max(1, len(a.Rounds))),
		fmt.Sprintf("p50 %s  p99 %s  max %s (%d writes, %d refused, %d timed out); %.2f access reviews per write",
			ms(op.Latency.P50), ms(op.Latency.P99), ms(op.Latency.Max), op.Writes, op.Refused, op.TimedOut,
			a.AccessReviewsPerWrite),
		fmt.Sprintf("p99 <= %s (floor's + %s, <= %.1f x), 0 refused", ms(limit), admissionTargetExtra, admissionTargetRatio),
		met)
	if len(a.Rounds) > 1 {
		ratios := make([]string, len(a.Rounds))
		for i, r := range a.Rounds {
			ratios[i] = fmt.Sprintf("%s / %s = %.2f", ms(r.P99Seconds), ms(r.FloorP99Seconds), r.P99Seconds/r.FloorP99Seconds)
		}
		row(tw, "", fmt.Sprintf("  each of %d rounds: p99 / the floor's", len(a.Rounds)),
			strings.Join(ratios, "; "), "-", true)
	}
	row(tw, "", "floor: a no-op webhook server in the operator's place",
		fmt.Sprintf("p50 %s  p99 %s  max %s (%d writes, %d refused, %d timed out)",
			ms(fl.Latency.P50), ms(fl.Latency.P99), ms(fl.Latency.Max), fl.Writes, fl.Refused, fl.TimedOut), "-", true)
	row(tw, "", "  a webhook call, as the API server times it",
		fmt.Sprintf("mean %s (%.0f calls); floor mean %s (%.0f calls)", ms(op.WebhookCallMeanSeconds), op.WebhookCalls,
			ms(fl.WebhookCallMeanSeconds), fl.WebhookCalls), "-", true)
	row(tw, "", "  a conversion, as the API server times it",
		fmt.Sprintf("mean %s (%.0f calls, %.0f failed); floor mean %s (%.0f calls, %.0f failed)",
			ms(op.ConversionMeanSeconds), op.Conversions, op.ConversionsFailed,
			ms(fl.ConversionMeanSeconds), fl.Conversions, fl.ConversionsFailed), "-", true)
	row(tw, "", "  connections the API server opened to the webhooks",
		fmt.Sprintf("%d; floor %d (each a TLS handshake)", op.Connections, fl.Connections), "-", true)
	var answered []string
	for _, name := range slices.Sorted(maps.Keys(op.AnswerMeanSeconds)) {
		if op.AnswerMeanSeconds[name] > 0 && name != harness.NoOpName {
			lead := ""
			if name == op.Leader {
				lead = ", the leader"
			}
			answered = append(answered, fmt.Sprintf("%s %s%s", name, ms(op.AnswerMeanSeconds[name]), lead))
		}
	}
	row(tw, "", "  a request's first byte to its answer's, at the forwarder",
		fmt.Sprintf("%s; floor %s", strings.Join(answered, ", "), ms(fl.AnswerMeanSeconds[harness.NoOpName])), "-", true)
	row(tw, "", "  at the replicas, per webhook request",
		fmt.Sprintf("mean %s  p99 <= %s in the handler (%.0f requests); %.0f refused before a webhook",
			ms(a.Served.MeanSeconds), ms(a.Served.P99UpToSeconds), a.Served.Requests, a.Served.Refused), "-", true)
	row(tw, "", "  the replicas' requests to the API server",
		fmt.Sprintf("mean %s in their client's rate limiter, then %s answering", ms(a.Served.LimiterWaitMeanSeconds),
			ms(a.Served.APIMeanSeconds)), "-", true)
	for _, path := range slices.Sorted(maps.Keys(a.Served.MeanSecondsByPath)) {
		row(tw, "", "    "+path, "mean "+ms(a.Served.MeanSecondsByPath[path]), "-", true)
	}
	for _, kind := range slices.Sorted(maps.Keys(op.ByKind)) {
		o, f := op.ByKind[kind], fl.ByKind[kind]
		row(tw, "", "  "+kind,
			fmt.Sprintf("p50 %s  p99 %s; floor p50 %s  p99 %s", ms(o.P50), ms(o.P99), ms(f.P50), ms(f.P99)), "-", true)
	}
	if op.FirstRefusal != "" {
		row(tw, "", "  first refused", op.FirstRefusal, "-", false)
	}
}

// ms is seconds in milliseconds, "12.3ms".
func ms(seconds float64) string {
	return fmt.Sprintf("%.1fms", seconds*1000)
}
