// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/release"
)

// observation is what a pass saw of an application's children, read from
// the manager's cache before it acted.
type observation struct {
	// stable and canary are the application's Deployments, nil when absent
	// or not the application's (see nameTaken): canary is the Deployment of
	// the strategy's new track, <name>-canary or, blue-green,
	// <name>-preview. leftover is the other of those two, left by a release
	// of another strategy; it goes as a canary nobody runs does.
	stable, canary, leftover *appsv1.Deployment
	// service is the Service <name>, nil when absent or not the
	// application's: a blue-green release reads which track it selects.
	service *corev1.Service
	// pods are the application's pods, both tracks, without those being
	// deleted: those a ReplicaSet controls that stable or canary controls,
	// both links by UID. Labels prove nothing: anyone who may create pods
	// may copy a canary pod's labels onto a pod of their own, ready or
	// failing, and move promotion or rollback with it.
	pods []corev1.Pod
	// nameTaken names a child of the application's name that something else
	// controls; the application is left alone while it exists.
	nameTaken string
	// measured is the last measurement the measurer finished for the
	// application, recorded or not.
	measured *measured
	// revisions are the ControllerRevisions the application controls.
	revisions []appsv1.ControllerRevision
	// workload is the Deployment spec.workloadRef names, read past the
	// cache, when it can be followed; workloadProblem says why not, and the
	// application is then left alone. workloadStatus is what status records
	// of it.
	workload        *appsv1.Deployment
	workloadProblem *workloadProblem
	workloadStatus  *platformv1.WorkloadStatus
	// route is the HTTPRoute of a weighted canary; nil without
	// trafficRouting.
	route *routeObservation
}

// leftAlone reports whether the pass must not touch the children: one of
// their names is taken, or the referenced Deployment cannot be followed.
func (o *observation) leftAlone() bool {
	return o.nameTaken != "" || o.workloadProblem != nil
}

// observe reads the application's Deployments and pods from the cache.
func (r *Reconciler) observe(ctx context.Context, ad *platformv1.AppDeployment) (*observation, error) {
	obs := &observation{}
	var err error
	if obs.stable, err = r.ownedDeployment(ctx, ad, ad.Name, obs); err != nil {
		return nil, err
	}
	newName, otherName := ad.Name+release.Suffix(&ad.Spec.Strategy), ad.Name+platformv1.CanarySuffix
	if otherName == newName {
		otherName = ad.Name + platformv1.PreviewSuffix
	}
	if obs.canary, err = r.ownedDeployment(ctx, ad, newName, obs); err != nil {
		return nil, err
	}
	if obs.leftover, err = r.ownedDeployment(ctx, ad, otherName, obs); err != nil {
		return nil, err
	}
	if obs.service, err = r.ownedService(ctx, ad); err != nil {
		return nil, err
	}
	if obs.revisions, err = r.ownedRevisions(ctx, ad); err != nil {
		return nil, err
	}
	replicaSets, err := r.ownedReplicaSets(ctx, ad, obs.stable, obs.canary, obs.leftover)
	if err != nil {
		return nil, err
	}
	if len(replicaSets) == 0 {
		return obs, nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(ad.Namespace), client.MatchingFields{platformv1.PodAppIndex: ad.Name}); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp.IsZero() && pod.Labels[platformv1.TrackLabel] != "" &&
			replicaSets.Has(controllerUID(pod, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))) {
			obs.pods = append(obs.pods, *pod)
		}
	}
	return obs, nil
}

// ownedReplicaSets returns the UIDs of the ReplicaSets that the given
// Deployments (nil ones skipped) control. The cache keeps ReplicaSets as
// stubs of their metadata (index.ReplicaSetMetadata), which hold their
// owner references.
func (r *Reconciler) ownedReplicaSets(ctx context.Context, ad *platformv1.AppDeployment, deployments ...*appsv1.Deployment) (sets.Set[types.UID], error) {
	owners := sets.New[types.UID]()
	for _, d := range deployments {
		if d != nil {
			owners.Insert(d.UID)
		}
	}
	out := sets.New[types.UID]()
	if owners.Len() == 0 {
		return out, nil
	}
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"))
	if err := r.List(ctx, &list, client.InNamespace(ad.Namespace), client.MatchingFields{platformv1.ReplicaSetAppIndex: ad.Name}); err != nil {
		return nil, fmt.Errorf("list ReplicaSets: %w", err)
	}
	for i := range list.Items {
		rs := &list.Items[i]
		if owners.Has(controllerUID(rs, appsv1.SchemeGroupVersion.WithKind("Deployment"))) {
			out.Insert(rs.UID)
		}
	}
	return out, nil
}

// controllerUID is the UID of obj's controller when it is of kind gvk, ""
// otherwise.
func controllerUID(obj metav1.Object, gvk schema.GroupVersionKind) types.UID {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != gvk.Kind || ref.APIVersion != gvk.GroupVersion().String() {
		return ""
	}
	return ref.UID
}

// ownedDeployment reads the Deployment name from the cache. The cache holds
// only Deployments the operator made; one it made for another owner, or
// that someone took over, is recorded in obs.nameTaken.
func (r *Reconciler) ownedDeployment(ctx context.Context, ad *platformv1.AppDeployment, name string, obs *observation) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	err := r.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: name}, d)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get Deployment %s: %w", name, err)
	case !metav1.IsControlledBy(d, ad):
		obs.nameTaken = "Deployment " + name
		return nil, nil
	}
	return d, nil
}

// ownedService reads the Service <name> from the cache, nil when absent or
// not the application's (the apply says whose it is).
func (r *Reconciler) ownedService(ctx context.Context, ad *platformv1.AppDeployment) (*corev1.Service, error) {
	svc := &corev1.Service{}
	err := r.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: ad.Name}, svc)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get Service %s: %w", ad.Name, err)
	case !metav1.IsControlledBy(svc, ad):
		return nil, nil
	}
	return svc, nil
}

// active is the track the Service <name> selects, as the cache shows it:
// one of a blue-green release's tracks, or "" when it selects both (or
// there is none).
func (o *observation) active() string {
	if o.service == nil {
		return ""
	}
	return o.service.Spec.Selector[platformv1.TrackLabel]
}

// revisionOfDeployment is the revision of a Deployment's pod template.
func revisionOfDeployment(d *appsv1.Deployment) string {
	if d == nil {
		return ""
	}
	return d.Spec.Template.Labels[platformv1.RevisionLabel]
}

// podReady reports whether a pod is ready.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ready counts the ready pods of a track; with revision set, only that
// revision's.
func (o *observation) ready(track, revision string) int32 {
	var n int32
	for i := range o.pods {
		p := &o.pods[i]
		if p.Labels[platformv1.TrackLabel] == track && (revision == "" || p.Labels[platformv1.RevisionLabel] == revision) && podReady(p) {
			n++
		}
	}
	return n
}

// rolledOut reports whether a Deployment has finished rolling out its
// template at replicas: every pod updated and available, as the Deployment
// controller reports it for the current generation.
func rolledOut(d *appsv1.Deployment, replicas int32) bool {
	if d == nil || d.Status.ObservedGeneration < d.Generation {
		return false
	}
	s := d.Status
	return ptr.Deref(d.Spec.Replicas, 1) == replicas && s.UpdatedReplicas == replicas &&
		s.AvailableReplicas >= replicas && s.Replicas == replicas
}

// deploymentDeadlineExceeded is the reason of a Deployment's Progressing
// condition when its controller gave up on a rollout.
const deploymentDeadlineExceeded = "ProgressDeadlineExceeded"

// deadlineExceeded reports whether the Deployment controller gave up on a
// rollout (its Progressing condition is False, ProgressDeadlineExceeded).
func deadlineExceeded(d *appsv1.Deployment) bool {
	if d == nil {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Status == corev1.ConditionFalse && c.Reason == deploymentDeadlineExceeded
		}
	}
	return false
}
