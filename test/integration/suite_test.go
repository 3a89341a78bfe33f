// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package integration runs the project's integration tests against envtest:
// a real kube-apiserver and etcd built from source by `make tools`, with the
// project's CRDs installed. Everything the API server decides (schema
// validation, defaulting, the status subresource) is asserted here, never
// with a fake client.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/controller"
	"github.com/example/platform-operator/internal/namespaces"
	"github.com/example/platform-operator/internal/testutil/testenv"
	webhookv1 "github.com/example/platform-operator/internal/webhook/v1"
)

// testEnv is the running envtest environment, for tests that add users.
var testEnv *envtest.Environment

// spans holds every span the manager under test ended.
var spans = tracetest.NewInMemoryExporter()

// waitForWebhookServer waits until the manager's webhook server accepts TLS
// connections, so no test races the server's start.
func waitForWebhookServer(ctx context.Context, mgr ctrl.Manager) error {
	check := mgr.GetWebhookServer().StartedChecker()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check(nil)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// resyncPeriod is the manager's cache resync period in these tests: short, so
// that a reconcile that writes when nothing changed shows up within seconds.
const resyncPeriod = 3 * time.Second

// manualRunGrace is the manager's --manual-run-grace in these tests: a few
// seconds instead of a minute, so the tests of runs that cannot start end
// quickly.
const manualRunGrace = 3 * time.Second

// k8sClient talks to the envtest API server without a cache, so every read
// sees the server's current state.
var k8sClient client.Client

// managerCache is the manager's cache, for tests of what it holds.
var managerCache cache.Cache

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// TEST_LOG=1 shows the manager's logs; by default they are dropped.
	if os.Getenv("TEST_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	env, err := testenv.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: start envtest:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "integration: stop envtest:", err)
		}
	}()
	k8sClient, err = client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: client:", err)
		return 1
	}

	// Spans go to memory, where tests look for them.
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)))

	// The real manager, with the production cache settings and a short
	// resync period, so every test also lives through forced resyncs.
	cacheOpts, err := controller.CacheOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: cache options:", err)
		return 1
	}
	cacheOpts.SyncPeriod = ptr.To(resyncPeriod)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          testenv.WebhookServer(env),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: manager:", err)
		return 1
	}
	if err := controller.Setup(mgr, controller.Options{
		ScheduleTaskWorkers: 2, TaskRunWorkers: 2, SigningKeyNamespace: "default", ManualRunGrace: manualRunGrace,
		WorkloadPoll: time.Second,
	}); err != nil {
		fmt.Fprintln(os.Stderr, "integration: controllers:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := webhookv1.Setup(mgr, namespaces.Set{}, analysis.Scope{}); err != nil {
		fmt.Fprintln(os.Stderr, "integration: webhooks:", err)
		cancel()
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if err := waitForWebhookServer(ctx, mgr); err != nil {
		fmt.Fprintln(os.Stderr, "integration: webhook server:", err)
		cancel()
		return 1
	}
	testEnv, managerCache = env, mgr.GetCache()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "integration: manager stopped:", err)
		}
	}()
	return m.Run()
}

// Parallel tests: a test that spends its time waiting (out resyncs, a
// grace, a fire time) in a namespace of its own, and touches nothing shared
// (no envtest users, no spans, no cluster-scoped objects, no measured
// latency), calls t.Parallel(), so that its waits overlap the others'
// (make test-integration runs them -parallel 8, after the serial ones).
// The fighting tests run in parallel too: their write budgets follow from
// the repair backoff and the fight's measured length, not from a quiet
// machine. A wait for "nothing is written on the passes that follow" waits
// for those passes (throughResyncs), not for a stretch of the clock. The
// tests that add users or time the operator's repairs stay serial. A test
// whose wait is for a wall-clock moment (a fire time) sets up first and
// calls t.Parallel() after, so the serial tests' time counts towards its
// wait.

// newNamespace creates a namespace of its own for one test and deletes it
// when the test ends, so tests never see each other's objects.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "it-"}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), ns) })
	return ns.Name
}

// resourceMust parses a quantity or panics; for literals in tests.
func resourceMust(s string) resource.Quantity { return resource.MustParse(s) }
