// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/release"
)

// DefaultWorkloadPoll is how often an AppDeployment with a workloadRef
// reads its Deployment again (Reconciler.WorkloadPoll). The Deployment is
// read past the cache (the manager caches only what it owns), so a change
// of its pod template is seen within this, not at once.
const DefaultWorkloadPoll = 15 * time.Second

// Reasons of the events about the referenced Deployment.
const (
	// EventWorkloadScaledDown: the referenced Deployment was scaled to 0,
	// the AppDeployment's own stable pods being ready.
	EventWorkloadScaledDown = "WorkloadScaledDown"
	// EventWorkloadRestored: the referenced Deployment was scaled back up
	// as its AppDeployment was deleted.
	EventWorkloadRestored = "WorkloadRestored"
)

// workloadProblem is why a pass cannot follow the referenced Deployment.
type workloadProblem struct{ reason, message string }

// observeWorkload reads the Deployment spec.workloadRef names, past the
// cache, into obs: the Deployment when it is the one pinned in status (or
// none is pinned yet), else the problem, and the status to record.
func (r *Reconciler) observeWorkload(ctx context.Context, ad *platformv1.AppDeployment, obs *observation) error {
	if !ad.Spec.Adopts() {
		return nil
	}
	ref := ad.Spec.WorkloadRef
	var pinned *platformv1.WorkloadStatus
	// A new name is a new adoption: the author was asked again.
	if w := ad.Status.Workload; w.Name == ref.Name && w.UID != "" {
		pinned = &w
	}
	obs.workloadStatus = pinned
	d := &appsv1.Deployment{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: ref.Name}, d)
	switch {
	case apierrors.IsNotFound(err):
		obs.workloadProblem = &workloadProblem{platformv1.ReasonWorkloadNotFound, fmt.Sprintf(
			"Deployment %s, named by spec.workloadRef, does not exist; the AppDeployment's pods are left as they are", ref.Name)}
	case err != nil:
		return fmt.Errorf("read Deployment %s of spec.workloadRef: %w", ref.Name, err)
	case pinned != nil && pinned.UID != d.UID:
		obs.workloadProblem = &workloadProblem{platformv1.ReasonWorkloadReplaced, fmt.Sprintf(
			"Deployment %s was deleted and made again (UID %s, adopted %s); it is not followed silently: "+
				"to adopt it, point spec.workloadRef at it under another name, or delete and re-create the AppDeployment",
			ref.Name, d.UID, pinned.UID)}
	default:
		obs.workload = d
		obs.workloadStatus = &platformv1.WorkloadStatus{Name: d.Name, UID: d.UID}
	}
	return nil
}

// withWorkload returns a copy of ad whose spec runs the Deployment's pod
// template: its template, and its application container's image as the
// image (so the version, the revision and the status read as for any
// AppDeployment).
func withWorkload(ad *platformv1.AppDeployment, d *appsv1.Deployment) *platformv1.AppDeployment {
	out := ad.DeepCopy()
	t := d.Spec.Template.DeepCopy()
	out.Spec.Template = t
	out.Spec.Image = appImage(t)
	return out
}

// appContainerName is the name of a rendered or adopted template's
// application container: the one named ContainerName, else (a template
// adopted from a Deployment that has none) its first container.
func appContainerName(t *corev1.PodTemplateSpec) string {
	for _, c := range t.Spec.Containers {
		if c.Name == ContainerName {
			return ContainerName
		}
	}
	if len(t.Spec.Containers) > 0 {
		return t.Spec.Containers[0].Name
	}
	return ContainerName
}

// scaleDownWorkload scales the referenced Deployment to 0 once the
// AppDeployment's own release is ready: from then on its pods serve, and
// the Deployment's would only double them.
func (r *Reconciler) scaleDownWorkload(ctx context.Context, ad *platformv1.AppDeployment, obs *observation,
	status *platformv1.AppDeploymentStatus) error {
	d := obs.workload
	if d == nil || status.Phase != platformv1.PhaseHealthy || ptr.Deref(d.Spec.Replicas, 1) == 0 {
		return nil
	}
	if err := r.scaleWorkload(ctx, d, 0); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Scaled the referenced Deployment to 0", "deployment", klog.KObj(d))
	r.Recorder.Eventf(ad, d, corev1.EventTypeNormal, EventWorkloadScaledDown, "Scale",
		"Scaled Deployment %s to 0: the AppDeployment's own pods are ready", d.Name)
	return nil
}

// scaleWorkload sets the replicas of d through its scale subresource, the
// right an author of a workloadRef must have, on d itself: a Deployment
// made again under its name has another UID, and is not touched.
func (r *Reconciler) scaleWorkload(ctx context.Context, d *appsv1.Deployment, replicas int32) error {
	patch := fmt.Sprintf(`{"metadata":{"uid":%q},"spec":{"replicas":%d}}`, d.UID, replicas)
	// The answer is a Scale, written into the object patched: a copy.
	if err := r.SubResource("scale").Patch(ctx, d.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("scale Deployment %s to %d: %w", d.Name, replicas, err)
	}
	return nil
}

// finalizeWorkload keeps the workload finalizer on an AppDeployment that
// has a workloadRef and takes it off one that has none. It reports whether
// it wrote the AppDeployment.
func (r *Reconciler) finalizeWorkload(ctx context.Context, ad *platformv1.AppDeployment) (bool, error) {
	want := ad.Spec.Adopts()
	if controllerutil.ContainsFinalizer(ad, platformv1.WorkloadFinalizer) == want {
		return false, nil
	}
	patch := client.MergeFromWithOptions(ad.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if want {
		controllerutil.AddFinalizer(ad, platformv1.WorkloadFinalizer)
	} else {
		controllerutil.RemoveFinalizer(ad, platformv1.WorkloadFinalizer)
	}
	if err := r.Patch(ctx, ad, patch); err != nil {
		return false, fmt.Errorf("update the finalizers: %w", err)
	}
	return true, nil
}

// restoreWorkload, for an AppDeployment being deleted, scales the
// Deployment it adopted back to the AppDeployment's replicas (when it is
// still the one adopted and still at 0), then lets the AppDeployment go.
func (r *Reconciler) restoreWorkload(ctx context.Context, ad *platformv1.AppDeployment) error {
	if !controllerutil.ContainsFinalizer(ad, platformv1.WorkloadFinalizer) {
		return nil
	}
	if w := ad.Status.Workload; w.UID != "" {
		d := &appsv1.Deployment{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: w.Name}, d)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("read Deployment %s of spec.workloadRef: %w", w.Name, err)
		case d.UID == w.UID && ptr.Deref(d.Spec.Replicas, 1) == 0:
			replicas := release.Replicas(&ad.Spec)
			if err := r.scaleWorkload(ctx, d, replicas); err != nil {
				return err
			}
			ctrl.LoggerFrom(ctx).Info("Scaled the referenced Deployment back up", "deployment", klog.KObj(d), "replicas", replicas)
			r.Recorder.Eventf(ad, d, corev1.EventTypeNormal, EventWorkloadRestored, "Scale",
				"Scaled Deployment %s back to %d replicas: the AppDeployment is being deleted", d.Name, replicas)
		}
	}
	patch := client.MergeFromWithOptions(ad.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(ad, platformv1.WorkloadFinalizer)
	if err := r.Patch(ctx, ad, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove the finalizer: %w", err)
	}
	return nil
}
