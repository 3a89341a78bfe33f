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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/controller/appdeployment"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/controller/taskrun"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/reconcileutil"
	"github.com/example/platform-operator/internal/recorder"
)

// Options tune the controllers.
type Options struct {
	// ScheduleTaskWorkers and TaskRunWorkers are the concurrent reconciles
	// of each controller.
	ScheduleTaskWorkers int
	TaskRunWorkers      int
	// AppDeploymentWorkers are the concurrent reconciles of the
	// AppDeployment controller.
	AppDeploymentWorkers int
	// SigningKeyNamespace holds the Secret with the key that signs the pod
	// templates of the tasks' CronJobs (provenance.KeySecretName): the
	// manager's own namespace.
	SigningKeyNamespace string
	// ManualRunGrace is how long a manual run waits for a task that does not
	// exist or cannot run before it ends Failed; the TaskRun controller's
	// default when zero.
	ManualRunGrace time.Duration
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

	// ScheduleTask: keeps each task's CronJob and records its runs.
	otherCronJobs, err := reconcileutil.NewOthersCache(mgr, o.Namespaces, &batchv1.CronJob{})
	if err != nil {
		return err
	}
	if err := (&scheduletask.Reconciler{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		OtherCronJobs: otherCronJobs,
		Recorder:      events.Recorder(scheduletask.ControllerName + "-controller"),
		Signer:        signer,
	}).SetupWithManager(mgr, max(o.ScheduleTaskWorkers, 1)); err != nil {
		return fmt.Errorf("set up %s controller: %w", scheduletask.ControllerName, err)
	}
	if err := scheduletask.RegisterMetrics(mgr.GetCache()); err != nil {
		return fmt.Errorf("register %s metrics: %w", scheduletask.ControllerName, err)
	}

	// TaskRun: follows each run's Job and pods.
	if err := (&taskrun.Reconciler{
		Client:         mgr.GetClient(),
		APIReader:      mgr.GetAPIReader(),
		Recorder:       events.Recorder(taskrun.ControllerName + "-controller"),
		ManualRunGrace: o.ManualRunGrace,
	}).SetupWithManager(mgr, max(o.TaskRunWorkers, 1)); err != nil {
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
	if err := (&appdeployment.Reconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                events.Recorder(appdeployment.ControllerName + "-controller"),
		Prometheus:              prom,
		Scope:                   o.Scope,
		MaxInFlight:             o.AnalysisMaxInFlight,
		MaxInFlightPerNamespace: o.AnalysisMaxInFlightPerNamespace,
	}).SetupWithManager(mgr, max(o.AppDeploymentWorkers, 1)); err != nil {
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
	return reconcileutil.CacheOptions(
		scheduletask.CacheBlock(),
		taskrun.CacheBlock(),
		appdeployment.CacheBlock(),
	)
}
