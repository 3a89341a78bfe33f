// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cacheblock"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/recorder"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/bench/internal/cached"
	"github.com/example/platform-operator/test/harness"
)

// Namespaces of the benchmark's phases.
const (
	nsBaseline  = "bench-baseline"
	nsAdmission = "bench-admission"
	nsConverge  = "bench-converge"
	nsBurst     = "bench-burst"
	nsMemory    = "bench-memory"
)

// neverSchedule is a schedule that does not fire while the benchmark runs
// (midnight on January 1st), for the tasks that must stay idle.
const neverSchedule = "0 0 1 1 *"

// config is what one benchmark run measures, and with which settings.
type config struct {
	// Tasks is the number of ScheduleTasks of the convergence figure.
	Tasks int `json:"tasks"`
	// BurstTasks fire together on the same minute for the recording figure.
	BurstTasks int `json:"burstTasks"`
	// MemoryTasks and MemoryRuns are the cluster's size for the memory, idle
	// and cold-start figures.
	MemoryTasks int `json:"memoryTasks"`
	MemoryRuns  int `json:"memoryRuns"`
	// Idle is how long the idle figure watches for writes.
	Idle time.Duration `json:"idle"`
	// QPS and Burst are the client settings of the manager, and of the bare
	// client of the baseline.
	QPS   float64 `json:"qps"`
	Burst int     `json:"burst"`
	// Workers is each controller's --*-max-concurrent-reconciles, and the
	// number of the baseline's and of the task creators' goroutines.
	Workers int `json:"workers"`
	// RunFor is how long a burst task's pod runs.
	RunFor time.Duration `json:"runFor"`
	// MaxSizeTasks are added last, at the API's size limits, for the
	// memory a tenant can make the manager hold per task; 0 skips them.
	MaxSizeTasks int `json:"maxSizeTasks"`
	// Curve are the task counts of the growth curve, each measured on a
	// cluster of its own with runsPerTask runs per task.
	Curve []int `json:"curve"`
	// Apps AppDeployments of AppReplicas pods each are created at once for
	// figure 7a; Canaries analyse at once for figure 7d; AppIdle is how long
	// figure 7c watches for writes.
	Apps        int           `json:"apps"`
	AppReplicas int           `json:"appReplicas"`
	Canaries    int           `json:"canaries"`
	AppIdle     time.Duration `json:"appIdle"`
	// RoutedCanaries canaries move by weight on HTTPRoutes for figure 7e;
	// each has two Services, and kwok's Service range (a /24) holds figure
	// 7a's Apps and few more.
	RoutedCanaries int `json:"routedCanaries"`
	// ForeignObjects is how many foreign labelled Deployments figure 8
	// creates.
	ForeignObjects int `json:"foreignObjects"`
	// AdmissionRate is figure 9's writes a second.
	AdmissionRate int `json:"admissionRate"`
	// AdmissionRounds is how many times figure 9 runs its 60 s a side, in
	// turn on one cluster: its p99s are of every round's writes, and each
	// round's are shown beside them.
	AdmissionRounds int `json:"admissionRounds"`
	// Fleet canaries are measured at once for figure 10, alone and then
	// beside FleetNoisy noisy ones, for FleetWindow each.
	Fleet       int           `json:"fleet"`
	FleetNoisy  int           `json:"fleetNoisy"`
	FleetWindow time.Duration `json:"fleetWindow"`
	// Suites are the figures measured, in the order of suites; all of them
	// when empty.
	Suites []string `json:"suites,omitempty"`
}

// The suites of the benchmark, in the order they run. Each builds on what
// the ones before it left in the cluster when they ran: memory grows the
// convergence tasks to MemoryTasks (or creates them all), and cold start,
// idle writes and the size limits measure the cluster as memory left it.
const (
	suiteConvergence = "convergence"
	suiteRecording   = "recording"
	suiteMemory      = "memory"
	suiteColdStart   = "coldstart"
	suiteIdle        = "idle"
	suiteMaxSize     = "maxsize"
	// suiteCurve runs after the others, each size on a cluster of its own.
	suiteCurve = "curve"
	// suiteAppDeploy runs after the curve, on a cluster of its own.
	suiteAppDeploy = "appdeploy"
	// suiteForeign runs after the AppDeployments, on a cluster of its own.
	suiteForeign = "foreign"
	// suiteAdmission runs after the foreign objects, on a cluster of its
	// own.
	suiteAdmission = "admission"
	// suiteFleet runs last, on a cluster of its own.
	suiteFleet = "canaries"
)

// suites lists every suite in order.
var suites = []string{
	suiteConvergence, suiteRecording, suiteMemory, suiteColdStart, suiteIdle, suiteMaxSize, suiteCurve, suiteAppDeploy,
	suiteForeign, suiteAdmission, suiteFleet,
}

// ownCluster reports whether a suite runs on a cluster of its own rather
// than on the one run starts.
func ownCluster(suite string) bool {
	return suite == suiteCurve || suite == suiteAppDeploy || suite == suiteForeign || suite == suiteAdmission ||
		suite == suiteFleet
}

// runs reports whether the configuration measures suite.
func (c config) runs(suite string) bool {
	return len(c.Suites) == 0 || slices.Contains(c.Suites, suite)
}

// syncPeriod is the manager's --sync-period during the benchmark: short
// enough that at least two full resyncs fall in the idle window.
func (c config) syncPeriod() time.Duration {
	return c.Idle * 2 / 5
}

// stats summarises latencies in seconds.
type stats struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

func newStats(d []time.Duration) stats {
	if len(d) == 0 {
		return stats{}
	}
	slices.Sort(d)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(d)))) - 1
		return d[max(i, 0)].Seconds()
	}
	return stats{Count: len(d), P50: at(0.50), P99: at(0.99), Max: d[len(d)-1].Seconds()}
}

// results are the five figures of one run.
type results struct {
	Started time.Time `json:"started"`
	Machine machine   `json:"machine"`
	Config  config    `json:"config"`

	Convergence struct {
		Tasks int `json:"tasks"`
		// OperatorSeconds is the median of OperatorRuns, the operator's
		// times, each from the first create to the last task Ready.
		OperatorSeconds float64   `json:"operatorSeconds"`
		OperatorRuns    []float64 `json:"operatorRuns"`
		BaselineSeconds float64   `json:"baselineSeconds"`
		Ratio           float64   `json:"ratio"`
		// BaselineRuns are the bare client's times, of which BaselineSeconds
		// is the median.
		BaselineRuns []float64 `json:"baselineRuns"`
		// FloorSeconds is the median of FloorRuns: the bare client doing
		// the same writes with its creates going through the operator's
		// admission webhooks, served by a standby replica that reconciles
		// nothing. It is the floor of the work the operator's design does;
		// FloorRatio is OperatorSeconds over it.
		FloorSeconds float64   `json:"floorSeconds"`
		FloorRuns    []float64 `json:"floorRuns"`
		FloorRatio   float64   `json:"floorRatio"`
		// StandbyCPUSeconds is the CPU the standby replica used over the
		// floor's runs: admission and caches, without the reconcile.
		StandbyCPUSeconds float64 `json:"standbyCpuSeconds"`
		// CreatedSeconds is when the last of the tasks was created, from
		// the first create: what is left after it is the operator's tail.
		CreatedSeconds float64 `json:"createdSeconds"`
		// Diagnosis tells where the operator's time went, as for the burst
		// (its late runs aside), from the first create to the manager idle.
		Diagnosis burstDiagnosis `json:"diagnosis"`
		// ManagerWritesPer counts the manager's writes of stored objects
		// per new task; WritesPerTaskBy splits them by "verb resource";
		// AccessReviewsPer the access reviews admission asked for, which
		// store nothing and are not counted as writes.
		ManagerWritesPer float64            `json:"managerWritesPerTask"`
		WritesPerTaskBy  map[string]float64 `json:"managerWritesPerTaskBy"`
		AccessReviewsPer float64            `json:"accessReviewsPerTask"`
	} `json:"convergence"`
	Recording struct {
		Runs int `json:"runs"`
		// JobToRun is Job creation → TaskRun creation; CompletionToSucceeded
		// Job completion → TaskRun Succeeded; CronJobSkew scheduled time →
		// Job creation, the CronJob controller's share.
		JobToRun              stats `json:"jobToTaskRun"`
		CompletionToSucceeded stats `json:"completionToSucceeded"`
		CronJobSkew           stats `json:"cronJobSkew"`
		// Burst tells where the recording time goes, from the fire minute
		// until every run is recorded and finished.
		Burst burstDiagnosis `json:"burst"`
	} `json:"recording"`
	Memory struct {
		Tasks  int     `json:"tasks"`
		Runs   int     `json:"runs"`
		RSSMiB float64 `json:"rssMiB"`
		// LiveHeapMiB is the heap in use right after a collection; Objects
		// what each cached object holds of it by kind, RestMiB what is left
		// (the informers' indexes and keys, queues, the program itself).
		LiveHeapMiB float64       `json:"liveHeapMiB"`
		Objects     []objectBytes `json:"bytesPerCachedObject"`
		RestMiB     float64       `json:"restOfLiveHeapMiB"`
		PeakRSSMiB  float64       `json:"peakRssMiB"`
		HeapMiB     float64       `json:"heapInuseMiB"`
		// FloorRSSMiB and FloorHeapMiB are the floor's: a bare client
		// keeping what the manager's cache keeps (test/bench/cachefloor).
		FloorRSSMiB  float64 `json:"floorRssMiB"`
		FloorHeapMiB float64 `json:"floorLiveHeapMiB"`
		// RSS is where the manager's RSS goes; FloorRSSFileMiB the floor's
		// pages of its program file.
		RSS             rssBreakdown `json:"rssBreakdown"`
		FloorRSSFileMiB float64      `json:"floorRssFileMiB"`
		// JobsInCache counts the Jobs the manager's cache selects once every
		// run is recorded finished: 0, as each such Job is marked recorded.
		JobsInCache int `json:"jobsInCache"`
		// EventsSent and EventsLost count the manager's events from its
		// start: sent, and dropped (a full queue) or failed. A lost event
		// would also be memory not held, so the figure holds only with 0.
		EventsSent float64 `json:"eventsSent"`
		EventsLost float64 `json:"eventsLost"`
		// ManagerCPUSeconds, ManagerWrites and ReconcileP99Seconds are
		// the manager's CPU time, writes of stored objects and reconcile
		// p99 (every controller) from its start to this figure.
		ManagerCPUSeconds   float64 `json:"managerCpuSeconds"`
		ManagerWrites       float64 `json:"managerWrites"`
		ReconcileP99Seconds float64 `json:"reconcileP99Seconds"`
		// ManagerWritesBy is ManagerWrites by "verb resource[/subresource]".
		ManagerWritesBy map[string]float64 `json:"managerWritesBy,omitempty"`
	} `json:"memory"`
	Idle struct {
		Seconds    float64 `json:"seconds"`
		Writes     float64 `json:"writes"`
		Reconciles float64 `json:"reconciles"`
		// RSSMiB and HeapMiB are the manager's at the end of the idle
		// window: memory at rest with the same objects as figure 3, in a
		// manager started on them (the cold start's) that has sent no
		// event for the whole window, so client-go's event broadcaster,
		// which keeps each event it sent for 6 to 12 minutes, holds none.
		RSSMiB  float64 `json:"rssMiB"`
		HeapMiB float64 `json:"heapInuseMiB"`
	} `json:"idle"`
	ColdStart struct {
		ReadySeconds float64 `json:"readySeconds"`
		// FloorSeconds is a bare client filling a cache with the same
		// objects (bareCacheSync), measured in the same run.
		FloorSeconds float64 `json:"floorSeconds"`
		Writes       float64 `json:"writes"`
		Reconciles   float64 `json:"reconciles"`
	} `json:"coldStart"`
	// MaxSize is the memory of tasks at the size limits (figure 3b).
	MaxSize maxSizeResult `json:"maxSize"`
	// Curve is the growth curve, a point per size (figure 6).
	Curve []curvePoint `json:"curve,omitempty"`
	// EarlierCurve is the newest saved point of each size, from earlier
	// runs' results, for the targets that compare sizes one run did not
	// both measure.
	EarlierCurve map[int]curvePoint `json:"-"`
	// AppDeploy is the AppDeployment figures (figure 7).
	AppDeploy *appDeployResult `json:"appDeploy,omitempty"`
	// Foreign is what foreign labelled Deployments cost (figure 8).
	Foreign *foreignResult `json:"foreign,omitempty"`
	// Admission is figure 9: the latency of writes through the webhooks.
	Admission *admissionResult `json:"admission,omitempty"`
	// Fleet is figure 10: a fleet of canaries measured at once.
	Fleet *fleetResult `json:"fleet,omitempty"`
	// Duplicates lists Jobs without exactly one TaskRun; it must be empty.
	// RunsChecked says whether any cluster of the run had Jobs to check: the
	// AppDeployment suite alone has none.
	Duplicates  []string `json:"runsNotOnePerJob"`
	RunsChecked bool     `json:"runsChecked"`
	// HeapProfile is the manager's heap profile (pprof) at the memory figure,
	// saved beside the JSON.
	HeapProfile []byte `json:"-"`
	// ColdStartProfile is the manager's CPU profile (pprof) from the moment
	// its pprof endpoint answers through the cold start, saved beside the
	// JSON.
	ColdStartProfile []byte `json:"-"`
	// BurstProfile is the manager's CPU profile (pprof) over the first
	// burstProfileTime of the burst, saved beside the JSON.
	BurstProfile []byte `json:"-"`
}

// burstProfileTime is how long the CPU profile of the burst covers, from the
// fire time: the time in which the runs are recorded.
const burstProfileTime = 60 * time.Second

// burstDiagnosis says where the time of the recording figure goes: how much
// the ScheduleTask controller worked, how long passes waited in its queue,
// and whether the late runs are those of late Jobs.
type burstDiagnosis struct {
	// TaskPasses and Writes are the ScheduleTask controller's reconciles and
	// the manager's writes during the burst.
	TaskPasses float64 `json:"taskPasses"`
	// TaskPassErrors are the passes among them that ended in an error.
	TaskPassErrors float64 `json:"taskPassErrors"`
	Writes         float64 `json:"writes"`
	// WritesBy splits Writes by "verb resource".
	WritesBy map[string]float64 `json:"writesBy,omitempty"`
	// PassSeconds is the mean time of a ScheduleTask pass, and RunPassSeconds
	// that of a TaskRun pass (controller_runtime_reconcile_time_seconds):
	// with the worker count, how long the queue takes to drain.
	PassSeconds    float64 `json:"passSeconds"`
	RunPassSeconds float64 `json:"runPassSeconds"`
	// QueueWaitP50UpTo and QueueWaitP99UpTo bound the ScheduleTask queue's
	// wait quantiles from above (histogram buckets).
	QueueWaitP50UpTo float64 `json:"queueWaitP50UpToSeconds"`
	QueueWaitP99UpTo float64 `json:"queueWaitP99UpToSeconds"`
	// LateRuns counts runs recorded more than lateRun after their Job was
	// seen; LateJobSkew is the CronJob controller's skew of their Jobs.
	LateRuns    int   `json:"lateRuns"`
	LateJobSkew stats `json:"lateJobSkew"`
	// Requests is the manager's API requests of every verb; LimiterWait
	// their mean wait in its client's rate limiter and LimiterWaitP99UpTo
	// a bound on the p99 of that wait; APISeconds the mean time the API
	// server took to answer them.
	Requests           float64 `json:"requests"`
	LimiterWait        float64 `json:"limiterWaitSeconds"`
	LimiterWaitP99UpTo float64 `json:"limiterWaitP99UpToSeconds"`
	APISeconds         float64 `json:"apiSeconds"`
	// CPUSeconds is the manager's CPU time over the burst, and Seconds the
	// burst's length, from its first Job to its last run finished.
	CPUSeconds float64 `json:"cpuSeconds"`
	Seconds    float64 `json:"seconds"`
}

// lateRun is when a run counts as recorded late in the burst diagnosis.
const lateRun = 10 * time.Second

// diagnoseBurst compares the manager's metrics before and after the burst;
// toRun and skew are per Job, in the same order.
func diagnoseBurst(before, after sample, toRun, skew []time.Duration) burstDiagnosis {
	d := burstDiagnosis{
		TaskPasses:         after.taskPasses - before.taskPasses,
		TaskPassErrors:     after.taskErrors - before.taskErrors,
		Writes:             after.writes - before.writes,
		PassSeconds:        meanDelta(before.taskPassTime, after.taskPassTime),
		RunPassSeconds:     meanDelta(before.runPassTime, after.runPassTime),
		QueueWaitP50UpTo:   quantileUpTo(before.taskQueueWait, after.taskQueueWait, 0.50),
		QueueWaitP99UpTo:   quantileUpTo(before.taskQueueWait, after.taskQueueWait, 0.99),
		Requests:           after.apiTime.count - before.apiTime.count,
		LimiterWait:        meanDelta(before.limiterWait, after.limiterWait),
		LimiterWaitP99UpTo: quantileUpTo(before.limiterBuckets, after.limiterBuckets, 0.99),
		APISeconds:         meanDelta(before.apiTime, after.apiTime),
		CPUSeconds:         after.cpuSeconds - before.cpuSeconds,
	}
	_, d.WritesBy = storedWrites(before, after)
	var lateSkew []time.Duration
	for i, t := range toRun {
		if t > lateRun {
			lateSkew = append(lateSkew, skew[i])
		}
	}
	d.LateRuns, d.LateJobSkew = len(lateSkew), newStats(lateSkew)
	return d
}

// bench is one benchmark run in progress.
type bench struct {
	cfg      config
	cluster  *harness.Cluster
	operator *harness.Operator
	manager  *harness.Manager
	obs      *harness.Observer
	// client has the manager's client settings; bare is another such
	// client, the bare client's in the operator's place.
	client client.Client
	bare   client.Client
	res    *results
	// pprofPort serves the manager's /debug/pprof/.
	pprofPort int
	// converged is the number of tasks the convergence suite left.
	converged int
}

// run measures the five figures on a new kwok cluster.
func run(ctx context.Context, cfg config) (*results, error) {
	res := &results{Started: time.Now().UTC(), Machine: describeMachine(), Config: cfg}
	if !slices.ContainsFunc(suites, func(s string) bool { return !ownCluster(s) && cfg.runs(s) }) {
		return res, nil // the growth curve or the AppDeployments alone: each runs on clusters of its own
	}
	// What watches this run's cluster (the observer's informers) stops with
	// it: the growth curve runs one cluster after another in one process.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The cluster's own controllers run without client-side rate limits, so
	// that what is measured is the operator, not kube-controller-manager's
	// default 20 requests a second for every Job it creates or completes.
	c, teardown, err := harness.StartCluster(ctx, fmt.Sprintf("bench-%d", time.Now().Unix()), harness.ClusterOptions{
		Nodes:       4,
		KwokctlArgs: []string{"--disable-qps-limits"},
	})
	if err != nil {
		return nil, err
	}
	// Watches stop before the cluster goes, or their reflectors log the
	// connection the deletion resets, into the middle of the table.
	defer func() { cancel(); teardown() }()
	b := &bench{cfg: cfg, cluster: c, res: res}
	restCfg := rest.CopyConfig(c.Config)
	restCfg.QPS, restCfg.Burst = float32(cfg.QPS), cfg.Burst
	if b.client, err = client.New(restCfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, err
	}
	if b.bare, err = client.New(restCfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, err
	}
	if b.obs, err = harness.StartObserver(ctx, c.Config); err != nil {
		return nil, err
	}

	// The baseline runs before the operator exists, so nothing reacts to its
	// objects, and without admission webhooks: the strictest yardstick.
	if cfg.runs(suiteConvergence) {
		if err := b.baseline(ctx); err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
	}
	b.operator, err = harness.StartOperator(ctx, c, harness.OperatorOptions{Args: b.managerArgs()})
	if err != nil {
		return nil, err
	}
	defer b.operator.Stop()
	if cfg.runs(suiteConvergence) {
		if err := b.admissionFloor(ctx); err != nil {
			return nil, fmt.Errorf("admission floor: %w", err)
		}
	}
	if err := b.startManager(ctx); err != nil {
		return nil, err
	}
	steps := []struct {
		suite, name string
		fn          func(context.Context) error
	}{
		{suiteConvergence, "convergence", b.convergence},
		{suiteRecording, "run recording", b.recording},
		{suiteMemory, "memory", b.memory},
		{suiteColdStart, "cold start", b.coldStart},
		{suiteIdle, "idle writes", b.idle},
		{suiteMaxSize, "tasks at the size limits", b.maxSize},
	}
	for _, s := range steps {
		if !cfg.runs(s.suite) {
			continue
		}
		harness.Logf("bench: %s", s.name)
		start := time.Now()
		if err := s.fn(ctx); err != nil {
			return res, fmt.Errorf("%s: %w", s.name, err)
		}
		harness.Logf("bench: %s done in %s", s.name, time.Since(start).Round(time.Second))
	}
	res.Duplicates, res.RunsChecked = b.obs.JobsWithoutOneRun(""), true
	return res, nil
}

// managerArgs are the manager's flags for the benchmark: one replica, no
// leader election (its Lease renewals would count as writes), metrics over
// plain HTTP on loopback, and the benchmark's client settings.
func (b *bench) managerArgs() []string {
	return []string{
		"--leader-elect=false",
		"--metrics-secure=false",
		fmt.Sprintf("--kube-api-qps=%g", b.cfg.QPS),
		fmt.Sprintf("--kube-api-burst=%d", b.cfg.Burst),
		fmt.Sprintf("--scheduletask-max-concurrent-reconciles=%d", b.cfg.Workers),
		fmt.Sprintf("--taskrun-max-concurrent-reconciles=%d", b.cfg.Workers),
	}
}

// startManager starts a manager process with pprof on a port of its own and
// the extra flags.
func (b *bench) startManager(ctx context.Context, args ...string) error {
	port, err := harness.FreePort()
	if err != nil {
		return err
	}
	return b.startManagerOn(ctx, port, args...)
}

// startManagerOn starts the manager with its pprof endpoint on port.
func (b *bench) startManagerOn(ctx context.Context, port int, args ...string) error {
	m, err := b.operator.StartReplica(ctx, append(args, fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", port))...)
	if err != nil {
		return err
	}
	b.manager, b.pprofPort = m, port
	return nil
}

// task returns the i-th benchmark task of a namespace.
func task(namespace string, i int, schedule string) *platformv1.ScheduleTask {
	return testutil.NewScheduleTask(namespace, fmt.Sprintf("task-%05d", i), testutil.WithSchedule(schedule))
}

// baselineRuns is how many times the bare client does its work; the
// yardstick is the median. One run of it moved by a quarter between two
// runs of the benchmark on the same quiet machine.
const baselineRuns = 3

// baseline times a bare client doing, per task, the API writes the design
// needs: create the ScheduleTask, create its CronJob, record the event that
// says so, update the task's status. It does so baselineRuns times, each in
// a namespace of its own that is gone before the next, and keeps every
// time and their median.
func (b *bench) baseline(ctx context.Context) error {
	c := &b.res.Convergence
	var err error
	c.BaselineSeconds, c.BaselineRuns, err = b.bareClient(ctx, nsBaseline, false)
	return err
}

// bareClient times the bare client baselineRuns times, in namespaces
// prefix-0, prefix-1, ..., and returns the median and every run's seconds.
// With throughAdmission, each task must come back from its create with the
// finalizer the mutating webhook sets, which shows admission judged it.
func (b *bench) bareClient(ctx context.Context, prefix string, throughAdmission bool) (float64, []float64, error) {
	return medianOfRuns(prefix, func(namespace string) (time.Duration, error) {
		return b.baselineOnce(ctx, namespace, throughAdmission)
	})
}

// medianOfRuns calls once baselineRuns times, with the namespaces
// prefix-0, prefix-1, ..., and returns the median of the times it returns
// and every one of them in seconds.
func medianOfRuns(prefix string, once func(namespace string) (time.Duration, error)) (float64, []float64, error) {
	times := make([]time.Duration, 0, baselineRuns)
	runs := make([]float64, 0, baselineRuns)
	for run := range baselineRuns {
		d, err := once(fmt.Sprintf("%s-%d", prefix, run))
		if err != nil {
			return 0, nil, err
		}
		times = append(times, d)
		runs = append(runs, d.Seconds())
	}
	return newStats(times).P50, runs, nil
}

// floorLeaseHolder holds the leader-election Lease while an admission floor
// is measured, so the replica serving admission stays a standby.
const floorLeaseHolder = "bench-admission-floor"

// admissionFloor times the bare client with the operator's admission in the
// path (see withStandby). What the operator takes beyond this floor is its
// reconcile's own.
func (b *bench) admissionFloor(ctx context.Context) error {
	c := &b.res.Convergence
	var err error
	c.StandbyCPUSeconds, err = withStandby(ctx, b.cluster, b.operator, func() error {
		var err error
		c.FloorSeconds, c.FloorRuns, err = b.bareClient(ctx, nsAdmission, true)
		return err
	})
	return err
}

// withStandby calls fn while a replica of op serves the operator's admission
// webhooks, and fills its caches as the operator does, but reconciles
// nothing: the leader-election Lease is held by floorLeaseHolder, so its
// controllers never start, as on any standby replica. It fails when the
// replica reconciled anyway, and returns the CPU-seconds the replica used
// while fn ran.
func withStandby(ctx context.Context, cluster *harness.Cluster, op *harness.Operator,
	fn func() error) (float64, error) {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: harness.OperatorNamespace, Name: harness.LeaseName},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(floorLeaseHolder), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &metav1.MicroTime{Time: time.Now()}, RenewTime: &metav1.MicroTime{Time: time.Now()},
		},
	}
	if err := cluster.Client.Create(ctx, lease); err != nil {
		return 0, err
	}
	standby, err := op.StartReplica(ctx, "--leader-elect=true")
	if err != nil {
		return 0, err
	}
	defer standby.Kill(syscall.SIGTERM)
	before, err := scrape(ctx, standby)
	if err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	after, err := scrape(ctx, standby)
	if err != nil {
		return 0, err
	}
	if after.reconciles > 0 {
		return 0, fmt.Errorf("the standby replica reconciled %.0f times: the floor is not the bare client's",
			after.reconciles)
	}
	// Stopped before the Lease goes, or it would take it and reconcile.
	standby.Kill(syscall.SIGTERM)
	return after.cpuSeconds - before.cpuSeconds, cluster.Client.Delete(ctx, lease)
}

// baselineOnce is one run of the bare client, in namespace; see bareClient.
// It has the shape of the operator's run without the operator's logic: a
// user creates the tasks (Workers goroutines, the benchmark's client), and
// in the operator's place a bare client with a client of its own (so with
// limits of its own, as the manager has) makes each task's writes as soon
// as its create returns (Workers goroutines, as the manager has).
func (b *bench) baselineOnce(ctx context.Context, namespace string, throughAdmission bool) (time.Duration, error) {
	if err := b.createNamespace(ctx, namespace); err != nil {
		return 0, err
	}
	created := make(chan *platformv1.ScheduleTask, b.cfg.Tasks)
	start := time.Now()
	var creating errgroup.Group
	creating.Go(func() error {
		defer close(created)
		return parallel(ctx, b.cfg.Tasks, b.cfg.Workers, func(i int) error {
			st := task(namespace, i, neverSchedule)
			if err := b.client.Create(ctx, st); err != nil {
				return err
			}
			if throughAdmission && !controllerutil.ContainsFinalizer(st, scheduletask.Finalizer) {
				return fmt.Errorf("task %s was created without the finalizer: admission did not judge it", st.Name)
			}
			created <- st
			return nil
		})
	})
	err := parallel(ctx, b.cfg.Tasks, b.cfg.Workers, func(int) error {
		st, ok := <-created
		if !ok {
			return errors.New("the user stopped creating tasks")
		}
		return b.reconcileWrites(ctx, st)
	})
	if err := errors.Join(creating.Wait(), err); err != nil {
		return 0, err
	}
	took := time.Since(start)
	if throughAdmission {
		// No controller runs to release them.
		if err := b.dropFinalizers(ctx, namespace); err != nil {
			return 0, err
		}
	}
	// Gone before the operator starts, so it never sees them.
	return took, b.deleteNamespace(ctx, namespace)
}

// reconcileWrites are the writes the operator makes for a new task, made by
// the bare client in its place: apply the CronJob, record the event, write
// the status.
func (b *bench) reconcileWrites(ctx context.Context, st *platformv1.ScheduleTask) error {
	cj, err := scheduletask.DesiredCronJob(st, testenv.Scheme())
	if err != nil {
		return err
	}
	if err := b.bare.Apply(ctx, cj, client.FieldOwner(scheduletask.FieldManager), client.ForceOwnership); err != nil {
		return err
	}
	if err := b.bare.Create(ctx, cronJobCreatedEvent(st)); err != nil {
		return err
	}
	now := metav1.Now()
	st.Status.ObservedGeneration = st.Generation
	st.Status.NextScheduleTime = &now
	meta.SetStatusCondition(&st.Status.Conditions, metav1.Condition{
		Type: platformv1.ConditionReady, Status: metav1.ConditionTrue, Reason: platformv1.ReasonCronJobReady,
		Message: "CronJob " + st.Name + " is ready", ObservedGeneration: st.Generation,
	})
	return b.bare.Status().Update(ctx, st)
}

// dropFinalizers takes the finalizers off every task of namespace, so that
// the namespace can be deleted with no controller running.
func (b *bench) dropFinalizers(ctx context.Context, namespace string) error {
	var tasks platformv1.ScheduleTaskList
	if err := b.client.List(ctx, &tasks, client.InNamespace(namespace)); err != nil {
		return err
	}
	return parallel(ctx, len(tasks.Items), b.cfg.Workers, func(i int) error {
		st := &tasks.Items[i]
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
		return client.IgnoreNotFound(b.client.Patch(ctx, st, patch))
	})
}

// cronJobCreatedEvent is the event the operator records when it creates a
// task's CronJob, as its event recorder would write it.
func cronJobCreatedEvent(st *platformv1.ScheduleTask) *eventsv1.Event {
	now := metav1.NowMicro()
	return &eventsv1.Event{
		// Named as client-go's recorder names events.
		ObjectMeta: metav1.ObjectMeta{Namespace: st.Namespace, Name: fmt.Sprintf("%s.%x", st.Name, now.UnixNano())},
		EventTime:  now, ReportingController: "platform-operator", ReportingInstance: "bench",
		Action: "Create", Reason: "CronJobCreated", Type: corev1.EventTypeNormal,
		Note: "Created CronJob " + st.Name,
		Regarding: corev1.ObjectReference{APIVersion: platformv1.GroupVersion.String(), Kind: "ScheduleTask",
			Namespace: st.Namespace, Name: st.Name, UID: st.UID},
	}
}

// convergence times the operator baselineRuns times, as the bare client is
// timed, and keeps the median: the first runs each in a namespace of their
// own, deleted (and the manager idle again) before the next, the last in
// nsConverge, which the memory figure counts on, and whose writes and
// diagnosis are the figure's.
func (b *bench) convergence(ctx context.Context) error {
	times, err := runsBeforeTheLast(ctx, b.cluster.Client, b.manager, nsConverge,
		func(namespace string) (time.Duration, error) {
			took, _, err := b.convergeOnce(ctx, namespace)
			return took, err
		})
	if err != nil {
		return err
	}
	before, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	took, created, err := b.convergeOnce(ctx, nsConverge)
	if err != nil {
		return err
	}
	times = append(times, took)
	c := &b.res.Convergence
	c.CreatedSeconds = created.Seconds()
	for _, t := range times {
		c.OperatorRuns = append(c.OperatorRuns, t.Seconds())
	}
	c.OperatorSeconds = newStats(times).P50
	c.Tasks = b.cfg.Tasks
	b.converged = b.cfg.Tasks
	c.Ratio = c.OperatorSeconds / c.BaselineSeconds
	c.FloorRatio = ratio(c.OperatorSeconds, c.FloorSeconds)
	after, err := quiesce(ctx, b.manager, 3*time.Second, 10*time.Minute)
	if err != nil {
		return err
	}
	c.Diagnosis = diagnoseBurst(before, after, nil, nil)
	c.Diagnosis.Seconds = took.Seconds()
	total, by := storedWrites(before, after)
	n := float64(b.cfg.Tasks)
	c.ManagerWritesPer, c.AccessReviewsPer = total/n, (after.reviews-before.reviews)/n
	c.WritesPerTaskBy = map[string]float64{}
	for what, w := range by {
		c.WritesPerTaskBy[what] = w / n
	}
	return nil
}

// runsBeforeTheLast times the operator's runs of a figure but the last
// (baselineRuns-1 of them), each in the namespace prefix-<n> that is
// deleted, and the manager m idle again, before the next; the caller makes
// the last run, which it keeps and measures.
func runsBeforeTheLast(ctx context.Context, c client.Client, m *harness.Manager, prefix string,
	once func(namespace string) (time.Duration, error)) ([]time.Duration, error) {
	times := make([]time.Duration, 0, baselineRuns)
	for run := range baselineRuns - 1 {
		namespace := fmt.Sprintf("%s-%d", prefix, run)
		took, err := once(namespace)
		if err != nil {
			return nil, err
		}
		times = append(times, took)
		if err := deleteNamespace(ctx, c, namespace); err != nil {
			return nil, err
		}
		if _, err := quiesce(ctx, m, 3*time.Second, 10*time.Minute); err != nil {
			return nil, err
		}
	}
	return times, nil
}

// convergeOnce creates Tasks tasks in a new namespace and returns the time
// from the first create until the last task is seen with its CronJob and
// Ready=True, and until the last create returned.
func (b *bench) convergeOnce(ctx context.Context, namespace string) (took, created time.Duration, err error) {
	if err := b.createNamespace(ctx, namespace); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := b.createTasks(ctx, namespace, 0, b.cfg.Tasks, neverSchedule); err != nil {
		return 0, 0, err
	}
	created = time.Since(start)
	last, err := b.waitReady(ctx, namespace, b.cfg.Tasks, 30*time.Minute)
	if err != nil {
		return 0, 0, err
	}
	return last.Sub(start), created, nil
}

// recording lets BurstTasks tasks on "* * * * *" fire on the same minute and
// times how fast their Jobs get TaskRuns and their completions get recorded.
func (b *bench) recording(ctx context.Context) error {
	if err := b.createNamespace(ctx, nsBurst); err != nil {
		return err
	}
	runFor := b.cfg.RunFor.String()
	err := parallel(ctx, b.cfg.BurstTasks, b.cfg.Workers, func(i int) error {
		st := task(nsBurst, i, "* * * * *")
		st.Spec.Env = []corev1.EnvVar{{Name: "KWOK_RUN_FOR", Value: runFor}}
		return b.client.Create(ctx, st)
	})
	if err != nil {
		return err
	}
	if _, err := b.waitReady(ctx, nsBurst, b.cfg.BurstTasks, 10*time.Minute); err != nil {
		return err
	}
	// The first minute that starts after every task is ready: all fire on it.
	minute := time.Now().Truncate(time.Minute).Add(time.Minute)
	harness.Logf("bench: %d tasks fire at %s", b.cfg.BurstTasks, minute.Format(time.TimeOnly))
	before, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	profiled := make(chan []byte, 1)
	go func() {
		// Started a moment before the fire time; nothing happens before it.
		time.Sleep(time.Until(minute) - time.Second)
		url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", b.pprofPort, int(burstProfileTime.Seconds()))
		p, err := get(ctx, url)
		if err != nil {
			harness.Logf("bench: CPU profile of the burst: %v", err)
		}
		profiled <- p
	}()
	var notes map[types.UID]harness.JobNote
	err = poll(ctx, minute.Add(b.cfg.RunFor).Add(5*time.Minute), func() (bool, error) {
		notes = map[types.UID]harness.JobNote{}
		done := 0
		for uid, n := range b.obs.JobsIn(nsBurst) {
			if !n.Scheduled.Equal(minute) {
				continue
			}
			notes[uid] = n
			for _, r := range b.obs.RunsOf(uid) {
				if !n.Completed.IsZero() && !r.Succeeded.IsZero() {
					done++
				}
			}
		}
		return done == b.cfg.BurstTasks, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d recorded runs of %s (have %d Jobs): %w", b.cfg.BurstTasks, minute, len(notes), err)
	}
	burstEnd := time.Now()
	toRun := make([]time.Duration, 0, len(notes))
	toSucceeded := make([]time.Duration, 0, len(notes))
	skew := make([]time.Duration, 0, len(notes))
	for uid, n := range notes {
		runs := b.obs.RunsOf(uid)
		if len(runs) != 1 {
			return fmt.Errorf("the Job %s has %d TaskRuns", n.Key, len(runs))
		}
		toRun = append(toRun, runs[0].Seen.Sub(n.Seen))
		toSucceeded = append(toSucceeded, runs[0].Succeeded.Sub(n.Completed))
		skew = append(skew, n.Seen.Sub(n.Scheduled))
	}
	after, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	r := &b.res.Recording
	r.Runs = len(notes)
	r.JobToRun, r.CompletionToSucceeded, r.CronJobSkew = newStats(toRun), newStats(toSucceeded), newStats(skew)
	r.Burst = diagnoseBurst(before, after, toRun, skew)
	r.Burst.Seconds = burstEnd.Sub(minute).Seconds()
	select {
	case b.res.BurstProfile = <-profiled:
	case <-ctx.Done():
		return ctx.Err()
	}
	// Stop the tasks firing and take them away: the next figures need a
	// known number of tasks and runs.
	return b.deleteNamespace(ctx, nsBurst)
}

// memory grows the cluster to MemoryTasks tasks (the convergence ones
// included) with MemoryRuns finished runs, and reads the manager's memory
// once it is idle.
func (b *bench) memory(ctx context.Context) error {
	if err := b.growForMemory(ctx, 60*time.Minute); err != nil {
		return err
	}
	if _, err := quiesce(ctx, b.manager, 10*time.Second, 30*time.Minute); err != nil {
		return err
	}
	s, mem, err := settled(ctx, b.manager, 5*time.Minute)
	if err != nil {
		return err
	}
	if b.res.HeapProfile, err = get(ctx, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap", b.pprofPort)); err != nil {
		return err
	}
	m := &b.res.Memory
	m.Tasks, m.Runs = b.cfg.MemoryTasks, b.cfg.MemoryRuns
	m.RSSMiB, m.PeakRSSMiB, m.HeapMiB = mem.RSS/(1<<20), mem.Peak/(1<<20), s.heapInuse/(1<<20)
	m.RSS = breakdown(mem, s)
	m.ManagerCPUSeconds, m.ReconcileP99Seconds = s.cpuSeconds, quantile(s.reconcileTime, 0.99)
	m.ManagerWrites, m.ManagerWritesBy = storedWrites(sample{}, s)
	selector, err := cacheblock.ChildSelector()
	if err != nil {
		return err
	}
	var selected metav1.PartialObjectMetadataList
	selected.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("JobList"))
	if err := b.cluster.Client.List(ctx, &selected, client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return err
	}
	m.JobsInCache = len(selected.Items)
	m.EventsSent = s.events[recorder.OutcomeSent]
	m.EventsLost = s.events[recorder.OutcomeDropped] + s.events[recorder.OutcomeFailed]
	floor, err := b.cacheFloor(ctx, settleFor)
	if err != nil {
		return fmt.Errorf("the floor of the memory figure: %w", err)
	}
	m.FloorRSSMiB, m.FloorHeapMiB = floor.RSSBytes/(1<<20), floor.HeapAllocBytes/(1<<20)
	m.FloorRSSFileMiB = floor.RSSFileBytes / (1 << 20)
	// Where the live heap goes: the cached objects by kind, and the rest
	// (indexes, keys, queues, the program).
	live, err := b.liveMemory(ctx)
	if err != nil {
		return err
	}
	if m.Objects, err = b.objectSizes(ctx); err != nil {
		return err
	}
	m.LiveHeapMiB = live.heap / (1 << 20)
	others := live.heap
	for _, o := range m.Objects {
		others -= o.Bytes * float64(o.Objects)
	}
	m.RestMiB = others / (1 << 20)
	return nil
}

// rssBreakdown is where a manager's resident memory goes, in MiB: pages of
// its program file, and of the anonymous rest the Go heap in use, heap that
// is free but not yet returned to the operating system, goroutine stacks
// and the runtime's own structures; Other is what /proc counts and the
// runtime does not (the C library's, the kernel's rounding). HeapGoal is
// where the next collection starts (the live heap times 1 + GOGC/100).
type rssBreakdown struct {
	FileMiB      float64 `json:"fileMiB"`
	HeapInuseMiB float64 `json:"heapInuseMiB"`
	HeapFreeMiB  float64 `json:"heapFreeMiB"`
	StacksMiB    float64 `json:"stacksMiB"`
	RuntimeMiB   float64 `json:"runtimeMiB"`
	OtherMiB     float64 `json:"otherMiB"`
	HeapGoalMiB  float64 `json:"heapGoalMiB"`
}

// breakdown splits mem by the runtime's figures of the same moment.
func breakdown(mem cached.Memory, s sample) rssBreakdown {
	const mib = 1 << 20
	b := rssBreakdown{FileMiB: mem.File / mib, HeapInuseMiB: s.heapInuse / mib, HeapFreeMiB: s.heapFree / mib,
		StacksMiB: s.stacks / mib, RuntimeMiB: s.runtimeSys / mib, HeapGoalMiB: s.heapGoal / mib}
	b.OtherMiB = mem.Anon/mib - b.HeapInuseMiB - b.HeapFreeMiB - b.StacksMiB - b.RuntimeMiB
	return b
}

// recordedRun is the TaskRun the operator creates for a Job of the task's
// CronJob.
func recordedRun(cj *batchv1.CronJob, job *batchv1.Job, number int64) *platformv1.TaskRun {
	owner := metav1.GetControllerOf(cj)
	scheduled, _ := time.Parse(time.RFC3339, job.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
	return &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       job.Namespace,
			Name:            job.Name,
			Labels:          map[string]string{platformv1.ScheduleTaskLabel: owner.Name},
			Annotations:     map[string]string{platformv1.RunNumberAnnotation: strconv.FormatInt(number, 10)},
			OwnerReferences: []metav1.OwnerReference{*owner},
		},
		Spec: platformv1.TaskRunSpec{
			ScheduleTaskName: owner.Name,
			Trigger:          platformv1.TriggerScheduled,
			ScheduledTime:    &metav1.Time{Time: scheduled},
			JobRef:           &platformv1.JobRef{Name: job.Name, UID: job.UID},
		},
	}
}

// finishRun gives the run the status of a run that succeeded at once.
func finishRun(tr *platformv1.TaskRun, at time.Time) {
	t := metav1.NewTime(at)
	tr.Status = platformv1.TaskRunStatus{
		RunNumber:      tr.RunNumber(),
		Phase:          platformv1.TaskRunSucceeded,
		StartTime:      &t,
		CompletionTime: &t,
		Reason:         platformv1.ReasonCompleted,
		Conditions: []metav1.Condition{{
			Type: platformv1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: platformv1.ReasonCompleted,
			Message: "The run's Job completed", LastTransitionTime: t, ObservedGeneration: tr.Generation,
		}},
	}
}

// idle watches the manager's writes while nothing changes, through full
// resyncs (the manager started by coldStart runs with --sync-period of two
// fifths of the window).
func (b *bench) idle(ctx context.Context) error {
	before, err := quiesce(ctx, b.manager, 3*time.Second, 10*time.Minute)
	if err != nil {
		return err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.cfg.Idle):
	}
	after, err := scrape(ctx, b.manager)
	if err != nil {
		return err
	}
	i := &b.res.Idle
	i.Seconds = time.Since(start).Seconds()
	i.Writes, i.Reconciles = after.writes-before.writes, after.reconciles-before.reconciles
	atRest, mem, err := settled(ctx, b.manager, 2*time.Minute)
	if err != nil {
		return err
	}
	i.RSSMiB, i.HeapMiB = mem.RSS/(1<<20), atRest.heapInuse/(1<<20)
	return nil
}

// coldStart stops the manager and starts a new one: the time to ready, and
// the writes of the full reconcile that follows. The new manager resyncs
// every two fifths of the idle window, for the idle figure that follows; the
// first one kept the default period, so that resyncs did not pile onto the
// figures before.
func (b *bench) coldStart(ctx context.Context) error {
	b.manager.Kill(syscall.SIGTERM)
	port, err := harness.FreePort()
	if err != nil {
		return err
	}
	profiled := make(chan []byte, 1)
	go func() { profiled <- b.profileFromStart(ctx, port) }()
	if err := b.startManagerOn(ctx, port, fmt.Sprintf("--sync-period=%s", b.cfg.syncPeriod())); err != nil {
		return err
	}
	m := b.manager
	ready := time.Since(m.Started)
	// Every object is reconciled once after the start; wait for that and for
	// the queue to drain.
	want := float64(b.cfg.MemoryTasks + b.cfg.MemoryRuns)
	var s sample
	err = poll(ctx, time.Now().Add(15*time.Minute), func() (bool, error) {
		var err error
		s, err = scrape(ctx, m)
		return err == nil && s.reconciles >= want && s.depth == 0, err
	})
	if err != nil {
		return fmt.Errorf("waiting for %v reconciles after the start (have %v): %w", want, s.reconciles, err)
	}
	if s, err = quiesce(ctx, m, 5*time.Second, 10*time.Minute); err != nil {
		return err
	}
	select {
	case b.res.ColdStartProfile = <-profiled:
	case <-ctx.Done():
		return ctx.Err()
	}
	floor, err := b.bareCacheSync(ctx)
	if err != nil {
		return fmt.Errorf("the floor of the cold start: %w", err)
	}
	c := &b.res.ColdStart
	c.ReadySeconds, c.FloorSeconds, c.Writes, c.Reconciles = ready.Seconds(), floor.Seconds(), s.writes, s.reconciles
	return nil
}

// createTasks creates tasks from..to-1 of namespace with the benchmark's
// client and workers.
func (b *bench) createTasks(ctx context.Context, namespace string, from, to int, schedule string) error {
	return parallel(ctx, to-from, b.cfg.Workers, func(i int) error {
		return b.client.Create(ctx, task(namespace, from+i, schedule))
	})
}

// waitReady waits until want tasks of namespace are ready and returns when
// the last became so.
func (b *bench) waitReady(ctx context.Context, namespace string, want int, timeout time.Duration) (time.Time, error) {
	var last time.Time
	var n int
	err := poll(ctx, time.Now().Add(timeout), func() (bool, error) {
		n, last = b.obs.ReadyCount(namespace)
		return n >= want, nil
	})
	if err != nil {
		return last, fmt.Errorf("%d of %d tasks in %s ready: %w", n, want, namespace, err)
	}
	return last, nil
}

func (b *bench) createNamespace(ctx context.Context, name string) error {
	return createNamespace(ctx, b.cluster.Client, name)
}

func (b *bench) deleteNamespace(ctx context.Context, name string) error {
	return deleteNamespace(ctx, b.cluster.Client, name)
}

// createNamespace creates a namespace and waits until pods can be made in it.
func createNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, ns); err != nil {
		return err
	}
	// Pods are rejected until the namespace's default ServiceAccount exists.
	return poll(ctx, time.Now().Add(time.Minute), func() (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})
}

// deleteNamespace deletes a namespace and waits until it is gone.
func deleteNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(ctx, ns); err != nil {
		return err
	}
	return poll(ctx, time.Now().Add(15*time.Minute), func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(ns), ns)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// ignoreConflict returns nil for a conflict error, and any other error as is.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// parallel calls fn(0..n-1) from workers goroutines and returns the first
// error.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}

// poll calls done every 200 ms until it reports true, returns an error, or
// the deadline passes.
func poll(ctx context.Context, deadline time.Time, done func() (bool, error)) error {
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// growForMemory grows the cluster to MemoryTasks tasks (the convergence
// ones included) with MemoryRuns finished runs, waiting up to wait for the
// operator to have seen every run finished. The memory figure (memory) and
// the small benchmark's (smallMemory) both read the manager on it.
func (b *bench) growForMemory(ctx context.Context, wait time.Duration) error {
	// The convergence tasks count towards MemoryTasks when that suite ran.
	extra := b.cfg.MemoryTasks - b.converged
	if err := b.createNamespace(ctx, nsMemory); err != nil {
		return err
	}
	if err := b.createTasks(ctx, nsMemory, 0, extra, neverSchedule); err != nil {
		return err
	}
	if _, err := b.waitReady(ctx, nsMemory, extra, 30*time.Minute); err != nil {
		return err
	}
	// Jobs as the CronJob controller makes them, each owned by its task's
	// CronJob, but with nothing to run: completions 0 makes the Job
	// controller complete them at once, without pods. Their TaskRuns are
	// written as the operator writes them, by the benchmark acting as the
	// operator's ServiceAccount: the operator then finds every run recorded
	// (its recording speed is figure 2's), and the cluster reaches
	// MemoryRuns runs in minutes rather than the hour kwok would need to
	// simulate as many pods.
	var cronJobs []*batchv1.CronJob
	for _, ns := range []string{nsConverge, nsMemory} {
		var list batchv1.CronJobList
		if err := b.cluster.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range list.Items {
			cronJobs = append(cronJobs, &list.Items[i])
		}
	}
	if len(cronJobs) != b.cfg.MemoryTasks {
		return fmt.Errorf("%d CronJobs, want %d", len(cronJobs), b.cfg.MemoryTasks)
	}
	asOperator := rest.CopyConfig(b.cluster.Config)
	asOperator.Impersonate.UserName = harness.OperatorUser
	operatorClient, err := client.New(asOperator, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return err
	}
	base := time.Now().Truncate(time.Minute).Add(-24 * time.Hour)
	err = parallel(ctx, b.cfg.MemoryRuns, b.cfg.Workers*2, func(i int) error {
		cj := cronJobs[i%len(cronJobs)]
		n := i / len(cronJobs)
		job := testutil.JobFromCronJob(cj, base.Add(time.Duration(n)*time.Minute))
		job.Spec.Completions, job.Spec.Parallelism = ptr.To[int32](0), ptr.To[int32](0)
		if err := b.cluster.Client.Create(ctx, job); err != nil {
			return err
		}
		tr := recordedRun(cj, job, int64(n+1))
		if err := operatorClient.Create(ctx, tr); apierrors.IsAlreadyExists(err) {
			return nil // the operator was first: it records the run itself
		} else if err != nil {
			return err
		}
		finishRun(tr, job.CreationTimestamp.Time)
		// A conflict means the operator got to the run first: it finishes it
		// itself when the Job completes.
		return client.IgnoreNotFound(ignoreConflict(operatorClient.Status().Update(ctx, tr)))
	})
	if err != nil {
		return err
	}
	err = poll(ctx, time.Now().Add(wait), func() (bool, error) {
		all, finished := b.obs.RunCount()
		return all >= b.cfg.MemoryRuns && finished >= b.cfg.MemoryRuns, nil
	})
	if err != nil {
		all, finished := b.obs.RunCount()
		return fmt.Errorf("waiting for %d finished TaskRuns (have %d, %d finished): %w", b.cfg.MemoryRuns, all, finished, err)
	}
	return nil
}
