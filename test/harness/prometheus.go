// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr/funcr"
	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/example/platform-operator/internal/testutil/localwebhook"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/trafficsim"
)

const (
	// PrometheusInterval is how often the test Prometheus scrapes and
	// evaluates: often enough that a rate over a few seconds has samples,
	// so a test waits seconds, not minutes, for what it asserts.
	PrometheusInterval = time.Second

	// TrafficSimJob is the job name of TrafficSim.ScrapeTarget.
	TrafficSimJob = "trafficsim"

	// prometheusReadyTimeout bounds a start: opening the TSDB and replaying
	// its write-ahead log after a restart take a few seconds at most.
	prometheusReadyTimeout = time.Minute
	// prometheusStopTimeout bounds a graceful stop before SIGKILL.
	prometheusStopTimeout = 30 * time.Second
)

// ScrapeTarget is one scrape job of the Prometheus StartPrometheus runs.
type ScrapeTarget struct {
	// Job is the job name, which becomes the job label of its series.
	Job string
	// Address is the target's host:port; its metrics are at /metrics.
	Address string
	// Scheme is http (when empty) or https.
	Scheme string
	// BearerToken, when set, is sent as "Authorization: Bearer", as a
	// ServiceAccount token is to the manager's metrics endpoint.
	BearerToken string
	// InsecureSkipVerify accepts any serving certificate, as the manager's
	// self-signed one of a default install.
	InsecureSkipVerify bool
	// Labels are the target's labels, as Kubernetes service discovery
	// gives a pod's (its namespace): they go on every series scraped from
	// it, and a series' own label of the same name is kept as exported_NAME
	// unless HonorLabels.
	Labels map[string]string
	// HonorLabels keeps the target's labels where they clash with those of
	// the scrape. A target that exports other pods' series (the traffic
	// simulator, with its namespace label) needs it, as a Pushgateway does.
	HonorLabels bool
}

// Prometheus is a Prometheus server, bin/prometheus as `make tools` builds
// it, scraping ScrapeTargets every PrometheusInterval. It can be stopped and
// started again on the same port and data, as a Prometheus that restarts
// mid-analysis would be.
type Prometheus struct {
	// Dir holds the configuration, bearer tokens, data (data/) and the log.
	Dir string
	// LogPath is the file the process's output goes to, across restarts.
	LogPath string

	port int
	bin  string
	args []string
	api  promv1.API

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// PrometheusOptions say what the Prometheus StartPrometheusWith runs
// scrapes and evaluates.
type PrometheusOptions struct {
	// Targets are the scrape jobs.
	Targets []ScrapeTarget
	// RuleFiles are rule files (alerting and recording rules), by absolute
	// path, evaluated every PrometheusInterval.
	RuleFiles []string
}

// StartPrometheus writes a configuration that scrapes targets into dir,
// starts Prometheus on a free port with its data in dir and returns once
// Prometheus reports ready. Stop it when done (t.Cleanup(p.Stop)); it also
// dies with the process that started it.
func StartPrometheus(ctx context.Context, dir string, targets ...ScrapeTarget) (*Prometheus, error) {
	return StartPrometheusWith(ctx, dir, PrometheusOptions{Targets: targets})
}

// StartPrometheusWith is StartPrometheus with rule files too.
func StartPrometheusWith(ctx context.Context, dir string, opts PrometheusOptions) (*Prometheus, error) {
	repo, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	// Always the pinned build in bin/, which the Makefile also puts first on
	// PATH, rather than whichever prometheus a PATH lookup would find.
	bin := filepath.Join(repo, "bin", "prometheus")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s is missing: run `make tools`, which builds it from hack/tools/prometheus: %w", bin, err)
	}
	config, err := prometheusConfig(dir, opts)
	if err != nil {
		return nil, err
	}
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p := &Prometheus{
		Dir:     dir,
		LogPath: filepath.Join(dir, "prometheus.log"),
		port:    port,
		bin:     bin,
		args: []string{
			"--config.file=" + configPath,
			"--storage.tsdb.path=" + filepath.Join(dir, "data"),
			"--web.listen-address=" + net.JoinHostPort(localwebhook.Host, strconv.Itoa(port)),
		},
	}
	client, err := promapi.NewClient(promapi.Config{Address: p.Address()})
	if err != nil {
		return nil, err
	}
	p.api = promv1.NewAPI(client)
	if err := p.Start(ctx); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// prometheusConfig returns the configuration that scrapes targets, writing
// each bearer token to a file in dir: Prometheus reads a token from a file
// (credentials_file), which keeps it out of the configuration and its log.
func prometheusConfig(dir string, opts PrometheusOptions) ([]byte, error) {
	type staticConfig struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels,omitempty"`
	}
	type tlsConfig struct {
		InsecureSkipVerify bool `json:"insecure_skip_verify"`
	}
	type authorization struct {
		CredentialsFile string `json:"credentials_file"`
	}
	type scrapeConfig struct {
		JobName       string         `json:"job_name"`
		HonorLabels   bool           `json:"honor_labels,omitempty"`
		Scheme        string         `json:"scheme,omitempty"`
		TLSConfig     *tlsConfig     `json:"tls_config,omitempty"`
		Authorization *authorization `json:"authorization,omitempty"`
		StaticConfigs []staticConfig `json:"static_configs"`
	}
	type globalConfig struct {
		ScrapeInterval     string `json:"scrape_interval"`
		EvaluationInterval string `json:"evaluation_interval"`
	}
	config := struct {
		Global        globalConfig   `json:"global"`
		RuleFiles     []string       `json:"rule_files,omitempty"`
		ScrapeConfigs []scrapeConfig `json:"scrape_configs"`
	}{Global: globalConfig{ScrapeInterval: PrometheusInterval.String(), EvaluationInterval: PrometheusInterval.String()},
		RuleFiles: opts.RuleFiles}

	jobs := map[string]bool{}
	for _, t := range opts.Targets {
		if t.Job == "" || jobs[t.Job] {
			return nil, fmt.Errorf("scrape target %s: every target needs a job name of its own, not %q", t.Address, t.Job)
		}
		jobs[t.Job] = true
		sc := scrapeConfig{
			JobName:       t.Job,
			HonorLabels:   t.HonorLabels,
			Scheme:        t.Scheme,
			StaticConfigs: []staticConfig{{Targets: []string{t.Address}, Labels: t.Labels}},
		}
		if t.InsecureSkipVerify {
			sc.TLSConfig = &tlsConfig{InsecureSkipVerify: true}
		}
		if t.BearerToken != "" {
			tokenFile := filepath.Join(dir, t.Job+".token")
			if err := os.WriteFile(tokenFile, []byte(t.BearerToken), 0o600); err != nil {
				return nil, err
			}
			sc.Authorization = &authorization{CredentialsFile: tokenFile}
		}
		config.ScrapeConfigs = append(config.ScrapeConfigs, sc)
	}
	return yaml.Marshal(config)
}

// Start starts Prometheus and returns once it reports ready. StartPrometheus
// calls it first; after Stop, it starts Prometheus again on the same port
// and data, so what it scraped before is still there.
func (p *Prometheus) Start(ctx context.Context) error {
	p.mu.Lock()
	if p.running() {
		p.mu.Unlock()
		return errors.New("prometheus is already running")
	}
	logFile, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	cmd := exec.Command(p.bin, p.args...)
	// It dies with the process that started it, even one killed without a
	// chance to call Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		p.mu.Unlock()
		return fmt.Errorf("start %s: %w", p.bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logFile.Close(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()

	started := time.Now()
	deadline := time.NewTimer(prometheusReadyTimeout)
	defer deadline.Stop()
	for !p.ready(ctx) {
		select {
		case <-exited:
			return fmt.Errorf("prometheus exited before it was ready; its log: %s\n%s",
				p.LogPath, tail(p.LogPath))
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("prometheus not ready after %s; its log: %s\n%s",
				prometheusReadyTimeout, p.LogPath, tail(p.LogPath))
		case <-time.After(100 * time.Millisecond):
		}
	}
	Logf("prometheus at %s is ready after %s (log %s)",
		p.Address(), time.Since(started).Round(time.Millisecond), p.LogPath)
	return nil
}

// running reports whether the process runs. The caller holds p.mu.
func (p *Prometheus) running() bool {
	if p.exited == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// ready asks Prometheus's /-/ready, which answers 200 once the TSDB is open
// and the configuration loaded.
func (p *Prometheus) ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Address()+"/-/ready", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Stop stops Prometheus gracefully (SIGTERM, so that it closes its TSDB
// cleanly for the next Start), killing it after 30 s. It does nothing when
// Prometheus is not running.
func (p *Prometheus) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(prometheusStopTimeout):
		Logf("prometheus did not stop within %s of SIGTERM; killing it", prometheusStopTimeout)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// Address is the URL of Prometheus's web and API endpoints,
// http://127.0.0.1:PORT: the form the manager's --prometheus-address takes.
func (p *Prometheus) Address() string {
	return "http://" + net.JoinHostPort(localwebhook.Host, strconv.Itoa(p.port))
}

// API returns a client of Prometheus's HTTP API, for what Query and
// QueryValue do not cover (label values, range queries, a query at a past
// time).
func (p *Prometheus) API() promv1.API {
	return p.api
}

// Query evaluates an instant query now and returns its samples; a query
// whose result is not an instant vector is an error.
func (p *Prometheus) Query(ctx context.Context, promql string) (model.Vector, error) {
	v, _, err := p.api.Query(ctx, promql, time.Now())
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", promql, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s: a %s, not an instant vector: %s", promql, v.Type(), v)
	}
	return vec, nil
}

// QueryValue evaluates an instant query that should answer one number (an
// aggregation, a ratio) and returns it; no sample or several are an error.
func (p *Prometheus) QueryValue(ctx context.Context, promql string) (float64, error) {
	vec, err := p.Query(ctx, promql)
	if err != nil {
		return 0, err
	}
	if len(vec) != 1 {
		return 0, fmt.Errorf("query %s: %d samples, want 1: %s", promql, len(vec), vec)
	}
	return float64(vec[0].Value), nil
}

// TrafficSim is the traffic simulator (package trafficsim) running in this
// process: it serves request metrics for the AppDeployment pods of a
// cluster, whose kwok pods serve none.
type TrafficSim struct {
	// Sim is the simulator, for a test that looks at its groups directly.
	Sim *trafficsim.Simulator

	addr   string
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// StartTrafficSim starts the simulator with its default rate and tick,
// watching pods through cfg, and returns once it serves. It runs until ctx
// ends or Stop is called; its log lines (one per change of a group of pods)
// go through Logf.
func StartTrafficSim(ctx context.Context, cfg *rest.Config) (*TrafficSim, error) {
	log := funcr.New(func(_, args string) { Logf("trafficsim: %s", args) },
		funcr.Options{LogInfoLevel: ptr.To("")})
	sim, err := trafficsim.New(trafficsim.Options{Log: log})
	if err != nil {
		return nil, err
	}
	// Port 0 rather than FreePort: the listener is this process's own, so
	// it can hold the port it is given instead of hoping it stays free.
	l, err := net.Listen("tcp", net.JoinHostPort(localwebhook.Host, "0"))
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	t := &TrafficSim{Sim: sim, addr: l.Addr().String(), cancel: cancel, done: make(chan struct{})}
	go func() {
		t.err = sim.Serve(runCtx, cfg, l)
		close(t.done)
	}()
	select {
	case <-sim.Ready():
		Logf("traffic simulator serves http://%s%s", t.addr, trafficsim.MetricsPath)
		return t, nil
	case <-t.done:
		cancel()
		return nil, fmt.Errorf("traffic simulator stopped before it served: %w", errors.Join(t.err, ctx.Err()))
	case <-time.After(time.Minute):
		t.Stop()
		return nil, errors.New("traffic simulator: its pod cache did not sync within 1m")
	}
}

// Address is the simulator's host:port, which serves /metrics.
func (t *TrafficSim) Address() string {
	return t.addr
}

// ScrapeTarget is the simulator as a Prometheus scrape job: job
// TrafficSimJob, with honor_labels, so its namespace label is kept.
func (t *TrafficSim) ScrapeTarget() ScrapeTarget {
	return ScrapeTarget{Job: TrafficSimJob, Address: t.addr, HonorLabels: true}
}

// Stop stops the simulator and waits until it no longer serves.
func (t *TrafficSim) Stop() {
	t.cancel()
	<-t.done
}
