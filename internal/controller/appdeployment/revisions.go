// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/release"
)

// Each revision's pod fields (release.PodFields) are kept in a
// ControllerRevision the AppDeployment owns, as a Deployment's and a
// StatefulSet's are: the spec's own revision from its first pass, and each
// promoted revision status.revisions lists, so that undo restores a
// revision whole, its template included, and not only its image.
//
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch;create;delete

// ownedRevisions lists the application's ControllerRevisions.
func (r *Reconciler) ownedRevisions(ctx context.Context, ad *platformv1.AppDeployment) ([]appsv1.ControllerRevision, error) {
	var list appsv1.ControllerRevisionList
	if err := r.List(ctx, &list, client.InNamespace(ad.Namespace),
		client.MatchingLabels{platformv1.AppNameLabel: ad.Name}); err != nil {
		return nil, fmt.Errorf("list ControllerRevisions: %w", err)
	}
	var out []appsv1.ControllerRevision
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], ad) {
			out = append(out, list.Items[i])
		}
	}
	return out, nil
}

// keptRevisions are the revisions whose ControllerRevision the pass keeps:
// the spec's, the stable Deployment's, and the promoted ones the status
// lists.
func (p *pass) keptRevisions() sets.Set[string] {
	keep := sets.New(p.revision)
	if s := p.obs.stable; s != nil {
		keep.Insert(s.Spec.Template.Labels[platformv1.RevisionLabel])
	}
	for _, rev := range p.next.history {
		keep.Insert(rev.Revision)
	}
	return keep
}

// reconcileRevisions makes the spec's ControllerRevision when it has none
// and deletes those of revisions no longer kept.
func (r *Reconciler) reconcileRevisions(ctx context.Context, ad *platformv1.AppDeployment, p *pass) error {
	keep := p.keptRevisions()
	have := false
	for i := range p.obs.revisions {
		cr := &p.obs.revisions[i]
		rev := cr.Labels[platformv1.RevisionLabel]
		if rev == p.revision {
			have = true
		}
		if keep.Has(rev) {
			continue
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Deleting ControllerRevision", "controllerRevision", klog.KObj(cr))
		if err := r.Delete(ctx, cr, client.Preconditions{UID: &cr.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete ControllerRevision %s: %w", cr.Name, err)
		}
	}
	if have {
		return nil
	}
	data, err := release.RevisionData(&ad.Spec)
	if err != nil {
		return err
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ad.Namespace,
			Name:      release.RevisionName(ad.Name, p.revision),
			Labels: map[string]string{
				platformv1.AppNameLabel:   ad.Name,
				platformv1.ManagedByLabel: platformv1.ManagedByValue,
				platformv1.RevisionLabel:  p.revision,
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ad,
				platformv1.GroupVersion.WithKind("AppDeployment"))},
		},
		// The generation that first asked for the revision: revisions
		// number in the order they were asked for.
		Revision: ad.Generation,
		Data:     data,
	}
	if err := r.Create(ctx, cr); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ControllerRevision %s: %w", cr.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Created ControllerRevision", "controllerRevision", klog.KObj(cr), "revision", p.revision)
	return nil
}
