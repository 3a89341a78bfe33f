// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command bench measures platform-operator on a local kwok cluster (real
// kube-apiserver, etcd, kube-controller-manager and scheduler; kwok plays the
// kubelet) and prints its figures: convergence against a bare client doing
// the same writes, run-recording latency, memory, idle writes, cold start,
// the growth curve, and the AppDeployments' convergence, writes and canary
// analysis.
// It writes the same figures as JSON under bench/results/.
//
//	make tools && go run ./test/bench          # or: make bench
//
// Sizes and settings come from the environment: BENCH_N (tasks of the
// convergence figure, 1000), BENCH_BURST_TASKS (500), BENCH_MEMORY_TASKS
// (5000), BENCH_MEMORY_RUNS (20000), BENCH_IDLE (10m), BENCH_CURVE (the
// growth curve's task counts, 1000,2000,5000,10000), BENCH_QPS and
// BENCH_API_BURST (the manager's defaults), BENCH_WORKERS (the manager's
// default), BENCH_APPS (AppDeployments created at once, 200),
// BENCH_APP_REPLICAS (3), BENCH_CANARIES (canaries analysing at once, 100),
// BENCH_APP_IDLE (2m), BENCH_FOREIGN (foreign labelled Deployments of
// figure 8, 200; twice as many are made for its slope), BENCH_OUT
// (bench/results).
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/harness"
)

// defaultConfig is the benchmark at its full size, with the manager's
// default client settings and workers.
func defaultConfig() config {
	return config{
		Tasks:       1000,
		BurstTasks:  500,
		MemoryTasks: 5000,
		MemoryRuns:  20000,
		Idle:        10 * time.Minute,
		QPS:         200,
		Burst:       400,
		Workers:     16,
		RunFor:      2 * time.Second,
		// 1,000 tasks of about 33 KiB: about two minutes to create and
		// converge, and a heap growth far above the noise of the collector.
		MaxSizeTasks: 1000,
		Curve:        []int{1000, 2000, 5000, 10000},
		Apps:         200,
		AppReplicas:  3,
		Canaries:     100,
		AppIdle:      2 * time.Minute,
		// Two Services each: with figure 7a's 200, within kwok's /24.
		RoutedCanaries: 20,
		// The attack of issue 31 at the size its figure is stated for.
		ForeignObjects: foreignObjects,
		// Issue 35's fleet: a thousand canaries, two hundred noisy ones,
		// five intervals each way.
		AdmissionRate: 100, AdmissionRounds: 1,
		Fleet:       1000,
		FleetNoisy:  200,
		FleetWindow: 5 * fleetInterval,
	}
}

func main() {
	harness.ReapIfAsked()
	if len(os.Args) == 2 && os.Args[1] == "chart" {
		// `go run ./test/bench chart`: draw the growth curve's chart again
		// from the results already saved, measuring nothing.
		dir, err := resultsDir()
		if err == nil {
			dir, err = saveCurve(dir, nil)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		fmt.Println("chart:", dir)
		return
	}
	cfg, err := configFromEnv(defaultConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	res, err := run(context.Background(), cfg)
	if err == nil && cfg.runs(suiteCurve) {
		if dir, derr := resultsDir(); derr == nil {
			// Read before this run's results join them.
			res.EarlierCurve, _ = savedPoints(dir)
		}
		res.Curve, err = runCurve(context.Background(), cfg, res)
	}
	if err == nil && cfg.runs(suiteAppDeploy) {
		res.AppDeploy, err = runAppDeploy(context.Background(), cfg)
	}
	if err == nil && cfg.runs(suiteForeign) {
		res.Foreign, err = runForeign(context.Background(), cfg)
	}
	if err == nil && cfg.runs(suiteAdmission) {
		res.Admission, err = runAdmission(context.Background(), cfg)
	}
	if err == nil && cfg.runs(suiteFleet) {
		res.Fleet, err = runFleet(context.Background(), cfg)
	}
	if res != nil {
		printTable(os.Stdout, res)
		if path, werr := save(res); werr != nil {
			fmt.Fprintln(os.Stderr, "bench: saving results:", werr)
		} else {
			fmt.Println("results:", path)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// configFromEnv overrides cfg with the BENCH_* variables that are set.
func configFromEnv(cfg config) (config, error) {
	ints := map[string]*int{
		"BENCH_N": &cfg.Tasks, "BENCH_BURST_TASKS": &cfg.BurstTasks, "BENCH_MEMORY_TASKS": &cfg.MemoryTasks,
		"BENCH_MEMORY_RUNS": &cfg.MemoryRuns, "BENCH_API_BURST": &cfg.Burst, "BENCH_WORKERS": &cfg.Workers,
		"BENCH_MAXSIZE_TASKS": &cfg.MaxSizeTasks, "BENCH_APPS": &cfg.Apps, "BENCH_APP_REPLICAS": &cfg.AppReplicas,
		"BENCH_CANARIES": &cfg.Canaries, "BENCH_FOREIGN": &cfg.ForeignObjects, "BENCH_ROUTED": &cfg.RoutedCanaries,
		"BENCH_ADMISSION_RATE": &cfg.AdmissionRate, "BENCH_ADMISSION_ROUNDS": &cfg.AdmissionRounds,
		"BENCH_FLEET": &cfg.Fleet, "BENCH_FLEET_NOISY": &cfg.FleetNoisy,
	}
	for name, p := range ints {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			least := 1
			if name == "BENCH_MAXSIZE_TASKS" {
				least = 0 // 0 skips the figure
			}
			if err != nil || n < least {
				return cfg, fmt.Errorf("%s=%q: want a whole number of at least %d", name, v, least)
			}
			*p = n
		}
	}
	if v := os.Getenv("BENCH_SUITES"); v != "" {
		cfg.Suites = nil
		for name := range strings.SplitSeq(v, ",") {
			name = strings.TrimSpace(name)
			if !slices.Contains(suites, name) {
				return cfg, fmt.Errorf("BENCH_SUITES=%q: %q is no suite; the suites are %s", v, name,
					strings.Join(suites, ", "))
			}
			cfg.Suites = append(cfg.Suites, name)
		}
	}
	if v := os.Getenv("BENCH_CURVE"); v != "" {
		sizes, err := parseCurve(v)
		if err != nil {
			return cfg, err
		}
		cfg.Curve = sizes
	}
	if v := os.Getenv("BENCH_QPS"); v != "" {
		q, err := strconv.ParseFloat(v, 64)
		if err != nil || q <= 0 {
			return cfg, fmt.Errorf("BENCH_QPS=%q: want a positive number", v)
		}
		cfg.QPS = q
	}
	durations := map[string]*time.Duration{"BENCH_IDLE": &cfg.Idle, "BENCH_APP_IDLE": &cfg.AppIdle,
		"BENCH_FLEET_WINDOW": &cfg.FleetWindow}
	for name, p := range durations {
		if v := os.Getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return cfg, fmt.Errorf("%s=%q: want a duration such as 10m", name, v)
			}
			*p = d
		}
	}
	if cfg.MemoryTasks < cfg.Tasks {
		return cfg, fmt.Errorf("BENCH_MEMORY_TASKS (%d) must be at least BENCH_N (%d): the memory figure reuses those tasks",
			cfg.MemoryTasks, cfg.Tasks)
	}
	return cfg, nil
}

// Targets of the figures.
const (
	targetRatio    = 1.15
	targetWrites   = 3
	targetP99      = 2.0
	targetMax      = 5.0
	targetRSSMiB   = 150
	targetReadySec = 10
	// floorMargin is how near the floor a bare client reaches a figure must
	// be to count as met when it misses its target.
	floorMargin = 1.1
)

// ratio is a/b, 0 when b is.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// printTable writes the figures as one table.
func printTable(w io.Writer, r *results) {
	m := r.Machine
	fmt.Fprintf(w, "\nplatform-operator benchmark, %s\n", r.Started.Format(time.RFC3339))
	fmt.Fprintf(w, "machine: %d cores (%s), %.1f GiB, %s, %s; "+
		"manager --kube-api-qps=%g --kube-api-burst=%d, %d workers per controller\n\n",
		m.Cores, m.CPU, m.MemoryGiB, m.Kernel, m.Go, r.Config.QPS, r.Config.Burst, r.Config.Workers)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tfigure\tmeasured\ttarget\tmet")
	rows := map[string]func(io.Writer, *results){
		suiteConvergence: convergenceRows, suiteRecording: recordingRows, suiteMemory: memoryRows,
		suiteMaxSize: maxSizeRows, suiteIdle: idleRows, suiteColdStart: coldStartRows, suiteCurve: curveRows,
		suiteAppDeploy: appDeployRows, suiteForeign: foreignRows, suiteAdmission: admissionRows,
		suiteFleet: fleetRows,
	}
	// The rows in the figures' order; the size limits are figure 3b.
	order := []string{suiteConvergence, suiteRecording, suiteMemory, suiteMaxSize, suiteIdle, suiteColdStart, suiteCurve,
		suiteAppDeploy, suiteForeign, suiteAdmission, suiteFleet}
	for _, suite := range order {
		if r.Config.runs(suite) || suite == suiteMemory && r.Memory.Tasks > 0 { // the curve's, see runCurve
			rows[suite](tw, r)
		} else {
			fmt.Fprintf(tw, "-\t%s\tnot run (BENCH_SUITES)\t-\t-\n", suite)
		}
	}
	_ = tw.Flush()
	switch {
	case !r.RunsChecked:
	case len(r.Duplicates) == 0:
		fmt.Fprintln(w, "\nevery Job has exactly one TaskRun")
	default:
		fmt.Fprintf(w, "\n%d Jobs without exactly one TaskRun, e.g. %s\n", len(r.Duplicates), r.Duplicates[0])
	}
}

// seconds lists times in seconds: "8.1s, 9.0s, 10.0s".
func seconds(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.1fs", x)
	}
	return strings.Join(parts, ", ")
}

// convergenceRows are figure 1's rows: convergence and writes per task.
func convergenceRows(tw io.Writer, r *results) {
	c := r.Convergence
	nearFloor := c.FloorSeconds > 0 && c.FloorRatio <= floorMargin
	row(tw, "1", fmt.Sprintf("convergence, %d tasks", c.Tasks),
		fmt.Sprintf("operator %.1fs (median of %s; the last all created at %.1fs) / bare client %.1fs (median of %s) = %.2f",
			c.OperatorSeconds, seconds(c.OperatorRuns), c.CreatedSeconds, c.BaselineSeconds, seconds(c.BaselineRuns),
			c.Ratio),
		fmt.Sprintf("<= %.2f or <= %.1f x floor", targetRatio, floorMargin),
		c.Tasks > 0 && (c.Ratio <= targetRatio || nearFloor))
	row(tw, "", "floor: bare client through the operator's admission",
		fmt.Sprintf("%.1fs (median of %s; standby replica's CPU %.1fs in all); operator / floor = %.2f",
			c.FloorSeconds, seconds(c.FloorRuns), c.StandbyCPUSeconds, c.FloorRatio),
		fmt.Sprintf("<= %.1f", floorMargin), nearFloor)
	row(tw, "", "manager writes per new task",
		fmt.Sprintf("%.2f (%s); beside them %.2f access reviews", c.ManagerWritesPer, writesBy(c.WritesPerTaskBy),
			c.AccessReviewsPer),
		fmt.Sprintf("<= %d", targetWrites), c.Tasks > 0 && c.ManagerWritesPer <= targetWrites)
	passesRow(tw, "convergence", c.Diagnosis)
	requestsRow(tw, "convergence", c.Diagnosis)
}

// recordingRows are figure 2's rows: recording under a burst.
func recordingRows(tw io.Writer, r *results) {
	rec := r.Recording
	lat := func(s stats) string { return fmt.Sprintf("p50 %.2fs  p99 %.2fs  max %.2fs", s.P50, s.P99, s.Max) }
	ok := func(s stats) bool { return s.Count > 0 && s.P99 <= targetP99 && s.Max <= targetMax }
	row(tw, "2", fmt.Sprintf("Job created -> TaskRun created, %d runs", rec.Runs), lat(rec.JobToRun),
		fmt.Sprintf("p99 <= %gs, max <= %gs", targetP99, targetMax), ok(rec.JobToRun))
	row(tw, "", "Job complete -> TaskRun Succeeded", lat(rec.CompletionToSucceeded),
		fmt.Sprintf("p99 <= %gs, max <= %gs", targetP99, targetMax), ok(rec.CompletionToSucceeded))
	fmt.Fprintf(tw, "\tCronJob controller skew (not ours)\t%s\t-\t-\n", lat(rec.CronJobSkew))
	bd := rec.Burst
	passesRow(tw, "burst", bd)
	fmt.Fprintf(tw, "\tburst: runs recorded > %s after their Job\t%d (their Jobs' skew: %s)\t-\t-\n",
		lateRun, bd.LateRuns, lat(bd.LateJobSkew))
	requestsRow(tw, "burst", bd)
}

// passesRow is where a figure's time went in the ScheduleTask controller:
// its passes, its writes and its queue's wait.
func passesRow(tw io.Writer, what string, d burstDiagnosis) {
	fmt.Fprintf(tw, "\t%s: ScheduleTask passes, writes, queue wait\t"+
		"%.0f passes (%.0f errors, mean %.0f ms; TaskRun passes %.0f ms), %.0f manager writes (%s); "+
		"queue wait p50 <= %.3gs, p99 <= %.3gs\t-\t-\n",
		what, d.TaskPasses, d.TaskPassErrors, d.PassSeconds*1000, d.RunPassSeconds*1000, d.Writes, writeCounts(d.WritesBy),
		d.QueueWaitP50UpTo, d.QueueWaitP99UpTo)
}

// requestsRow is where a figure's time went in the manager's API requests
// and CPU.
func requestsRow(tw io.Writer, what string, d burstDiagnosis) {
	fmt.Fprintf(tw, "\t%s: API requests, client limiter, CPU\t"+
		"%.0f requests: limiter wait mean %.3fs (p99 <= %.3gs), API answer mean %.3fs; "+
		"manager CPU %.1fs in %.0fs (%.0f%% of a core)\t-\t-\n",
		what, d.Requests, d.LimiterWait, d.LimiterWaitP99UpTo, d.APISeconds, d.CPUSeconds, d.Seconds,
		100*ratio(d.CPUSeconds, d.Seconds))
}

// memoryRows are figure 3's row.
func memoryRows(tw io.Writer, r *results) {
	mem := r.Memory
	// A memory target is met by the figure, or by the same run showing it
	// within 10 % of what a bare client keeping the same objects takes.
	nearFloor := mem.FloorRSSMiB > 0 && mem.RSSMiB <= mem.FloorRSSMiB*floorMargin
	row(tw, "3", fmt.Sprintf("memory, %d tasks and %d runs", mem.Tasks, mem.Runs),
		fmt.Sprintf("RSS %.0f MiB (peak %.0f MiB), Go heap in use %.0f MiB; bare client keeping the same objects "+
			"%.0f MiB RSS, %.0f MiB live heap (= %.2f); %d Jobs left in the cache; %.0f events sent, %.0f lost",
			mem.RSSMiB, mem.PeakRSSMiB, mem.HeapMiB, mem.FloorRSSMiB, mem.FloorHeapMiB,
			ratio(mem.RSSMiB, mem.FloorRSSMiB), mem.JobsInCache, mem.EventsSent, mem.EventsLost),
		fmt.Sprintf("RSS <= %d MiB or <= %.1f x bare", targetRSSMiB, floorMargin),
		mem.Tasks > 0 && mem.EventsLost == 0 && (mem.RSSMiB <= targetRSSMiB || nearFloor))
	if idle := r.Idle; idle.RSSMiB > 0 && r.Config.runs(suiteColdStart) {
		idleFor := time.Duration(idle.Seconds * float64(time.Second)).Round(time.Second)
		row(tw, "3d", "the same objects at rest: restarted, then idle "+idleFor.String(),
			fmt.Sprintf("RSS %.0f MiB, Go heap in use %.0f MiB (no event sent in the window)",
				idle.RSSMiB, idle.HeapMiB),
			fmt.Sprintf("RSS <= %d MiB", targetRSSMiB), idle.RSSMiB <= targetRSSMiB)
	}
	if mem.LiveHeapMiB > 0 {
		parts := make([]string, 0, len(mem.Objects))
		for _, o := range mem.Objects {
			parts = append(parts, fmt.Sprintf("%s %.0f B x %d", o.Kind, o.Bytes, o.Objects))
		}
		fmt.Fprintf(tw, "3a\tlive heap by cached kind\t%.0f MiB live: %s; the rest %.0f MiB\t-\t-\n",
			mem.LiveHeapMiB, strings.Join(parts, ", "), mem.RestMiB)
	}
	if b := mem.RSS; b.FileMiB > 0 {
		fmt.Fprintf(tw, "3c\twhere the RSS goes\tprogram file %.0f MiB (bare client's %.0f); heap in use %.0f MiB "+
			"(next collection at %.0f), free heap not yet returned %.0f, stacks %.0f, runtime %.0f, other %.0f\t-\t-\n",
			b.FileMiB, mem.FloorRSSFileMiB, b.HeapInuseMiB, b.HeapGoalMiB, b.HeapFreeMiB, b.StacksMiB, b.RuntimeMiB, b.OtherMiB)
	}
}

// maxSizeRows are figure 3b's row, when tasks at the size limits were added.
func maxSizeRows(tw io.Writer, r *results) {
	if ms := r.MaxSize; ms.Tasks > 0 {
		fmt.Fprintf(tw, "3b\tmemory, +%d tasks at the size limits\t"+
			"RSS %.0f -> %.0f MiB, live heap %.0f -> %.0f MiB (%.0f KiB per task)\t-\t-\n",
			ms.Tasks, ms.RSSBeforeMiB, ms.RSSAfterMiB, ms.HeapBeforeMiB, ms.HeapAfterMiB, ms.HeapPerTaskKiB)
	}
}

// idleRows are figure 4's row.
func idleRows(tw io.Writer, r *results) {
	idle := r.Idle
	idleFor := time.Duration(idle.Seconds * float64(time.Second)).Round(time.Second)
	row(tw, "4", fmt.Sprintf("idle writes, %s with full resyncs", idleFor),
		fmt.Sprintf("%.0f writes (%.0f reconciles)", idle.Writes, idle.Reconciles), "0", idle.Seconds > 0 && idle.Writes == 0)
}

// coldStartRows are figure 5's row.
func coldStartRows(tw io.Writer, r *results) {
	cold := r.ColdStart
	// A time target is met by the figure, or by the same run showing it
	// within 10 % of what a bare client takes for the same reads.
	nearFloor := cold.FloorSeconds > 0 && cold.ReadySeconds <= cold.FloorSeconds*floorMargin
	row(tw, "5", "cold start",
		fmt.Sprintf("ready in %.1fs (bare client's cache sync %.1fs = %.2f), %.0f writes (%.0f reconciles)",
			cold.ReadySeconds, cold.FloorSeconds, ratio(cold.ReadySeconds, cold.FloorSeconds), cold.Writes, cold.Reconciles),
		fmt.Sprintf("<= %ds or <= %.1f x bare, 0 writes", targetReadySec, floorMargin),
		cold.Reconciles > 0 && (cold.ReadySeconds <= targetReadySec || nearFloor) && cold.Writes == 0)
}

// writeCounts lists writes by what was written, most first: "2000 create
// taskruns, 1500 update taskruns/status".
func writeCounts(by map[string]float64) string { return listWrites(by, "%.0f %s") }

// writesBy lists writes by what was written, most first: "1.00 create
// cronjobs, 1.00 update scheduletasks/status".
func writesBy(by map[string]float64) string { return listWrites(by, "%.2f %s") }

// listWrites lists by's counts, most first, each in format (count, what).
func listWrites(by map[string]float64, format string) string {
	whats := slices.Collect(maps.Keys(by))
	slices.SortFunc(whats, func(a, b string) int {
		if c := cmp.Compare(by[b], by[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(whats))
	for i, w := range whats {
		parts[i] = fmt.Sprintf(format, by[w], w)
	}
	return strings.Join(parts, ", ")
}

func row(w io.Writer, n, figure, measured, target string, met bool) {
	verdict := "no"
	if met {
		verdict = "yes"
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", n, figure, measured, target, verdict)
}

// save writes the results as JSON under BENCH_OUT (bench/results).
func save(r *results) (string, error) {
	dir, err := resultsDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	base := filepath.Join(dir, r.Started.Format("20060102T150405Z"))
	if len(r.HeapProfile) > 0 {
		// Read with: go tool pprof -sample_index=inuse_space <file>
		if err := os.WriteFile(base+".heap.pb.gz", r.HeapProfile, 0o644); err != nil {
			return "", err
		}
	}
	if len(r.ColdStartProfile) > 0 {
		// Read with: go tool pprof -top <file>
		if err := os.WriteFile(base+".coldstart-cpu.pb.gz", r.ColdStartProfile, 0o644); err != nil {
			return "", err
		}
	}
	if len(r.BurstProfile) > 0 {
		// Read with: go tool pprof -top <file>
		if err := os.WriteFile(base+".burst-cpu.pb.gz", r.BurstProfile, 0o644); err != nil {
			return "", err
		}
	}
	if a := r.AppDeploy; a != nil && len(a.ConvergenceProfile) > 0 {
		// Read with: go tool pprof -top <file>
		if err := os.WriteFile(base+".apps-cpu.pb.gz", a.ConvergenceProfile, 0o644); err != nil {
			return "", err
		}
	}
	if a := r.Admission; a != nil && len(a.Profile) > 0 && len(a.FloorProfile) > 0 {
		// Read with: go tool pprof -top -diff_base <floor> <operator>
		for name, p := range map[string][]byte{"admission": a.Profile, "admission-floor": a.FloorProfile,
			"admission-apiserver": a.APIServerProfile, "admission-apiserver-floor": a.APIServerFloorProfile} {
			if len(p) == 0 {
				continue
			}
			if err := os.WriteFile(base+"."+name+"-cpu.pb.gz", p, 0o644); err != nil {
				return "", err
			}
		}
	}
	if f := r.Foreign; f != nil && len(f.HeapAfter) > 0 {
		// Read with: go tool pprof -sample_index=inuse_space -diff_base <before> <after>
		for name, p := range map[string][]byte{"before": f.HeapBefore, "after": f.HeapAfter} {
			if err := os.WriteFile(base+".foreign-"+name+".heap.pb.gz", p, 0o644); err != nil {
				return "", err
			}
		}
		// The slopes' profiles, every allocation recorded: diff two
		// counts of the manager, or the manager and the floor at one.
		for name, p := range f.SlopeHeaps {
			if err := os.WriteFile(base+".foreign-slope-"+name+".heap.pb.gz", p, 0o644); err != nil {
				return "", err
			}
		}
	}
	if r.Config.runs(suiteCurve) {
		// Read in a browser, or in docs/performance.md.
		if _, err := saveCurve(dir, r.Curve); err != nil {
			return "", fmt.Errorf("the growth curve's chart: %w", err)
		}
	}
	return base + ".json", os.WriteFile(base+".json", append(data, '\n'), 0o644)
}

// resultsDir is where results are saved: BENCH_OUT, or bench/results.
func resultsDir() (string, error) {
	if dir := os.Getenv("BENCH_OUT"); dir != "" {
		return dir, nil
	}
	repo, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(repo, "bench", "results"), nil
}

// machine describes where the figures were measured.
type machine struct {
	Cores     int     `json:"cores"`
	CPU       string  `json:"cpu"`
	MemoryGiB float64 `json:"memoryGiB"`
	Kernel    string  `json:"kernel"`
	Go        string  `json:"go"`
}

func describeMachine() machine {
	m := machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(data), "MemTotal: %f kB", &kb); err == nil {
			m.MemoryGiB = kb / (1 << 20)
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(data))
	}
	return m
}
