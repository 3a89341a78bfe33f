//go:build e2e

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

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/internal/testutil/testenv"
)

const (
	// clusterScript is the script, relative to the repository root, that
	// creates and deletes kwok clusters; `make run` uses it too, so the tests
	// run on the same kind of cluster as a developer.
	clusterScript = "hack/kwok/cluster.sh"

	// reaperEnv, when set, makes the test binary act as the reaper of the
	// cluster it names instead of running tests; see startReaper.
	reaperEnv = "PLATFORM_E2E_REAP_CLUSTER"
	// reaperDone is sent to the reaper once TestMain has deleted the cluster.
	reaperDone = "done"

	// scriptTimeout bounds one call of the cluster script. Creating a cluster
	// takes a few seconds; kwokctl's own --timeout is 5m.
	scriptTimeout = 6 * time.Minute
)

// cluster is the kwok cluster shared by all tests in the package. TestMain
// sets it before any test runs.
var cluster kwokCluster

// operator is the operator running against the cluster: two manager
// replicas, as the default install runs them.
var operator *operatorDeployment

// kwokCluster is a kwok cluster managed through the cluster script.
type kwokCluster struct {
	name       string
	repo       string
	kubeconfig string
	config     *rest.Config
	client     client.Client
}

// TestMain creates the package's kwok cluster, runs the tests and deletes the
// cluster whatever happens to them.
func TestMain(m *testing.M) {
	if name := os.Getenv(reaperEnv); name != "" {
		os.Exit(reap(name))
	}
	os.Exit(runSuite(m))
}

// runSuite does the work of TestMain and returns the exit code, so that its
// deferred calls run before os.Exit.
func runSuite(m *testing.M) int {
	repo, err := testenv.RepoRoot()
	if err != nil {
		logf("%v", err)
		return 1
	}
	cluster = kwokCluster{name: fmt.Sprintf("e2e-%08x", rand.Uint32()), repo: repo}

	// Deferred calls do not run when a test panics (the panic ends the process
	// from the test's goroutine), when -timeout fires or on SIGKILL, so a
	// separate process deletes the cluster in those cases.
	reaper, err := startReaper(cluster.name)
	if err != nil {
		logf("starting the cluster reaper: %v", err)
		return 1
	}
	logf("if this process dies before deleting cluster %s, a reaper process will; its log: %s",
		cluster.name, reaper.logPath)

	setupCtx, cancelSetup := context.WithCancel(context.Background())
	defer cancelSetup()
	setupDone := make(chan struct{})
	var teardownOnce sync.Once
	teardown := func() {
		teardownOnce.Do(func() {
			cancelSetup()
			<-setupDone
			start := time.Now()
			if err := cluster.down(); err != nil {
				// Leave the reaper waiting: it retries once this process exits.
				logf("deleting cluster %s: %v", cluster.name, err)
				return
			}
			logf("deleted cluster %s in %s", cluster.name, time.Since(start).Round(time.Millisecond))
			reaper.release()
		})
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		logf("received %v, deleting cluster %s", sig, cluster.name)
		teardown()
		os.Exit(1)
	}()

	err = cluster.up(setupCtx)
	close(setupDone)
	if err != nil {
		logf("%v", err)
		teardown()
		return 1
	}
	opCtx, stopForwarding := context.WithCancel(context.Background())
	operator, err = startOperator(opCtx, cluster.repo, cluster.kubeconfig, 2)
	if err != nil {
		logf("starting the operator: %v", err)
		stopForwarding()
		teardown()
		return 1
	}
	code := m.Run()
	operator.stop()
	stopForwarding()
	teardown()
	return code
}

// up creates the cluster and connects a client to it.
func (c *kwokCluster) up(ctx context.Context) error {
	logf("creating kwok cluster %s", c.name)
	start := time.Now()
	out, err := runClusterScript(ctx, c.repo, "up", c.name)
	if err != nil {
		return fmt.Errorf("creating kwok cluster %s with %s (see its output above): %w", c.name, clusterScript, err)
	}
	c.kubeconfig = strings.TrimSpace(out)
	logf("cluster %s is ready after %s; kubeconfig: %s",
		c.name, time.Since(start).Round(time.Millisecond), c.kubeconfig)

	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %s: %w", c.kubeconfig, err)
	}
	c.client, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return fmt.Errorf("creating client for cluster %s: %w", c.name, err)
	}
	c.config = cfg
	if err := installCRDs(ctx, c.repo, c.kubeconfig); err != nil {
		return fmt.Errorf("installing CRDs into cluster %s: %w", c.name, err)
	}
	return nil
}

// down deletes the cluster. It uses a fresh context: it must run even after a
// signal or a failed setup.
func (c *kwokCluster) down() error {
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	_, err := runClusterScript(ctx, c.repo, "down", c.name)
	return err
}

// runClusterScript runs the cluster script with args and returns its stdout;
// its stderr (progress and kwokctl logs) goes to the test output.
func runClusterScript(ctx context.Context, repo string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(repo, clusterScript)}, args...)...)
	// kwokctl's info logs are one JSON line per step; warnings and errors are
	// enough in test output.
	cmd.Env = append(os.Environ(), "PLATFORM_KWOK_LOG_LEVEL=warn")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	// A process group of its own keeps a terminal's Ctrl-C away from the
	// script and kwokctl, so that this process decides how they stop: on
	// cancellation the whole group gets SIGTERM, which kwokctl handles by
	// cleaning up, instead of the script dying and leaving kwokctl running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = 30 * time.Second

	err := cmd.Run()
	return stdout.String(), err
}

// reaperHandle is the handle on the process started by startReaper.
type reaperHandle struct {
	w       *os.File
	logPath string
}

// startReaper starts a copy of the test binary that deletes the cluster
// called name as soon as this process exits, unless release was called
// first. It is told about the exit by a pipe: the kernel closes this end when
// the process dies, however it dies.
func startReaper(name string) (*reaperHandle, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()

	// The reaper must not hold this process's stdout or stderr open: `go test`
	// waits for them to close before it returns.
	logFile, err := os.CreateTemp("", name+"-reaper-*.log")
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	defer func() { _ = logFile.Close() }()

	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), reaperEnv+"="+name)
	cmd.Stdin = r
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// A session of its own, so that the Ctrl-C that ends the tests does not
	// also end the reaper.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return nil, err
	}
	_ = cmd.Process.Release()
	return &reaperHandle{w: w, logPath: logFile.Name()}, nil
}

// release tells the reaper that the cluster is gone and that it can exit.
func (r *reaperHandle) release() {
	_, _ = io.WriteString(r.w, reaperDone)
	_ = r.w.Close()
	// The log is only written when the reaper has a cluster to delete.
	_ = os.Remove(r.logPath)
}

// reap is the reaper's main function: it waits for the test process to exit
// and deletes the cluster called name unless the test process released it.
func reap(name string) int {
	msg, _ := io.ReadAll(os.Stdin)
	if string(msg) == reaperDone {
		return 0
	}
	logf("the test process exited without deleting cluster %s; deleting it", name)
	repo, err := testenv.RepoRoot()
	if err != nil {
		logf("%v", err)
		return 1
	}
	c := kwokCluster{name: name, repo: repo}
	if err := c.down(); err != nil {
		logf("deleting cluster %s: %v", name, err)
		return 1
	}
	return 0
}

// logf logs outside of any test, with the same prefix for the test process
// and the reaper.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
}

// invalidNameChars matches what may not appear in a namespace name.
var invalidNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// newNamespace creates a namespace named after t, waits until pods can be
// created in it, and deletes it when t ends.
func newNamespace(t *testing.T) string {
	t.Helper()
	ctx := t.Context()

	prefix := strings.Trim(invalidNameChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	prefix = strings.TrimRight(prefix[:min(len(prefix), 50)], "-")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := cluster.client.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Logf("using namespace %s in cluster %s", ns.Name, cluster.name)
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := client.IgnoreNotFound(cluster.client.Delete(ctx, ns)); err != nil {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})

	// The ServiceAccount admission plugin rejects pods until the controller
	// manager has created the namespace's default ServiceAccount, and a Job
	// whose pod was rejected retries only after a back-off.
	NewWithT(t).Eventually(ctx, func() error {
		key := client.ObjectKey{Namespace: ns.Name, Name: "default"}
		return cluster.client.Get(ctx, key, &corev1.ServiceAccount{})
	}).WithTimeout(30*time.Second).Should(Succeed(), "default ServiceAccount in namespace %s", ns.Name)
	return ns.Name
}
