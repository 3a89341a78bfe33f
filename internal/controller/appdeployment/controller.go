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

package appdeployment

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/metrics"
	"github.com/example/platform-operator/internal/reconcileutil"
	"github.com/example/platform-operator/internal/tracing"
)

// ControllerName names the controller in logs, metrics and traces.
const ControllerName = "appdeployment"

// podAppField indexes pods by their application's name, so a pass finds its
// pods without scanning every pod of the namespace.
const podAppField = "metadata.labels." + platformv1.AppNameLabel

// replicaSetAppField indexes ReplicaSets by their application's name (the
// Deployment controller copies the pod template's labels onto them), so a
// pass finds its Deployments' ReplicaSets without scanning the namespace's.
const replicaSetAppField = "metadata.labels." + platformv1.AppNameLabel

// FieldManager names the controller in the managedFields of its children.
const FieldManager = "platform-operator-appdeployment"

// Reconciler reconciles AppDeployments: it keeps the stable and canary
// Deployments and the Service of each application in line with its spec
// and its release, and rebuilds the status from what they show.
type Reconciler struct {
	client.Client
	// APIReader reads past the cache, for a child of an application's name
	// that the cache cannot show because the operator did not make it.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// Prometheus answers the canary analysis's queries; nil when the
	// manager has no Prometheus address, and then analysed canaries hold
	// with ProviderError.
	Prometheus analysis.Provider
	// Scope confines every query of the analysis to the AppDeployment's
	// namespace.
	Scope analysis.Scope
	// MaxInFlight and MaxInFlightPerNamespace bound the measurements
	// running at once, in all and of one namespace; zero takes
	// DefaultMaxInFlight and DefaultMaxInFlightPerNamespace.
	MaxInFlight, MaxInFlightPerNamespace int

	// applier applies the children, writing only on change.
	applier reconcileutil.Applier
	// writes tells a cached AppDeployment that this manager's status writes
	// have replaced.
	writes reconcileutil.OwnWrites
	// measurer queries Prometheus off the workers.
	measurer *measurer
}

// +kubebuilder:rbac:groups=platform.example.com,resources=appdeployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=platform.example.com,resources=appdeployments/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one AppDeployment's children and status in line with its
// spec and its release.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ad := &platformv1.AppDeployment{}
	if err := r.Get(ctx, req.NamespacedName, ad); err != nil {
		if apierrors.IsNotFound(err) {
			// The garbage collector removes the children.
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ad.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if r.writes.Stale(string(ad.UID), ad.ResourceVersion) {
		// The event of our own newer write starts the next pass.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return r.reconcile(ctx, ad)
}

// reconcile observes the children, acts on the release as the stored status
// records it, and writes the status rebuilt from the observation and the
// release's next state, once. A change of the recorded state is written
// before anything acts on it: the next pass does.
func (r *Reconciler) reconcile(ctx context.Context, ad *platformv1.AppDeployment) (ctrl.Result, error) {
	obs, err := r.observe(ctx, ad)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs.measured = r.measurer.latest(client.ObjectKeyFromObject(ad))
	p := newPass(ad, obs, r.Clock.Now())
	p.decide()
	if err := r.act(ctx, ad, p); err != nil {
		return ctrl.Result{}, err
	}
	status := p.status()
	recordChanged := p.recordChanged()
	wrote, err := reconcileutil.WriteStatus(ctx, r.Client, ad, &ad.Status, status, &r.writes)
	if err != nil {
		return ctrl.Result{}, err
	}
	if wrote {
		r.emit(ad, p)
	}
	if p.measure != nil {
		r.measurer.start(ad, p.measure)
	}
	if wrote && recordChanged {
		// The children follow the recorded state; the echo of this write is
		// dropped (it is our own), so the pass that acts on it is asked for.
		return ctrl.Result{RequeueAfter: time.Millisecond}, nil
	}
	return ctrl.Result{RequeueAfter: p.requeueAfter}, nil
}

// forget drops what the controller remembers of a deleted AppDeployment.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.applier.Forget(key)
	r.measurer.forget(key)
	r.applier.Forget(types.NamespacedName{Namespace: key.Namespace, Name: key.Name + platformv1.CanarySuffix})
}

// SetupWithManager registers the reconciler. It watches the Deployments and
// the Service it owns and the pods of the applications (by their name
// label), so a pod that turns ready, restarts or cannot pull its image wakes
// its AppDeployment at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, maxConcurrent int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.applier = reconcileutil.Applier{Client: r.Client, APIReader: r.APIReader, FieldManager: FieldManager,
		// A child someone keeps changing is changed back with a backoff,
		// but never a Deployment's pod template: what it holds runs as the
		// application.
		Repairs: &reconcileutil.RepairBackoff{Clock: r.Clock},
		Urgent:  [][]string{{"spec", "template"}}}
	r.measurer = newMeasurer(r.Prometheus, r.Clock, measurerOptions{
		scope: r.Scope, maxInFlight: r.MaxInFlight, maxPerNamespace: r.MaxInFlightPerNamespace,
		log: mgr.GetLogger().WithName("analysis"),
	})
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podAppField,
		reconcileutil.LabelIndex(platformv1.AppNameLabel)); err != nil {
		return fmt.Errorf("index pods by application: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &appsv1.ReplicaSet{}, replicaSetAppField,
		reconcileutil.LabelIndex(platformv1.AppNameLabel)); err != nil {
		return fmt.Errorf("index ReplicaSets by application: %w", err)
	}
	if err := reconcileutil.WarmInformers(mgr.GetCache(), &platformv1.AppDeployment{}, &appsv1.Deployment{},
		&corev1.Service{}, &appsv1.ReplicaSet{}, &corev1.Pod{}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&platformv1.AppDeployment{}, builder.WithPredicates(r.writes.NotOwnEcho())).
		// The create event of a child a pass made wakes no second pass:
		// that pass had the API server's answer.
		Owns(&appsv1.Deployment{}, builder.WithPredicates(r.applier.NotOwnCreate())).
		Owns(&corev1.Service{}, builder.WithPredicates(r.applier.NotOwnCreate())).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(appForPod)).
		// A pod counts once its ReplicaSet is seen controlled by the
		// application's Deployment: its pods' events may come first. The
		// cache's ReplicaSets are stubs, so only their creation, deletion
		// and owners (their metadata) pass.
		Watches(&appsv1.ReplicaSet{}, handler.EnqueueRequestsFromMapFunc(appForPod),
			builder.WithPredicates(reconcileutil.SpecOrMetadataChanged())).
		// A finished measurement wakes its AppDeployment.
		WatchesRawSource(source.Channel(r.measurer.wake, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: maxConcurrent}).
		Named(ControllerName).
		Complete(reconcileutil.AfterCacheSync(mgr.GetCache(),
			metrics.Instrument(ControllerName, tracing.Instrument(ControllerName, r,
				tracing.WithOrigin(tracing.FromAnnotation(mgr.GetCache(), func(a *platformv1.AppDeployment) int64 {
					return a.Status.ObservedGeneration
				}))))))
}

// appForPod maps a pod of an application's Deployments to its AppDeployment.
func appForPod(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	name := l[platformv1.AppNameLabel]
	if name == "" || l[platformv1.TrackLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}
