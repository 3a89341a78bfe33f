// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/release"
)

// act makes the children what the pass wants, in an order that never leaves
// the application short of pods: the stable Deployment first (it grows
// before the canary shrinks), then the canary, then what is removed.
func (r *Reconciler) act(ctx context.Context, ad *platformv1.AppDeployment, p *pass) error {
	if p.obs.leftAlone() {
		return nil
	}
	c := &p.children
	stable, err := r.applyDeployment(ctx, ad, p, platformv1.TrackStable, c.stableTemplate, c.stableRevision, c.stableReplicas)
	if err != nil || p.obs.nameTaken != "" {
		return err
	}
	if p.obs.stable == nil {
		p.obs.stable = stable
	}
	if c.canaryReplicas != nil {
		if _, err := r.applyDeployment(ctx, ad, p, p.track(), p.template, p.revision, *c.canaryReplicas); err != nil || p.obs.nameTaken != "" {
			return err
		}
	}
	if err := r.reconcileServices(ctx, ad, p); err != nil {
		return err
	}
	// The route sends the canary its share only once its Service exists,
	// and nothing once the canary is no longer wanted, before it goes.
	if err := r.reconcileRoute(ctx, ad, p); err != nil {
		return err
	}
	if c.removeCanary {
		if err := r.removeDeployment(ctx, p.obs.canary); err != nil {
			return err
		}
	}
	if p.obs.leftover != nil && p.stableBack() {
		// Of a release of another strategy: it goes as a canary nobody
		// runs does.
		if err := r.removeDeployment(ctx, p.obs.leftover); err != nil {
			return err
		}
	}
	for _, name := range c.stalePods {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ad.Namespace, Name: name}}
		if err := r.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete pod %s of an earlier canary attempt: %w", name, err)
		}
	}
	return r.reconcileRevisions(ctx, ad, p)
}

// removeDeployment deletes a canary or preview Deployment nobody runs.
func (r *Reconciler) removeDeployment(ctx context.Context, d *appsv1.Deployment) error {
	ctrl.LoggerFrom(ctx).Info("Removing Deployment", "deployment", klog.KObj(d), "track", d.Labels[platformv1.TrackLabel])
	if err := r.Delete(ctx, d, client.Preconditions{UID: &d.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete Deployment %s: %w", d.Name, err)
	}
	return nil
}

// applyDeployment applies the Deployment of a track. A nil template keeps
// the template the Deployment has.
func (r *Reconciler) applyDeployment(ctx context.Context, ad *platformv1.AppDeployment, p *pass, track string,
	template *corev1.PodTemplateSpec, revision string, replicas int32) (*appsv1.Deployment, error) {
	name := ad.Name
	switch track {
	case platformv1.TrackCanary:
		name += platformv1.CanarySuffix
	case platformv1.TrackPreview:
		name += platformv1.PreviewSuffix
	}
	if template == nil {
		template = &p.obs.stable.Spec.Template
	} else {
		template = forTrack(template, revision, track)
	}
	desired, err := desiredDeployment(ad, name, track, template, replicas)
	if err != nil {
		return nil, err
	}
	d := &appsv1.Deployment{}
	res, err := r.applier.Apply(ctx, ad, d, desired)
	var notOwned *apply.NotControlledError
	switch {
	case errors.As(err, &notOwned):
		p.obs.nameTaken = notOwned.Kind + " " + notOwned.Name
		return nil, nil
	case err != nil:
		return nil, err
	}
	if res != apply.Unchanged {
		ctrl.LoggerFrom(ctx).Info("Applied Deployment", "deployment", klog.KObj(d), "result", res,
			"revision", revision, "replicas", replicas)
	}
	r.noteRepairs(p, deploymentKind, client.ObjectKeyFromObject(d), res)
	return d, nil
}

// desiredDeployment is the apply configuration of one track's Deployment.
func desiredDeployment(ad *platformv1.AppDeployment, name, track string, template *corev1.PodTemplateSpec, replicas int32) (*appsv1ac.DeploymentApplyConfiguration, error) {
	tmpl, err := apply.ConfigurationOf[corev1ac.PodTemplateSpecApplyConfiguration](template)
	if err != nil {
		return nil, err
	}
	s := &ad.Spec
	spec := appsv1ac.DeploymentSpec().
		WithReplicas(replicas).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{
			platformv1.AppNameLabel: ad.Name, platformv1.TrackLabel: track,
		})).
		WithTemplate(tmpl).
		WithProgressDeadlineSeconds(s.ProgressDeadlineSeconds).
		WithRevisionHistoryLimit(2)
	if s.MinReadySeconds != nil {
		spec.WithMinReadySeconds(*s.MinReadySeconds)
	}
	switch {
	case track == platformv1.TrackStable && s.Strategy.Type == platformv1.StrategyRecreate:
		spec.WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType))
		spec.WithPaused(s.Paused)
	case track == platformv1.TrackStable && !release.Progressive(&s.Strategy):
		ru := appsv1ac.RollingUpdateDeployment()
		if s.Strategy.MaxSurge != nil {
			ru.WithMaxSurge(*s.Strategy.MaxSurge)
		}
		if s.Strategy.MaxUnavailable != nil {
			ru.WithMaxUnavailable(*s.Strategy.MaxUnavailable)
		}
		spec.WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType).WithRollingUpdate(ru))
		spec.WithPaused(s.Paused)
	default:
		// A canary's Deployments roll at full size: a new pod is ready before
		// an old one goes.
		spec.WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType).
			WithRollingUpdate(appsv1ac.RollingUpdateDeployment().
				WithMaxSurge(intstr.FromString("25%")).WithMaxUnavailable(intstr.FromInt32(0))))
	}
	return appsv1ac.Deployment(name, ad.Namespace).
		WithLabels(map[string]string{
			platformv1.AppNameLabel:   ad.Name,
			platformv1.ManagedByLabel: platformv1.ManagedByValue,
			platformv1.TrackLabel:     track,
		}).
		WithOwnerReferences(ownerReference(ad)).
		WithSpec(spec), nil
}

// ownerReference makes ad its children's controller.
func ownerReference(ad *platformv1.AppDeployment) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(platformv1.GroupVersion.String()).WithKind("AppDeployment").
		WithName(ad.Name).WithUID(ad.UID).WithController(true).WithBlockOwnerDeletion(true)
}

// reconcileServices keeps the Services that expose spec.port: <name>,
// selecting the pods of both tracks so that traffic divides by ready pods
// or, for a weighted canary, the stable pods only, beside <name>-canary
// selecting the canary's, so that the route divides traffic by weight. In
// a blue-green release <name> selects one track, the stable pods or, from
// the switch, the preview's (one write moves every request), beside
// <name>-preview selecting the preview's. Without a port there is no
// Service.
func (r *Reconciler) reconcileServices(ctx context.Context, ad *platformv1.AppDeployment, p *pass) error {
	weighted := ad.Spec.Port != 0 && weightedSpec(ad)
	blueGreen := ad.Spec.Port != 0 && ad.Spec.Strategy.Type == platformv1.StrategyBlueGreen
	stableTrack := "" // both tracks
	switch {
	case weighted:
		// The route's weights move the requests, also a blue-green
		// release's at its switch.
		stableTrack = platformv1.TrackStable
	case blueGreen:
		stableTrack = p.children.active
	}
	for _, svc := range []struct {
		name   string
		wanted bool
		track  string
	}{
		{ad.Name, ad.Spec.Port != 0, stableTrack},
		{ad.Name + platformv1.CanarySuffix, weighted && !blueGreen, platformv1.TrackCanary},
		{ad.Name + platformv1.PreviewSuffix, blueGreen, platformv1.TrackPreview},
	} {
		if !svc.wanted {
			if err := r.deleteService(ctx, ad, svc.name); err != nil {
				return err
			}
			continue
		}
		obj := &corev1.Service{}
		res, err := r.applier.Apply(ctx, ad, obj, desiredService(ad, svc.name, svc.track))
		var notOwned *apply.NotControlledError
		switch {
		case errors.As(err, &notOwned):
			p.obs.nameTaken = notOwned.Kind + " " + notOwned.Name
			return nil
		case err != nil:
			return err
		}
		r.noteRepairs(p, serviceKind, client.ObjectKeyFromObject(obj), res)
	}
	return nil
}

// deleteService deletes the Service name when ad controls it.
func (r *Reconciler) deleteService(ctx context.Context, ad *platformv1.AppDeployment, name string) error {
	svc := &corev1.Service{}
	err := r.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: name}, svc)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get Service %s: %w", name, err)
	case !metav1.IsControlledBy(svc, ad):
		return nil
	}
	r.applier.Forget(client.ObjectKeyFromObject(svc))
	if err := r.Delete(ctx, svc, client.Preconditions{UID: &svc.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete Service %s: %w", name, err)
	}
	return nil
}

// Kinds of the children, as the applier's repair backoff names them.
const (
	deploymentKind = "Deployment"
	serviceKind    = "Service"
)

// noteRepairs asks for a pass when the repair of a child someone changed
// again was held back (see apply.RepairBackoff), and records
// whether the child is contested, for the ChildContested condition.
func (r *Reconciler) noteRepairs(p *pass, kind string, key client.ObjectKey, res apply.Result) {
	if res == apply.Deferred {
		p.wakeAt(p.exact.Add(r.applier.RepairWait(kind, key)))
	}
	c := r.applier.Contest(kind, key)
	if c.Contested {
		p.wakeAt(p.exact.Add(c.EndsIn))
	}
	p.contests = append(p.contests, apply.ContestedChild{
		Key: apply.RepairKey{Kind: kind, NamespacedName: key}, Contest: c})
}

// DesiredService is the apply configuration of the Service that exposes
// spec.port of ad, selecting the pods of both tracks so that traffic divides
// by ready pods. The benchmark's bare client applies the very same object.
func DesiredService(ad *platformv1.AppDeployment) *corev1ac.ServiceApplyConfiguration {
	return desiredService(ad, ad.Name, "")
}

// desiredService is the apply configuration of a Service name exposing
// spec.port of ad, selecting the pods of one track, or of both when track
// is empty.
func desiredService(ad *platformv1.AppDeployment, name, track string) *corev1ac.ServiceApplyConfiguration {
	selector := map[string]string{platformv1.AppNameLabel: ad.Name}
	if track != "" {
		selector[platformv1.TrackLabel] = track
	}
	return corev1ac.Service(name, ad.Namespace).
		WithLabels(map[string]string{
			platformv1.AppNameLabel:   ad.Name,
			platformv1.ManagedByLabel: platformv1.ManagedByValue,
		}).
		WithOwnerReferences(ownerReference(ad)).
		WithSpec(corev1ac.ServiceSpec().
			WithSelector(selector).
			WithPorts(corev1ac.ServicePort().
				WithName("http").WithProtocol(corev1.ProtocolTCP).
				WithPort(ad.Spec.Port).WithTargetPort(intstr.FromString("http"))))
}

// DesiredStableDeployment is the apply configuration of the stable
// Deployment of ad running its spec at full size: what the first release of
// a new AppDeployment, or a rolling release, applies. The benchmark's bare
// client applies the very same object.
func DesiredStableDeployment(ad *platformv1.AppDeployment) (*appsv1ac.DeploymentApplyConfiguration, error) {
	t, rev := podTemplate(ad)
	return desiredDeployment(ad, ad.Name, platformv1.TrackStable, forTrack(t, rev, platformv1.TrackStable),
		release.Replicas(&ad.Spec))
}

// replicasOf is a Deployment's desired size.
func replicasOf(d *appsv1.Deployment) int32 {
	if d == nil {
		return 0
	}
	return ptr.Deref(d.Spec.Replicas, 1)
}
