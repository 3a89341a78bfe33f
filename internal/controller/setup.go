// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package controller wires the project's reconcilers into a manager; each
// Kind's reconciler lives in a package of its own below this one. Adding a
// kind adds a block to Setup and one to CacheOptions, and edits no other
// kind's package.
package controller

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/cacheblock"
	"github.com/example/platform-operator/internal/chain"
	"github.com/example/platform-operator/internal/controller/appdeployment"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/controller/taskrun"
	"github.com/example/platform-operator/internal/index"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/reconciler"
	"github.com/example/platform-operator/internal/recorder"
)

// Options tune the controllers.
type Options struct {
	// ScheduleTaskWorkers, TaskRunWorkers and AppDeploymentWorkers are the
	// concurrent reconciles of each controller.
	ScheduleTaskWorkers  int
	TaskRunWorkers       int
	AppDeploymentWorkers int
	// RetryBaseDelay and RetryMaxDelay bound every controller's backoff
	// after a failed pass (chain.Options); zero takes the defaults.
	RetryBaseDelay, RetryMaxDelay time.Duration
	// SigningKeyNamespace holds the Secret with the key that signs the pod
	// templates of the tasks' CronJobs (provenance.KeySecretName): the
	// manager's own namespace.
	SigningKeyNamespace string
	// ManualRunGrace is how long a manual run waits for a task that does not
	// exist or cannot run before it ends Failed; the TaskRun controller's
	// default when zero.
	ManualRunGrace time.Duration
	// WorkloadPoll is how often an AppDeployment with a workloadRef reads
	// its Deployment again; appdeployment.DefaultWorkloadPoll when zero.
	WorkloadPoll time.Duration
	// Namespaces are the namespaces the manager serves, as its cache's
	// DefaultNamespaces (nil: every namespace); the controllers' own caches
	// keep to them too.
	Namespaces map[string]cache.Config
	// Prometheus is how the canary analysis reaches Prometheus; the
	// operator's setting, never a tenant's. An empty address: analysed
	// canaries hold with ProviderError. A zero timeout is
	// prometheusQueryTimeout.
	Prometheus analysis.Connection
	// Scope confines the analysis's queries to each AppDeployment's
	// namespace.
	Scope analysis.Scope
	// AnalysisMaxInFlight and AnalysisMaxInFlightPerNamespace bound the
	// measurements running at once; zero takes the controller's defaults.
	AnalysisMaxInFlight, AnalysisMaxInFlightPerNamespace int
}

// chain is the options of a controller with this many workers.
func (o Options) chain(workers int) chain.Options {
	return chain.Options{Workers: workers, RetryBaseDelay: o.RetryBaseDelay, RetryMaxDelay: o.RetryMaxDelay}
}

// prometheusQueryTimeout bounds one query to Prometheus; a measurement's own
// timeout (half its interval) may bound it further.
const prometheusQueryTimeout = 10 * time.Second

// signingKeyTimeout bounds reading (or making) the signing key at start.
const signingKeyTimeout = 30 * time.Second

// Setup registers every reconciler, and its metrics, with the manager.
func Setup(mgr ctrl.Manager, o Options) error {
	// The key is read before the manager starts, past its cache, which
	// holds no Secrets; every replica reads the same one.
	ctx, cancel := context.WithTimeout(context.Background(), signingKeyTimeout)
	defer cancel()
	signer, err := provenance.LoadSigner(ctx, mgr.GetAPIReader(), mgr.GetClient(), o.SigningKeyNamespace)
	if err != nil {
		return fmt.Errorf("load the signing key: %w", err)
	}
	events, err := recorder.New(mgr.GetConfig(), mgr.GetScheme(), recorder.Options{})
	if err != nil {
		return err
	}
	if err := mgr.Add(events); err != nil {
		return fmt.Errorf("add the event sender: %w", err)
	}

	// Every index, before any controller: each may read any of them.
	if err := index.Register(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}

	// What every reconciler has: the manager's clients and its own events.
	base := func(controllerName string) reconciler.Base {
		return reconciler.Base{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder: events.Recorder(controllerName + "-controller")}
	}

	// ScheduleTask: keeps each task's CronJob and records its runs.
	otherCronJobs, err := cacheblock.NewOthersCache(mgr, o.Namespaces, &batchv1.CronJob{})
	if err != nil {
		return err
	}
	if err := (&scheduletask.Reconciler{
		Base:          base(scheduletask.ControllerName),
		OtherCronJobs: otherCronJobs,
		Signer:        signer,
	}).SetupWithManager(mgr, o.chain(o.ScheduleTaskWorkers)); err != nil {
		return fmt.Errorf("set up %s controller: %w", scheduletask.ControllerName, err)
	}
	if err := scheduletask.RegisterMetrics(mgr.GetCache()); err != nil {
		return fmt.Errorf("register %s metrics: %w", scheduletask.ControllerName, err)
	}

	// TaskRun: follows each run's Job and pods.
	if err := (&taskrun.Reconciler{
		Base:           base(taskrun.ControllerName),
		ManualRunGrace: o.ManualRunGrace,
	}).SetupWithManager(mgr, o.chain(o.TaskRunWorkers)); err != nil {
		return fmt.Errorf("set up %s controller: %w", taskrun.ControllerName, err)
	}

	// AppDeployment: releases applications through their Deployments,
	// judging canaries in Prometheus.
	var prom analysis.Provider
	if o.Prometheus.Address != "" {
		conn := o.Prometheus
		if conn.Timeout == 0 {
			conn.Timeout = prometheusQueryTimeout
		}
		if prom, err = analysis.NewPrometheus(conn); err != nil {
			return fmt.Errorf("prometheus at %q: %w", conn.Address, err)
		}
	}
	// A weighted canary moves an HTTPRoute; a cluster without the Gateway
	// API's CRDs has none to move, which its canaries say.
	_, err = mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gatewayv1.GroupName, Kind: "HTTPRoute"}, gatewayv1.GroupVersion.Version)
	switch {
	case meta.IsNoMatchError(err):
		ctrl.Log.WithName("setup").Info("The cluster serves no HTTPRoute (gateway.networking.k8s.io/v1): weighted canaries will pause until the Gateway API CRDs are installed and the operator restarted")
	case err != nil:
		return fmt.Errorf("look up HTTPRoute: %w", err)
	}
	servesRoutes := err == nil
	if err := (&appdeployment.Reconciler{
		GatewayAPI:              servesRoutes,
		Base:                    base(appdeployment.ControllerName),
		Prometheus:              prom,
		Scope:                   o.Scope,
		MaxInFlight:             o.AnalysisMaxInFlight,
		MaxInFlightPerNamespace: o.AnalysisMaxInFlightPerNamespace,
		WorkloadPoll:            o.WorkloadPoll,
	}).SetupWithManager(mgr, o.chain(o.AppDeploymentWorkers)); err != nil {
		return fmt.Errorf("set up %s controller: %w", appdeployment.ControllerName, err)
	}
	if err := appdeployment.RegisterMetrics(mgr.GetCache()); err != nil {
		return fmt.Errorf("register %s metrics: %w", appdeployment.ControllerName, err)
	}
	return nil
}

// CacheOptions limits the manager's cache to what the controllers need: each
// controller contributes a block (the children it reads and how much of them
// it keeps), and children are cached only when the operator made them.
func CacheOptions() (cache.Options, error) {
	return cacheblock.Options(
		scheduletask.CacheBlock(),
		taskrun.CacheBlock(),
		appdeployment.CacheBlock(),
	)
}
