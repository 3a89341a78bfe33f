// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package harness runs the project against a whole simulated cluster: a kwok
// cluster from hack/kwok/cluster.sh (real kube-apiserver, etcd,
// kube-controller-manager and scheduler; kwok plays the kubelet) and the
// operator as manager processes built from ./cmd. The e2e tests, the fault
// tests and the benchmark all stand on it, so they run on the same kind of
// cluster a developer gets from `make run`.
package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

const (
	// clusterScript is the script, relative to the repository root, that
	// creates and deletes kwok clusters.
	clusterScript = "hack/kwok/cluster.sh"

	// scriptTimeout bounds one call of the cluster script. Creating a cluster
	// takes a few seconds; kwokctl's own --timeout is 5m.
	scriptTimeout = 6 * time.Minute
)

// Cluster is a kwok cluster managed through the cluster script.
type Cluster struct {
	// Name is the kwok cluster's name; Repo the repository root.
	Name, Repo string
	// Kubeconfig is the path of the cluster's admin kubeconfig.
	Kubeconfig string
	// Config and Client reach the cluster as its admin (no cache); the
	// Client retries a write that timed out under load (see retrying).
	Config *rest.Config
	Client client.Client
	// Options say how the cluster is created.
	Options ClusterOptions

	// watch reports a component that exits unasked; nil before Up.
	watch *watchdog
	// reserved holds the ports of the components StopComponent stopped
	// until StartComponents starts them again (see reservePorts).
	reservedMu sync.Mutex
	reserved   []net.Listener
}

// ClusterOptions say how a cluster is created.
type ClusterOptions struct {
	// Nodes is the number of fake nodes; the cluster script's default (2)
	// when zero.
	Nodes int
	// KwokctlArgs are extra `kwokctl create cluster` flags, such as
	// --disable-qps-limits.
	KwokctlArgs []string
	// NoCRDs leaves the project's CRDs out, for a test that installs them
	// itself (Helm must own the CRDs it installs).
	NoCRDs bool
}

// NewCluster returns the cluster called name, not yet created, for the
// repository that holds the calling test or program.
func NewCluster(name string) (*Cluster, error) {
	repo, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	return &Cluster{Name: name, Repo: repo}, nil
}

// Up creates the cluster, connects a client to it and installs the CRDs.
func (c *Cluster) Up(ctx context.Context) error {
	queued := time.Now()
	unlock, err := lockClusterCreation(ctx)
	if err != nil {
		return fmt.Errorf("creating kwok cluster %s: %w", c.Name, err)
	}
	Logf("creating kwok cluster %s (after %s waiting for another cluster's start)",
		c.Name, time.Since(queued).Round(time.Millisecond))
	start := time.Now()
	out, err := c.create(ctx)
	unlock()
	if err != nil {
		return err
	}
	c.Kubeconfig = strings.TrimSpace(out)
	Logf("cluster %s is ready after %s; kubeconfig: %s", c.Name, time.Since(start).Round(time.Millisecond), c.Kubeconfig)
	if c.watch == nil {
		c.watch = startWatchdog(c.Name, c.Kubeconfig)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %s: %w", c.Kubeconfig, err)
	}
	// The tests' own client must not be what limits them.
	cfg.QPS, cfg.Burst = 500, 1000
	cl, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return fmt.Errorf("creating client for cluster %s: %w", c.Name, err)
	}
	c.Client = retrying{cl}
	c.Config = cfg
	if c.Options.NoCRDs {
		return nil
	}
	crds := filepath.Join(c.Repo, "config", "crd", "bases")
	if err := c.Kubectl(ctx, nil, "apply", "--server-side", "-f", crds); err != nil {
		return fmt.Errorf("installing CRDs into cluster %s: %w", c.Name, err)
	}
	// The Gateway API's, as make run installs them, for weighted canaries
	// and the traffic simulator's gateway.
	gateway, err := testenv.GatewayAPICRDs(c.Repo)
	if err != nil {
		return err
	}
	for _, f := range gateway {
		if err := c.Kubectl(ctx, nil, "apply", "--server-side", "-f", f); err != nil {
			return fmt.Errorf("installing the Gateway API CRDs into cluster %s: %w", c.Name, err)
		}
	}
	if err := WaitEstablished(ctx, c.Client, gatewayv1.GroupName, time.Minute); err != nil {
		return err
	}
	return WaitEstablished(ctx, c.Client, platformv1.GroupVersion.Group, time.Minute)
}

// WaitEstablished waits until every CRD of group is Established. kubectl
// wait --for condition=Established is no help here: on a CRD whose status
// has no conditions yet (a large one, just applied) it fails at once with
// ".status.conditions accessor error" instead of waiting.
func WaitEstablished(ctx context.Context, c client.Client, group string, timeout time.Duration) error {
	var pending []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var list apiextensionsv1.CustomResourceDefinitionList
		if err := c.List(ctx, &list); err != nil {
			return false, nil //nolint:nilerr // the API server may be busy: ask again
		}
		pending = pending[:0]
		for i := range list.Items {
			crd := &list.Items[i]
			if crd.Spec.Group == group && !established(crd) {
				pending = append(pending, crd.Name)
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("CRDs not Established after %s: %v: %w", timeout, pending, err)
	}
	return nil
}

// established reports whether a CRD's Established condition is True.
func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// Down deletes the cluster. It uses a fresh context: it must run even after a
// signal or a failed setup.
func (c *Cluster) Down() error {
	if c.watch != nil {
		c.watch.stop()
		c.watch = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	_, err := c.script(ctx, "down", c.Name)
	return err
}

// StopComponent kills one of the cluster's components (kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok-controller, etcd) with
// SIGKILL, as a crash or a lost control-plane node would (a graceful stop
// waits up to a minute for open requests), and returns once it is gone.
// PauseComponent freezes one of the cluster's components (SIGSTOP) for d and
// lets it go on (SIGCONT), as a process starved of CPU or swapped out would
// be: it keeps its connections and state, and answers nothing meanwhile.
func (c *Cluster) PauseComponent(ctx context.Context, name string, d time.Duration) error {
	pid, err := componentPID(filepath.Dir(c.Kubeconfig), name)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("pausing %s (pid %d): %w", name, pid, err)
	}
	Logf("%s of cluster %s paused for %s", name, c.Name, d)
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		return fmt.Errorf("resuming %s (pid %d): %w", name, pid, err)
	}
	return ctx.Err()
}

// componentPID returns the pid kwokctl recorded for a component of the
// cluster whose directory is dir.
func componentPID(dir, name string) (int, error) {
	pidFile := filepath.Join(dir, "pids", name+".pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, fmt.Errorf("reading the pid of %s: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s holds no pid: %q", pidFile, data)
	}
	return pid, nil
}

// StartComponents starts it again.
func (c *Cluster) StopComponent(ctx context.Context, name string) error {
	pid, err := componentPID(filepath.Dir(c.Kubeconfig), name)
	if err != nil {
		return err
	}
	if c.watch != nil {
		c.watch.stopping(name)
	}
	var ports []int
	if name != "kube-apiserver" && name != "etcd" {
		// Not the ports others connect to: a listener that never answers
		// would make their connections hang instead of being refused.
		ports = componentPorts(pid)
	}
	stopped := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("stopping %s (pid %d): %w", name, pid, err)
	}
	for syscall.Kill(pid, 0) == nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	c.reservePorts(ports)
	Logf("%s of cluster %s stopped after %s", name, c.Name, time.Since(stopped).Round(time.Millisecond))
	return nil
}

// componentPorts are the ports a component's command line names
// (--secure-port=N, --port=N and the like), read before it is stopped.
func componentPorts(pid int) []int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	var ports []int
	for arg := range strings.SplitSeq(string(data), "\x00") {
		flag, value, ok := strings.Cut(arg, "=")
		if !ok || !strings.HasPrefix(flag, "--") || !strings.HasSuffix(flag, "port") {
			continue
		}
		if n, err := strconv.Atoi(value); err == nil && n > 0 {
			ports = append(ports, n)
		}
	}
	return ports
}

// reservePorts listens on ports until StartComponents: kwokctl gives a
// cluster created meanwhile ports no process listens on, and would give
// it a stopped component's, which that component then cannot bind when
// started again ("address already in use").
func (c *Cluster) reservePorts(ports []int) {
	c.reservedMu.Lock()
	defer c.reservedMu.Unlock()
	for _, p := range ports {
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			c.reserved = append(c.reserved, l)
		}
	}
}

// releasePorts gives the reserved ports back, for the components to bind.
func (c *Cluster) releasePorts() {
	c.reservedMu.Lock()
	defer c.reservedMu.Unlock()
	for _, l := range c.reserved {
		_ = l.Close()
	}
	c.reserved = nil
}

// StartComponents starts the cluster's components that are not running
// (`up` on an existing cluster does that) and returns once the API server
// serves.
func (c *Cluster) StartComponents(ctx context.Context) error {
	c.releasePorts()
	if _, err := c.script(ctx, append([]string{"up", c.Name}, c.Options.KwokctlArgs...)...); err != nil {
		return fmt.Errorf("starting the stopped components of cluster %s: %w", c.Name, err)
	}
	if c.watch != nil {
		c.watch.started()
	}
	return nil
}

// RestartAPIServer stops the cluster's kube-apiserver (StopComponent) and
// starts it again, returning once it serves. It returns how long the API
// server was away.
func (c *Cluster) RestartAPIServer(ctx context.Context) (time.Duration, error) {
	stopped := time.Now()
	if err := c.StopComponent(ctx, "kube-apiserver"); err != nil {
		return 0, err
	}
	if err := c.StartComponents(ctx); err != nil {
		return 0, err
	}
	down := time.Since(stopped)
	Logf("kube-apiserver of cluster %s serves again after %s", c.Name, down.Round(time.Millisecond))
	return down, nil
}

// Kubectl runs bin/kubectl against the cluster as its admin, with stdin when
// given.
func (c *Cluster) Kubectl(ctx context.Context, stdin []byte, args ...string) error {
	_, err := c.KubectlOutput(ctx, stdin, args...)
	return err
}

// KubectlOutput is Kubectl returning what kubectl printed on stdout. An
// apply (idempotent, so safe to repeat) that the API server or a webhook
// was too slow to judge is tried again for kubectlRetryWindow, as the
// tests' client does with its writes (retry.go): on two busy cores a
// server-side apply of the chart's large CRDs can outlast the API server's
// 60 s request timeout, and that says nothing of the objects applied.
func (c *Cluster) KubectlOutput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	if len(args) == 0 || args[0] != "apply" {
		return c.kubectlOnce(ctx, stdin, args...)
	}
	var out []byte
	err := retryIfWithin(ctx, kubectlRetryWindow, kubectlTransient, func() error {
		var err error
		out, err = c.kubectlOnce(ctx, stdin, args...)
		return err
	})
	return out, err
}

// kubectlRetryWindow is how long an apply is tried again: longer than
// retryWindow, since one attempt that the API server times out takes its
// whole 60 s request timeout, and a window of one minute would then leave
// no second attempt.
const kubectlRetryWindow = 3 * time.Minute

// kubectlTransient reports whether kubectl's error says the API server or
// a webhook did not answer in time, not that it refused: what transient
// (retry.go) recognises, as kubectl prints it.
func kubectlTransient(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, s := range []string{
		"Error from server (Timeout)", "Error from server (ServerTimeout)", "Error from server (TooManyRequests)",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return webhookUnreachable(msg)
}

func (c *Cluster) kubectlOnce(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Bin("kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %w\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out, nil
}

// Bin returns the path of a tool that `make tools` built.
func (c *Cluster) Bin(name string) string {
	return filepath.Join(c.Repo, "bin", name)
}

// script runs the cluster script with args and returns its stdout; its
// stderr (progress and kwokctl logs) goes to this process's stderr.
func (c *Cluster) script(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(c.Repo, clusterScript)}, args...)...)
	// kwokctl's info logs are one JSON line per step; warnings and errors are
	// enough here.
	cmd.Env = append(os.Environ(), "PLATFORM_KWOK_LOG_LEVEL=warn")
	if c.Options.Nodes > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("PLATFORM_KWOK_NODES=%d", c.Options.Nodes))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(os.Stderr, &stderr)
	// A process group of its own keeps a terminal's Ctrl-C away from the
	// script and kwokctl, so that this process decides how they stop: on
	// cancellation the whole group gets SIGTERM, which kwokctl handles by
	// cleaning up, instead of the script dying and leaving kwokctl running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = 30 * time.Second

	if err := cmd.Run(); err != nil {
		tail := stderr.Bytes()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return stdout.String(), &scriptError{err: err, tail: string(tail)}
	}
	return stdout.String(), nil
}

// create runs the cluster script's up, and once more after deleting what
// the first attempt left when it fails: a control plane component that
// loses the race for the free port kwokctl chose for it (another cluster,
// Prometheus or a test's server may take it first) fails a start that
// succeeds a moment later. The error says why each attempt failed, from the
// end of the script's output, which a test's own output does not show.
func (c *Cluster) create(ctx context.Context) (string, error) {
	args := append([]string{"up", c.Name}, c.Options.KwokctlArgs...)
	out, first := c.script(ctx, args...)
	if first == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("creating kwok cluster %s with %s: %w", c.Name, clusterScript, first)
	}
	Logf("creating kwok cluster %s failed, deleting it and trying once more: %v", c.Name, first)
	logComponentTails(c.Name)
	if derr := c.Down(); derr != nil {
		return "", fmt.Errorf("creating kwok cluster %s with %s: %w; deleting it to try again: %v",
			c.Name, clusterScript, first, derr)
	}
	out, err := c.script(ctx, args...)
	if err != nil {
		return "", fmt.Errorf("creating kwok cluster %s with %s, twice: first %v; then %w", c.Name, clusterScript, first, err)
	}
	return out, nil
}

// scriptError is a failed run of the cluster script with the end of what
// it printed on stderr.
type scriptError struct {
	err  error
	tail string
}

func (e *scriptError) Error() string {
	return fmt.Sprintf("%v; the end of its output:\n%s", e.err, e.tail)
}

func (e *scriptError) Unwrap() error { return e.err }

// Logf logs outside of any test, with one prefix for the test or benchmark
// process and its reaper.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "harness: %s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

// tail returns the end of a log file, for error messages.
func tail(path string) string {
	data, _ := os.ReadFile(path)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// kwokWorkdir is the folder kwokctl keeps its clusters in, as the cluster
// script tells it.
func kwokWorkdir() (string, error) {
	if dir := os.Getenv("KWOK_WORKDIR"); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".kwok"), nil
}

// logComponentTails logs the end of each control plane component's log of
// the cluster called name, before deleting it takes them away.
func logComponentTails(name string) {
	dir, err := kwokWorkdir()
	if err != nil {
		return
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "clusters", name, "logs", "*.log"))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		if len(data) > 1500 {
			data = data[len(data)-1500:]
		}
		Logf("the end of %s:\n%s", l, data)
	}
}

// lockClusterCreation waits, until ctx ends, for the lock that lets one
// cluster at a time be created under the kwok work folder, and returns its
// release. kwokctl picks each new cluster's ports by trying which are free,
// so two clusters created at once (two test packages of one layer, two
// tests of one package) can pick the same ports and one of them fails with
// "address already in use". The lock is a flock on a file, so it holds
// between processes and between goroutines alike, and the kernel drops it
// with a process that dies.
func lockClusterCreation(ctx context.Context) (func(), error) {
	dir, err := kwokWorkdir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "create.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err {
		case nil:
			return true, nil
		case syscall.EWOULDBLOCK:
			return false, nil
		default:
			return false, err
		}
	})
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("waiting for the lock on %s: %w", f.Name(), err)
	}
	// Closing the file releases the lock.
	return func() { _ = f.Close() }, nil
}
