// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command manager runs the platform-operator controllers: flags, logging and
// manager options only; the behaviour lives in internal/.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// so that a kubeconfig using them works out of cluster.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/prometheus/common/model"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientfeatures "k8s.io/client-go/features"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	platformv1alpha1 "github.com/example/platform-operator/api/v1alpha1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/certs"
	"github.com/example/platform-operator/internal/chain"
	"github.com/example/platform-operator/internal/controller"
	"github.com/example/platform-operator/internal/controller/appdeployment"
	"github.com/example/platform-operator/internal/controller/taskrun"
	opmetrics "github.com/example/platform-operator/internal/metrics"
	"github.com/example/platform-operator/internal/namespaces"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/tracing"
	"github.com/example/platform-operator/internal/webhook/guard"
	webhookv1 "github.com/example/platform-operator/internal/webhook/v1"
	// +kubebuilder:scaffold:imports
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(platformv1.AddToScheme(scheme))
	utilruntime.Must(platformv1alpha1.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
	// Admission reads the HTTPRoute CRD to learn whether its rules have names.
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	// +kubebuilder:scaffold:scheme
}

// options are the manager's command-line settings.
type options struct {
	metricsAddr             string
	secureMetrics           bool
	metricsCertPath         string
	probeAddr               string
	enableLeaderElection    bool
	leaderElectionNamespace string
	webhookPort             int
	webhookCertPath         string
	webhookMaxInFlight      int
	webhookMaxConns         int
	shutdownDelay           time.Duration
	webhookClientCA         string
	enableHTTP2             bool
	enableWebhooks          bool
	certRotation            bool
	scheduleTaskWorkers     int
	taskRunWorkers          int
	appDeploymentWorkers    int
	kubeAPIQPS              float64
	kubeAPIBurst            int
	syncPeriod              time.Duration
	retryBaseDelay          time.Duration
	retryMaxDelay           time.Duration
	reconcileTimeout        time.Duration
	leaseDuration           time.Duration
	renewDeadline           time.Duration
	retryPeriod             time.Duration
	pprofAddr               string
	signingKeyNamespace     string
	manualRunGrace          time.Duration
	workloadPoll            time.Duration
	prometheusAddress       string
	// prometheus is how the analysis reaches Prometheus, and scope what its
	// queries may read; the flags below fill both.
	prometheus            analysis.Connection
	scope                 analysis.Scope
	analysisMaxInFlight   int
	analysisMaxInFlightNS int
	gcPercent             int
	watchNamespaces       string
}

func (o *options) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to: :8443 for HTTPS, :8080 for HTTP, 0 to disable it.")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS behind Kubernetes authentication and authorization; false for plain HTTP.")
	fs.StringVar(&o.metricsCertPath, "metrics-cert-path", "",
		"Directory holding tls.crt and tls.key for the metrics server; a self-signed pair is made when empty.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	fs.BoolVar(&o.enableLeaderElection, "leader-elect", true,
		"Elect a leader so that only one replica of the manager reconciles at a time.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader-election Lease; the manager's own namespace when running in a cluster.")
	fs.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 15*time.Second,
		"How long followers wait after the leader's last renewal before taking over from a leader that died.")
	fs.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", 10*time.Second,
		"How long the leader keeps trying to renew before it steps down (and exits).")
	fs.DurationVar(&o.retryPeriod, "leader-election-retry-period", 500*time.Millisecond,
		"How often the leader renews and followers try to acquire the Lease: a follower takes over within "+
			"1 to 2.2 retry periods of a leader that stepped down gracefully.")
	fs.BoolVar(&o.enableWebhooks, "enable-webhooks", true,
		"Serve the admission webhooks (they need a serving certificate in --webhook-cert-path).")
	fs.BoolVar(&o.certRotation, "cert-rotation", true,
		"Make, inject and rotate the webhook certificates in the Secret "+certs.SecretName+
			" of the manager's namespace (POD_NAMESPACE); false when cert-manager or the developer provides them.")
	fs.IntVar(&o.webhookPort, "webhook-port", 9443, "Port the webhook server listens on.")
	fs.StringVar(&o.webhookCertPath, "webhook-cert-path", "/tmp/k8s-webhook-server/serving-certs",
		"Directory holding tls.crt and tls.key for the webhook server.")
	fs.IntVar(&o.webhookMaxInFlight, "webhook-max-in-flight", guard.DefaultMaxInFlight,
		"Admission requests the webhook server serves at once (and, apart, conversion requests); beyond, it "+
			"answers 429 with Retry-After: 1 and the API server retries. 0: no limit.")
	fs.IntVar(&o.webhookMaxConns, "webhook-max-conns-per-source", guard.DefaultMaxConnsPerSource,
		"Connections one address may hold open to the webhook server; beyond, a new one is closed at once. "+
			"The API server calls over HTTP/1.1, a connection per call in flight and up to 25 idle per webhook, all "+
			"from its one address: keep this above its requests in flight. Negative: no limit.")
	fs.DurationVar(&o.shutdownDelay, "shutdown-delay", guard.DefaultShutdownDelay,
		"How long the manager, asked to stop, keeps serving webhooks while /readyz fails, so that its Service "+
			"stops sending it calls before it stops answering them. Keep the pod's terminationGracePeriodSeconds "+
			"above it; the Lease is released after it.")
	fs.StringVar(&o.webhookClientCA, "webhook-client-ca", "",
		"PEM CA bundle file: when set, /mutate-* and /validate-* serve only clients presenting a certificate of "+
			"this CA (the API server, given one by its AdmissionConfiguration); /convert stays open.")
	// A pass spends most of its time waiting for the API server, not on a
	// CPU, so a controller needs many more workers than the manager has
	// cores: with 4, 500 runs starting in the same minute queued for 30 s.
	fs.IntVar(&o.scheduleTaskWorkers, "scheduletask-max-concurrent-reconciles", 16,
		"How many ScheduleTasks are reconciled at once.")
	fs.IntVar(&o.taskRunWorkers, "taskrun-max-concurrent-reconciles", 16,
		"How many TaskRuns are reconciled at once.")
	// The same holds for AppDeployments: with 4, the passes that record 100
	// canaries' measurements, due in the same second, queued for seconds.
	fs.IntVar(&o.appDeploymentWorkers, "appdeployment-max-concurrent-reconciles", defaultAppDeploymentWorkers,
		"How many AppDeployments are reconciled at once.")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 200,
		"Requests per second the manager may send to the API server, on average (client-side rate limit).")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 400,
		"Requests the manager may send to the API server in a burst above --kube-api-qps.")
	fs.DurationVar(&o.retryBaseDelay, "reconcile-retry-base-delay", chain.DefaultRetryBaseDelay,
		"How long an object waits before its pass runs again after a failed one; each further failure doubles it.")
	fs.DurationVar(&o.retryMaxDelay, "reconcile-retry-max-delay", chain.DefaultRetryMaxDelay,
		"The longest wait between retries of an object whose passes keep failing.")
	// A pass waits on the API server, never on Prometheus (measurements run
	// apart): a pass still running after minutes is stuck, and its worker
	// is better given back.
	fs.DurationVar(&o.reconcileTimeout, "reconcile-timeout", defaultReconcileTimeout,
		"How long one pass may run before its context is cancelled and it is retried; 0: no limit.")
	fs.DurationVar(&o.syncPeriod, "sync-period", 10*time.Hour,
		"How often every object is reconciled again even when nothing changed; a safety net, not a schedule.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "0",
		"The address Go's pprof endpoints (/debug/pprof/) bind to, e.g. 127.0.0.1:8082; 0 disables them.")
	fs.StringVar(&o.signingKeyNamespace, "signing-key-namespace", "",
		"Namespace of the Secret "+provenance.KeySecretName+" that holds the key signing the tasks' pod templates "+
			"(made when missing); default: POD_NAMESPACE, else --leader-election-namespace, else default.")
	fs.DurationVar(&o.manualRunGrace, "manual-run-grace", taskrun.DefaultManualRunGrace,
		"How long a manual TaskRun waits for a ScheduleTask that does not exist or cannot run (Ready False) "+
			"before it ends Failed with reason TaskNotFound or TaskCannotRun.")
	fs.DurationVar(&o.workloadPoll, "workload-poll", appdeployment.DefaultWorkloadPoll,
		"How often an AppDeployment with a workloadRef reads the Deployment it adopts again (it is not cached), "+
			"so how soon a change of that Deployment's pod template starts a release.")
	fs.StringVar(&o.prometheusAddress, "prometheus-address", "",
		"The Prometheus (http://host:port) that AppDeployment canary analysis queries; the operator's setting, "+
			"never a tenant's. Empty: canaries with canaryCriteria hold with pauseReason ProviderError.")
	o.bindPrometheusFlags(fs)
	fs.IntVar(&o.gcPercent, "gc-percent", defaultGCPercent,
		"How far, in percent, the Go heap may grow past what is live before a collection (Go's GOGC, which wins "+
			"when set). The heap is mostly the cache, which changes little, so a low value keeps memory near the "+
			"cache's size for a little CPU; 100 is Go's default, -1 turns collection off.")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", os.Getenv("WATCH_NAMESPACES"),
		"Comma-separated namespaces the manager serves: it caches, reconciles and admits objects in those only, "+
			"and needs rights (Roles) in those only. Empty: every namespace. Default: the WATCH_NAMESPACES "+
			"environment variable, which OLM fills from its target namespaces.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Enable HTTP/2 for the metrics and webhook servers (off by default: HTTP/2 Rapid Reset, CVE-2023-44487).")
}

// bindPrometheusFlags binds the flags of the canary analysis: how to reach
// Prometheus, what a tenant's queries may read, and how many run at once.
func (o *options) bindPrometheusFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.prometheus.BearerTokenFile, "prometheus-bearer-token-file", "",
		"File holding a bearer token for Prometheus, read for every query (a projected service account token rotates).")
	fs.StringVar(&o.prometheus.CAFile, "prometheus-ca-file", "",
		"PEM file of the CA that signs Prometheus's certificate; read again when it changes.")
	fs.StringVar(&o.prometheus.CertFile, "prometheus-cert-file", "",
		"PEM file of the client certificate presented to Prometheus (with --prometheus-key-file); "+
			"read again when it changes.")
	fs.StringVar(&o.prometheus.KeyFile, "prometheus-key-file", "",
		"PEM file of the key of --prometheus-cert-file.")
	o.prometheus.Headers = map[string]string{}
	fs.Func("prometheus-header",
		"NAME=VALUE of a header sent with every query, such as X-Scope-OrgID=platform for Mimir, Cortex or "+
			"Thanos tenants; repeatable.",
		func(s string) error { return analysis.ParseHeader(o.prometheus.Headers, s) })
	fs.StringVar(&o.scope.Label, "prometheus-namespace-label", analysis.DefaultNamespaceLabel,
		"The label that holds a series' Kubernetes namespace: every query of an AppDeployment's analysis, "+
			"built-in or its own, is confined to series whose label is the AppDeployment's namespace.")
	o.scope.LabelFor = map[string]analysis.LabelFor{}
	fs.Func("prometheus-namespace-label-for",
		"METRIC=LABEL@NAMESPACE: series of METRIC keep the tenant's namespace in LABEL instead (a gateway's metrics "+
			"labelled by the route's namespace, say), and only those scraped from NAMESPACE (the gateway's or "+
			"ingress controller's) are read; repeatable. The platform's setting, never a tenant's.",
		func(s string) error { return analysis.ParseLabelFor(o.scope.LabelFor, s) })
	fs.Func("prometheus-extra-matcher",
		`LABEL="VALUE", such as cluster="east": added to every selector of every analysis query, for a Prometheus `+
			"(Thanos, Mimir) that holds several clusters' series; repeatable.",
		func(s string) error {
			m, err := analysis.ParseExtraMatcher(s)
			if err == nil {
				o.scope.Extra = append(o.scope.Extra, m)
			}
			return err
		})
	fs.DurationVar(&o.scope.MaxRange, "analysis-max-range", analysis.DefaultMaxRange,
		"Longest range, subquery window or offset a canary criterion's query may read; longer ones are refused at admission.")
	fs.DurationVar(&o.scope.MinStep, "analysis-min-step", analysis.DefaultMinStep,
		"Shortest subquery step a canary criterion's query may ask for; shorter ones are refused at admission.")
	fs.IntVar(&o.analysisMaxInFlight, "analysis-max-in-flight", appdeployment.DefaultMaxInFlight,
		"Canary measurements (each one query at a time) running at once against Prometheus, in all.")
	fs.IntVar(&o.analysisMaxInFlightNS, "analysis-max-in-flight-per-namespace",
		appdeployment.DefaultMaxInFlightPerNamespace,
		"Canary measurements of one namespace running at once; namespaces are served in turn.")
}

// validatePrometheusFlags checks what the flag parsers cannot: values of a
// range and bounds.
func (o *options) validatePrometheusFlags() error {
	switch {
	case o.scope.MaxRange <= 0:
		return fmt.Errorf("--analysis-max-range %s: want a positive duration", o.scope.MaxRange)
	case o.scope.MinStep <= 0:
		return fmt.Errorf("--analysis-min-step %s: want a positive duration", o.scope.MinStep)
	case o.analysisMaxInFlight < 1:
		return fmt.Errorf("--analysis-max-in-flight %d: want at least 1", o.analysisMaxInFlight)
	case o.analysisMaxInFlightNS < 1:
		return fmt.Errorf("--analysis-max-in-flight-per-namespace %d: want at least 1", o.analysisMaxInFlightNS)
	case o.scope.Label == "" || !model.LegacyValidation.IsValidLabelName(o.scope.Label):
		return fmt.Errorf("--prometheus-namespace-label %q: want a label name", o.scope.Label)
	}
	if err := o.scope.Validate(); err != nil {
		return err
	}
	o.prometheus.Address = o.prometheusAddress
	return nil
}

// defaultGCPercent is the manager's GOGC unless told otherwise. Almost all
// of its live heap is the informers' cache, which is long-lived: Go's
// default of 100 lets the heap reach twice that between collections, and the
// process keeps that memory. At 25 the heap stays within a quarter of the
// cache, for more frequent collections that each mark the same cache; see
// docs/performance.md for what it costs and saves.
const defaultGCPercent = 25

// gcPercent is the collector setting to apply: the flag's, unless the GOGC
// environment variable is set, in which case the runtime has applied it
// already and ok is false.
func gcPercent(flagValue int, getenv func(string) string) (percent int, ok bool) {
	if getenv("GOGC") != "" {
		return 0, false
	}
	return flagValue, true
}

// keyNamespace is where the signing key lives: the manager's own namespace
// in a cluster; out of one (make run), the namespace of its Lease, or default.
func (o *options) keyNamespace() string {
	for _, ns := range []string{o.signingKeyNamespace, os.Getenv("POD_NAMESPACE"), o.leaderElectionNamespace} {
		if ns != "" {
			return ns
		}
	}
	return "default"
}

// cachesSynced is a readiness check that passes once the manager's informers
// have had their first full list: before that, reconciles would act on a
// partial view of the cluster. It then stays passed. The cache starts an
// informer whenever a controller or a webhook first reads a kind, and
// WaitForCacheSync waits for every informer started so far, so a check of
// it each time would fail while each new one lists: the replica would leave
// its Service, and every admission and conversion call with it, until the
// list ends, and a list that needs the conversion webhook would never end.
// A read of a kind whose informer has not synced waits for it anyway.
func cachesSynced(c interface{ WaitForCacheSync(context.Context) bool }) healthz.Checker {
	var synced atomic.Bool
	return func(req *http.Request) error {
		if synced.Load() {
			return nil
		}
		ctx, cancel := context.WithTimeout(req.Context(), 100*time.Millisecond)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("informer caches have not synced yet")
		}
		synced.Store(true)
		return nil
	}
}

// defaultReconcileTimeout is --reconcile-timeout: far above any pass the
// benchmark has seen (a second at its p99), far below forever.
const defaultReconcileTimeout = 2 * time.Minute

// defaultAppDeploymentWorkers is --appdeployment-max-concurrent-reconciles
// unless set: as many as the other controllers have.
const defaultAppDeploymentWorkers = 16

func main() {
	var o options
	o.bindFlags(flag.CommandLine)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	if err := o.validatePrometheusFlags(); err != nil {
		setupLog.Error(err, "Invalid flag")
		os.Exit(2)
	}
	if p, ok := gcPercent(o.gcPercent, os.Getenv); ok {
		debug.SetGCPercent(p)
	}

	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	webhookTLSOpts := tlsOpts
	if o.webhookClientCA != "" {
		opt, err := guard.ClientCATLSOption(o.webhookClientCA)
		if err != nil {
			setupLog.Error(err, "Invalid --webhook-client-ca")
			os.Exit(1)
		}
		webhookTLSOpts = append(slices.Clone(tlsOpts), opt)
	}
	// Asked to stop, the manager stops being ready and serves webhooks a
	// while longer (see guard.Drain).
	drain := &guard.Drain{Delay: o.shutdownDelay}
	// Each webhook call in a span, the child of the API server's when it
	// traces; a request the guard refuses (too many in flight, no client
	// certificate) is answered before any span or webhook.
	webhookServer := tracing.WebhookServer(guard.NewServer(guard.ServerOptions{
		Webhook: webhook.Options{
			TLSOpts: webhookTLSOpts,
			Port:    o.webhookPort,
			CertDir: o.webhookCertPath,
		},
		Guard:             guard.Options{MaxInFlight: o.webhookMaxInFlight, RequireClientCert: o.webhookClientCA != ""},
		MaxConnsPerSource: o.webhookMaxConns,
		Drain:             drain,
	}))

	metricsOpts := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.secureMetrics,
		TLSOpts:       tlsOpts,
		CertDir:       o.metricsCertPath,
	}
	if o.secureMetrics {
		// Only callers that Kubernetes authenticates and authorizes for
		// GET /metrics (see config/rbac/metrics_reader_role.yaml) may scrape.
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	restConfig := ctrl.GetConfigOrDie()
	restConfig.QPS, restConfig.Burst = float32(o.kubeAPIQPS), o.kubeAPIBurst
	opmetrics.CountWrites(restConfig)
	restConfig.Wrap(tracing.Transport)
	// How long requests wait in the client's own rate limiter, and how long
	// the API server takes to answer: where the time of a burst goes.
	ctrlmetrics.RegisterRESTClientMetrics(ctrlmetrics.MetricRequestLatency, ctrlmetrics.MetricRateLimiterLatency)
	cacheOpts, err := controller.CacheOptions()
	if err != nil {
		setupLog.Error(err, "Unable to build the cache options")
		os.Exit(1)
	}
	cacheOpts.SyncPeriod = &o.syncPeriod
	served, err := namespaces.Parse(o.watchNamespaces)
	if err != nil {
		setupLog.Error(err, "Invalid --watch-namespaces")
		os.Exit(1)
	}
	cacheOpts.DefaultNamespaces = served.CacheNamespaces()
	if !served.All() {
		setupLog.Info("Serving only some namespaces", "namespaces", served.Names())
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsOpts,
		WebhookServer:           webhookServer,
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.enableLeaderElection,
		LeaderElectionID:        "platform-operator.platform.example.com",
		LeaderElectionNamespace: o.leaderElectionNamespace,
		LeaseDuration:           &o.leaseDuration,
		RenewDeadline:           &o.renewDeadline,
		RetryPeriod:             &o.retryPeriod,
		// The process exits as soon as the manager stops, so releasing the
		// Lease on the way out is safe and lets a new leader take over at once.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{ReconciliationTimeout: o.reconcileTimeout},
	})
	if err != nil {
		setupLog.Error(err, "Failed to create manager")
		os.Exit(1)
	}

	if err := controller.Setup(mgr, controller.Options{
		ScheduleTaskWorkers:  o.scheduleTaskWorkers,
		TaskRunWorkers:       o.taskRunWorkers,
		AppDeploymentWorkers: o.appDeploymentWorkers,
		RetryBaseDelay:       o.retryBaseDelay,
		RetryMaxDelay:        o.retryMaxDelay,
		SigningKeyNamespace:  o.keyNamespace(),
		Namespaces:           cacheOpts.DefaultNamespaces,
		ManualRunGrace:       o.manualRunGrace,
		WorkloadPoll:         o.workloadPoll,
		Prometheus:           o.prometheus,
		Scope:                o.scope,
		AnalysisMaxInFlight:  o.analysisMaxInFlight,

		AnalysisMaxInFlightPerNamespace: o.analysisMaxInFlightNS,
	}); err != nil {
		setupLog.Error(err, "Failed to set up controllers")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	drain.BeginWhenDone(ctx)
	shutdownTracing, err := tracing.Setup(ctx)
	if err != nil {
		setupLog.Error(err, "Failed to set up tracing")
		os.Exit(1)
	}
	defer func() { _ = shutdownTracing(context.Background()) }()
	ready := healthz.Ping
	if o.enableWebhooks {
		certsReady := make(chan struct{})
		if o.certRotation {
			if err := certs.AddRotator(mgr, certs.Options{
				Namespace: os.Getenv("POD_NAMESPACE"), CertDir: o.webhookCertPath, Ready: certsReady,
			}); err != nil {
				setupLog.Error(err, "Failed to set up certificate rotation")
				os.Exit(1)
			}
		} else {
			close(certsReady)
		}
		// The webhook server starts only once its certificate is on disk,
		// which the rotator may take a minute to arrange on a new install.
		go func() {
			select {
			case <-certsReady:
			case <-ctx.Done():
				return
			}
			if err := webhookv1.Setup(mgr, served, o.scope); err != nil {
				setupLog.Error(err, "Failed to set up webhooks")
				os.Exit(1)
			}
		}()
		// Ready only once the webhook server serves with its certificate:
		// the API server calls it for every ScheduleTask and TaskRun write.
		ready = webhookServer.StartedChecker()
	}
	// +kubebuilder:scaffold:builder

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "Failed to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("webhooks", ready); err != nil {
		setupLog.Error(err, "Failed to set up ready check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("caches", cachesSynced(mgr.GetCache())); err != nil {
		setupLog.Error(err, "Failed to set up ready check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("shutdown", drain.Checker()); err != nil {
		setupLog.Error(err, "Failed to set up ready check")
		os.Exit(1)
	}

	if msg := listNotice(clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)); msg != "" {
		setupLog.Info(msg)
	}
	setupLog.Info("Starting manager")
	if err := mgr.Start(ctx); err != nil {
		setupLog.Error(err, "Failed to run manager")
		os.Exit(1)
	}
}

// listNotice is what the manager says at start of how its cache's first
// list is read: nothing with client-go's streaming list, which transforms
// each object as it arrives; without it, that the initial list is decoded
// whole before any transform, so the start's memory is bounded only by
// what the API server lists (objects anyone labels as the operator's
// included; docs/performance.md, "Foreign labelled objects").
func listNotice(streaming bool) string {
	if streaming {
		return ""
	}
	return "Streaming lists are off (KUBE_FEATURE_WatchListClient=false): each cache's initial list is decoded " +
		"whole before the cache slims its objects, so memory at start is bounded only by what the API server " +
		"lists, foreign objects labelled as the operator's included; turn them back on, or raise the memory limit"
}
