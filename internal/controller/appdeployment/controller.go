// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"cmp"
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/cacheblock"
	"github.com/example/platform-operator/internal/chain"
	"github.com/example/platform-operator/internal/index"
	"github.com/example/platform-operator/internal/objstatus"
	"github.com/example/platform-operator/internal/predicates"
	"github.com/example/platform-operator/internal/reconciler"
	"github.com/example/platform-operator/internal/tracing"
)

// ControllerName names the controller in logs, metrics and traces.
const ControllerName = "appdeployment"

// FieldManager names the controller in the managedFields of its children.
const FieldManager = "platform-operator-appdeployment"

// Reconciler reconciles AppDeployments: it keeps the stable and canary
// Deployments and the Service of each application in line with its spec
// and its release, and rebuilds the status from what they show.
type Reconciler struct {
	// Base's APIReader reads past the cache, for a child of an
	// application's name that the cache cannot show because the operator
	// did not make it.
	reconciler.Base
	// Prometheus answers the canary analysis's queries; nil when the
	// manager has no Prometheus address, and then analysed canaries hold
	// with ProviderError.
	Prometheus analysis.Provider
	// WorkloadPoll is how often an AppDeployment with a workloadRef reads
	// its Deployment again; DefaultWorkloadPoll when zero.
	WorkloadPoll time.Duration
	// Scope confines every query of the analysis to the AppDeployment's
	// namespace.
	Scope analysis.Scope
	// GatewayAPI says whether the cluster serves the Gateway API's
	// HTTPRoute, which weighted canaries move; without it they pause.
	GatewayAPI bool
	// RouteAcceptTimeout is how long a weighted step waits for the
	// gateways to accept its weight before it pauses with
	// RouteNotAccepted; DefaultRouteAcceptTimeout when zero.
	RouteAcceptTimeout time.Duration
	// MaxInFlight and MaxInFlightPerNamespace bound the measurements
	// running at once, in all and of one namespace; zero takes
	// DefaultMaxInFlight and DefaultMaxInFlightPerNamespace.
	MaxInFlight, MaxInFlightPerNamespace int

	// applier applies the children, writing only on change.
	applier apply.Applier
	// measurer queries Prometheus off the workers.
	measurer *measurer
}

// +kubebuilder:rbac:groups=platform.example.com,resources=appdeployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=platform.example.com,resources=appdeployments/status,verbs=get;update;patch
// The children's owner references block the AppDeployment's deletion,
// which an API server enforcing owner-reference permissions allows only
// with update on its finalizers.
// +kubebuilder:rbac:groups=platform.example.com,resources=appdeployments/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments/scale,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// A weighted canary sets the weights of its HTTPRoute; admission lets only
// an author who may update the route name it (mayNotRoute).
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;update

// Reconcile brings one AppDeployment's children and status in line with its
// spec and its release.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ad := &platformv1.AppDeployment{}
	// Once it is gone, the garbage collector removes the children.
	if res, ok, err := r.Read(ctx, req.NamespacedName, ad, r.forget); !ok {
		return res, err
	}
	if !ad.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.restoreWorkload(ctx, ad)
	}
	if wrote, err := r.finalizeWorkload(ctx, ad); err != nil || wrote {
		// The echo of the write is dropped: ask for the pass.
		return ctrl.Result{RequeueAfter: time.Millisecond}, err
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
	if err := r.observeWorkload(ctx, ad, obs); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.observeRoute(ctx, ad, obs); err != nil {
		return ctrl.Result{}, err
	}
	// With a workloadRef the pass runs the referenced Deployment's pod
	// template; the stored object keeps its own spec.
	run := ad
	if obs.workload != nil {
		run = withWorkload(ad, obs.workload)
	}
	obs.measured = r.measurer.latest(client.ObjectKeyFromObject(ad))
	p := newPass(run, obs, r.Clock.Now())
	p.routeTimeout = r.RouteAcceptTimeout
	p.decide()
	if ad.Spec.Adopts() {
		p.wakeAt(p.exact.Add(cmp.Or(r.WorkloadPoll, DefaultWorkloadPoll)))
	}
	// A child the API server refuses to apply is said in status, with its
	// answer, before the error goes back for a retry with back-off.
	actErr := r.act(ctx, run, p)
	if actErr != nil {
		msg, refused := refusedApply(actErr)
		if !refused {
			return ctrl.Result{}, actErr
		}
		p.applyRefused = msg
	}
	status := p.status()
	recordChanged := p.recordChanged()
	wrote, err := objstatus.Write(ctx, r.Client, ad, &ad.Status, status)
	if err != nil {
		return ctrl.Result{}, err
	}
	if wrote {
		r.emit(ad, p)
	}
	if actErr != nil {
		return ctrl.Result{}, actErr
	}
	if err := r.scaleDownWorkload(ctx, ad, obs, &ad.Status); err != nil {
		return ctrl.Result{}, err
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
	r.applier.Forget(types.NamespacedName{Namespace: key.Namespace, Name: key.Name + platformv1.PreviewSuffix})
}

// SetupWithManager registers the reconciler. It watches the Deployments and
// the Service it owns and the pods of the applications (by their name
// label), so a pod that turns ready, restarts or cannot pull its image wakes
// its AppDeployment at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, o chain.Options) error {
	b := r.Controller(mgr, &platformv1.AppDeployment{})
	r.applier = apply.Applier{Client: r.Client, APIReader: r.APIReader, FieldManager: FieldManager,
		// A child someone keeps changing is changed back with a backoff,
		// but never a Deployment's pod template: what it holds runs as the
		// application.
		Repairs: &apply.RepairBackoff{Clock: r.Clock},
		Urgent:  [][]string{{"spec", "template"}}}
	r.measurer = newMeasurer(r.Prometheus, r.Clock, measurerOptions{
		scope: r.Scope, maxInFlight: r.MaxInFlight, maxPerNamespace: r.MaxInFlightPerNamespace,
		log: mgr.GetLogger().WithName("analysis"),
	})
	if err := cacheblock.WarmInformers(mgr.GetCache(), &platformv1.AppDeployment{}, &appsv1.Deployment{},
		&corev1.Service{}, index.ReplicaSetMetadata(), &corev1.Pod{}, &appsv1.ControllerRevision{}); err != nil {
		return err
	}
	// A pod or ReplicaSet of one of the application's Deployments wakes it.
	appForPod := handler.EnqueueRequestsFromMapFunc(predicates.ToLabeled(platformv1.AppNameLabel, platformv1.TrackLabel))
	b.
		// The create event of a child a pass made wakes no second pass:
		// that pass had the API server's answer.
		Owns(&appsv1.Deployment{}, builder.WithPredicates(r.applier.NotOwnCreate())).
		Owns(&corev1.Service{}, builder.WithPredicates(r.applier.NotOwnCreate())).
		Watches(&corev1.Pod{}, appForPod).
		// A pod counts once its ReplicaSet is seen controlled by the
		// application's Deployment: its pods' events may come first. The
		// cache's ReplicaSets are stubs of their metadata, so only their
		// creation, deletion and owners pass.
		WatchesMetadata(&appsv1.ReplicaSet{}, appForPod,
			builder.WithPredicates(predicates.SpecOrMetadataChanged())).
		// A finished measurement wakes its AppDeployment.
		WatchesRawSource(source.Channel(r.measurer.wake, &handler.EnqueueRequestForObject{}))
	return chain.Complete(b, mgr.GetCache(), o, ControllerName, r,
		tracing.FromAnnotation(mgr.GetCache(), func(a *platformv1.AppDeployment) int64 { return a.Status.ObservedGeneration }))
}
