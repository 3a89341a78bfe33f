// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/namespaces"
	"github.com/example/platform-operator/internal/podsecurity"
	"github.com/example/platform-operator/internal/tracing"
	"github.com/example/platform-operator/internal/validation"
	"github.com/example/platform-operator/internal/webhook/admit"
)

// The matchConditions keep the API server from calling the validating
// webhook for an update of an AppDeployment being deleted, and for one that
// changes neither the spec nor an interpreted annotation (a request or its
// requester); and from calling the mutating webhook for anything but a
// create, a change of the spec, a request annotation set or changed, or a
// change of the trace annotation that only admission writes. Keep the lists
// of annotations in the CEL equal to appInterpretedAnnotations and
// appRequestAnnotations.
//
// +kubebuilder:webhook:path=/validate-platform-example-com-v1-appdeployment,mutating=false,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=appdeployments,verbs=create;update,versions=v1,name=vappdeployment-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"request.operation != 'UPDATE' || !has(oldObject.metadata.deletionTimestamp)"},{"name":"interpreted-change","expression":"request.operation != 'UPDATE' || object.spec != oldObject.spec || ['platform.example.com/promote', 'platform.example.com/abort', 'platform.example.com/retry', 'platform.example.com/promote-requested-by', 'platform.example.com/abort-requested-by', 'platform.example.com/retry-requested-by'].exists(k, object.metadata.?annotations[?k] != oldObject.metadata.?annotations[?k])"}]}`
// +kubebuilder:webhook:path=/mutate-platform-example-com-v1-appdeployment,mutating=true,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=appdeployments,verbs=create;update,versions=v1,name=mappdeployment-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"request.operation != 'UPDATE' || !has(oldObject.metadata.deletionTimestamp)"},{"name":"create-spec-or-recorded-annotation-change","expression":"request.operation == 'CREATE' || object.spec != oldObject.spec || ['platform.example.com/promote', 'platform.example.com/abort', 'platform.example.com/retry', 'platform.example.com/traceparent'].exists(k, object.metadata.?annotations[?k] != oldObject.metadata.?annotations[?k])"}]}`

// appRequestAnnotations are the annotations that ask the operator to act on
// an AppDeployment's canary.
var appRequestAnnotations = []string{
	platformv1.PromoteAnnotation,
	platformv1.AbortAnnotation,
	platformv1.RetryAnnotation,
}

// appInterpretedAnnotations are the annotations whose change the validating
// webhook judges: the requests, and the requesters that the controller names
// in its events and that only admission may write.
var appInterpretedAnnotations = []string{
	platformv1.PromoteAnnotation,
	platformv1.AbortAnnotation,
	platformv1.RetryAnnotation,
	platformv1.PromoteAnnotation + platformv1.RequestedBySuffix,
	platformv1.AbortAnnotation + platformv1.RequestedBySuffix,
	platformv1.RetryAnnotation + platformv1.RequestedBySuffix,
}

// AppDeploymentWebhook rejects AppDeployments that the schema cannot judge,
// and those that would let their author run pods they could not create
// directly; and records who asked for each promote, abort and retry.
type AppDeploymentWebhook struct {
	// Client creates SubjectAccessReviews.
	Client client.Client
	// Scope is the canary analysis's: criteria's queries are checked
	// against it for the AppDeployment's namespace.
	Scope analysis.Scope
	// Namespaces reads a new AppDeployment's namespace for its Pod Security
	// level, and the HTTPRoute (and its CRD) a weighted canary names, from
	// the cache when it holds them (see cacheFirst).
	Namespaces client.Reader
}

var (
	_ admission.Validator[*platformv1.AppDeployment] = &AppDeploymentWebhook{}
	_ admission.Defaulter[*platformv1.AppDeployment] = &AppDeploymentWebhook{}
)

// ValidateCreate checks a new AppDeployment.
func (v *AppDeploymentWebhook) ValidateCreate(ctx context.Context, ad *platformv1.AppDeployment) (admission.Warnings, error) {
	return v.validate(ctx, nil, ad, true, true, true)
}

// ValidateUpdate checks a changed AppDeployment. One being deleted, and an
// update that changes neither the spec nor an interpreted annotation, pass
// unjudged; the author's right to create Deployments is asked again only
// when the spec changed.
func (v *AppDeploymentWebhook) ValidateUpdate(ctx context.Context, old, ad *platformv1.AppDeployment) (admission.Warnings, error) {
	if !old.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	specChanged := !equality.Semantic.DeepEqual(old.Spec, ad.Spec)
	if !specChanged && len(changedAnnotations(old.Annotations, ad.Annotations, appInterpretedAnnotations)) == 0 {
		return nil, nil
	}
	return v.validate(ctx, old.Annotations, ad, specChanged, !equality.Semantic.DeepEqual(old.Spec.WorkloadRef, ad.Spec.WorkloadRef),
		old.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute != ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute)
}

// ValidateDelete allows every deletion.
func (v *AppDeploymentWebhook) ValidateDelete(context.Context, *platformv1.AppDeployment) (admission.Warnings, error) {
	return nil, nil
}

// validate judges the AppDeployment by today's rules, its requesters against
// the annotations it had before (oldAnnotations, nil on create) and, when
// asked, the user's right to create Deployments in its namespace,
// (refChanged) to take over the Deployment its workloadRef names and
// (routeChanged) to update the HTTPRoute its trafficRouting names.
func (v *AppDeploymentWebhook) validate(ctx context.Context, oldAnnotations map[string]string, ad *platformv1.AppDeployment,
	checkDeployments, refChanged, routeChanged bool) (admission.Warnings, error) {
	errs, warnings := validation.AppDeployment(ad, v.Scope)
	annotations := field.NewPath("metadata", "annotations")
	for _, k := range appRequestAnnotations {
		if n := len(ad.Annotations[k]); n > platformv1.MaxRequestValueLength {
			errs = append(errs, field.Invalid(annotations.Key(k), fmt.Sprintf("%d characters", n),
				fmt.Sprintf("must be at most %d characters: any new value asks once", platformv1.MaxRequestValueLength)))
		}
	}
	u, err := requestUser(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	errs = append(errs, requesterErrors(oldAnnotations, ad.Annotations, u.Username)...)
	if checkDeployments {
		forbidden, err := v.mayNotCreateDeployments(ctx, u, ad.Namespace)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		errs = append(errs, forbidden...)
	}
	if ref := ad.Spec.WorkloadRef; refChanged && ref.Name != "" {
		forbidden, err := v.mayNotAdopt(ctx, u, ad.Namespace, ref.Name)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		errs = append(errs, forbidden...)
	}
	if checkDeployments { // the spec changed
		invalid, err := routeErrors(ctx, v.Namespaces, ad)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		errs = append(errs, invalid...)
	}
	if route := ad.Spec.Strategy.TrafficRouting.GatewayAPI.HTTPRoute; routeChanged && route != "" {
		forbidden, err := v.mayNotRoute(ctx, u, ad.Namespace, route)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		errs = append(errs, forbidden...)
	}
	return warnings, invalid(platformv1.GroupVersion.WithKind("AppDeployment").GroupKind(), ad.Name, errs)
}

// Default records who asked: for every request annotation that this request
// sets to a new, non-empty value, the requester annotation becomes the
// requesting user, and the controller names that user in its event. It also
// records the trace of a request that creates the AppDeployment or changes
// its spec, which the reconcile acting on it joins (tracing.AnnotateChange).
// The matchConditions call this webhook only for those requests; the checks
// here are for an installation without them.
func (v *AppDeploymentWebhook) Default(ctx context.Context, ad *platformv1.AppDeployment) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return err
	}
	if req.Operation == admissionv1.Create && ad.Spec.Adopts() {
		// The operator scales the adopted Deployment back up before the
		// AppDeployment goes; a finalizer set here saves it a write.
		controllerutil.AddFinalizer(ad, platformv1.WorkloadFinalizer)
	}
	// An adopted Deployment's template is its own, admitted as it is.
	if req.Operation == admissionv1.Create && !ad.Spec.Adopts() {
		restricted, err := restrictedNamespace(ctx, v.Namespaces, ad.Namespace)
		if err != nil {
			return err
		}
		if restricted {
			ad.Spec.Template = podsecurity.RestrictTemplate(ad.Spec.Template, platformv1.AppContainerName)
		}
	}
	var oldAnnotations map[string]string
	specChanged := true
	old, err := admit.Old[*platformv1.AppDeployment](ctx)
	if err != nil {
		return fmt.Errorf("decode the stored AppDeployment: %w", err)
	}
	if old != nil {
		if !old.DeletionTimestamp.IsZero() {
			return nil
		}
		oldAnnotations = old.Annotations
		specChanged = !equality.Semantic.DeepEqual(old.Spec, ad.Spec)
	}
	ad.Annotations = tracing.AnnotateChange(ctx, specChanged, oldAnnotations, ad.Annotations)
	ad.Annotations = stampRequesters(oldAnnotations, ad.Annotations, req.UserInfo.Username)
	return nil
}

// newRequest reports whether the change from old to cur makes the request
// annotation k ask for something: a non-empty value it did not have. The
// controller ignores an empty value, so emptying or removing a request asks
// for nothing and needs no requester.
func newRequest(old, cur map[string]string, k string) bool {
	v, ok := cur[k]
	if !ok || v == "" {
		return false
	}
	ov, ook := old[k]
	return !ook || ov != v
}

// stampRequesters returns cur with the requester annotation of every new
// request (newRequest) set to user. A withdrawn request keeps its requester:
// it still names who made the last request.
func stampRequesters(old, cur map[string]string, user string) map[string]string {
	for _, k := range appRequestAnnotations {
		if newRequest(old, cur, k) {
			cur[k+platformv1.RequestedBySuffix] = user
		}
	}
	return cur
}

// requesterErrors judges the requester annotations of a change from old to
// cur by user. A requester is what admission recorded, so that an event
// saying who promoted, aborted or retried cannot name someone else: with a
// new request it must name the requesting user (the mutating webhook sets it
// so), and otherwise it may not change, except to go away together with a
// request withdrawn in the same change.
func requesterErrors(old, cur map[string]string, user string) field.ErrorList {
	var errs field.ErrorList
	annotations := field.NewPath("metadata", "annotations")
	for _, k := range appRequestAnnotations {
		r := k + platformv1.RequestedBySuffix
		by, set := cur[r]
		if newRequest(old, cur, k) {
			switch {
			case !set:
				errs = append(errs, field.Forbidden(annotations.Key(r),
					fmt.Sprintf("must name the user who sets %s, %q, and is missing: the mutating webhook mappdeployment-v1.platform.example.com sets it", k, user)))
			case by != user:
				errs = append(errs, field.Forbidden(annotations.Key(r),
					fmt.Sprintf("must name the user who sets %s, %q, not %q", k, user, by)))
			}
			continue
		}
		if len(changedAnnotations(old, cur, []string{r})) == 0 {
			continue
		}
		withdrawn := len(changedAnnotations(old, cur, []string{k})) > 0
		if withdrawn && !set {
			continue
		}
		errs = append(errs, field.Forbidden(annotations.Key(r),
			fmt.Sprintf("is set by admission when %s is set to a new value, and only then", k)))
	}
	return errs
}

// mayNotCreateDeployments asks the API server whether the requesting user
// may create Deployments in the namespace: the operator can run any image
// under any ServiceAccount of the namespace, and an AppDeployment must not
// be a way around its author's own RBAC.
func (v *AppDeploymentWebhook) mayNotCreateDeployments(ctx context.Context, u authenticationv1.UserInfo, namespace string) (field.ErrorList, error) {
	ok, err := allowed(ctx, v.Client, u, authorizationv1.ResourceAttributes{
		Namespace: namespace, Verb: "create", Group: "apps", Resource: "deployments",
	})
	if err != nil || ok {
		return nil, err
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec"), fmt.Sprintf(
		"user %q may not create deployments.apps in namespace %q, and an AppDeployment runs its pods as one would", u.Username, namespace))}, nil
}

// mayNotAdopt asks the API server whether the requesting user may read the
// Deployment a workloadRef names and scale it: the operator scales it to 0
// and back, and an AppDeployment must not be a way to stop a Deployment
// its author may not touch. Asked at create and whenever the ref changes.
func (v *AppDeploymentWebhook) mayNotAdopt(ctx context.Context, u authenticationv1.UserInfo, namespace, name string) (field.ErrorList, error) {
	var errs field.ErrorList
	for _, attrs := range []authorizationv1.ResourceAttributes{
		{Namespace: namespace, Verb: "get", Group: "apps", Resource: "deployments", Name: name},
		{Namespace: namespace, Verb: "update", Group: "apps", Resource: "deployments", Subresource: "scale", Name: name},
	} {
		ok, err := allowed(ctx, v.Client, u, attrs)
		if err != nil {
			return nil, err
		}
		if !ok {
			what := attrs.Verb + " deployments.apps"
			if attrs.Subresource != "" {
				what += "/" + attrs.Subresource
			}
			errs = append(errs, field.Forbidden(field.NewPath("spec", "workloadRef", "name"), fmt.Sprintf(
				"user %q may not %s %q in namespace %q, and the operator scales the Deployment it adopts",
				u.Username, what, name, namespace)))
		}
	}
	return errs, nil
}

// mayNotRoute asks the API server whether the requesting user may update
// the HTTPRoute a weighted canary names: the operator sets its weights, and
// an AppDeployment must not be a way to redirect the requests of a route
// its author may not touch. Asked at create and whenever the name changes.
func (v *AppDeploymentWebhook) mayNotRoute(ctx context.Context, u authenticationv1.UserInfo, namespace, name string) (field.ErrorList, error) {
	ok, err := allowed(ctx, v.Client, u, authorizationv1.ResourceAttributes{
		Namespace: namespace, Verb: "update", Group: gatewayv1.GroupName, Resource: "httproutes", Name: name,
	})
	if err != nil || ok {
		return nil, err
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "strategy", "trafficRouting", "gatewayAPI", "httpRoute"), fmt.Sprintf(
		"user %q may not update httproutes.%s %q in namespace %q, and the operator sets the weights of the route a canary names",
		u.Username, gatewayv1.GroupName, name, namespace))}, nil
}

// SetupAppDeploymentWebhook registers the AppDeployment webhooks with the
// manager.
func SetupAppDeploymentWebhook(mgr ctrl.Manager, served namespaces.Set, scope analysis.Scope) error {
	v := &AppDeploymentWebhook{Client: mgr.GetClient(), Scope: scope,
		Namespaces: cacheFirst{cache: mgr.GetCache(), live: mgr.GetAPIReader()}}
	return admit.Register[*platformv1.AppDeployment](mgr,
		servedDefaulter[*platformv1.AppDeployment]{served, v},
		servedValidator[*platformv1.AppDeployment]{served, v})
}
