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

package v1

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/validation"
)

// The matchConditions keep the API server from calling the webhook for an
// update of an AppDeployment being deleted, and for one that changes neither
// the spec nor a request annotation. Keep the list of annotations in the CEL
// equal to appRequestAnnotations.
//
// +kubebuilder:webhook:path=/validate-platform-example-com-v1-appdeployment,mutating=false,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=appdeployments,verbs=create;update,versions=v1,name=vappdeployment-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"request.operation != 'UPDATE' || !has(oldObject.metadata.deletionTimestamp)"},{"name":"interpreted-change","expression":"request.operation != 'UPDATE' || object.spec != oldObject.spec || ['platform.example.com/promote', 'platform.example.com/abort', 'platform.example.com/retry'].exists(k, object.metadata.?annotations[?k] != oldObject.metadata.?annotations[?k])"}]}`

// appRequestAnnotations are the annotations that ask the operator to act on
// an AppDeployment's canary.
var appRequestAnnotations = []string{
	platformv1.PromoteAnnotation,
	platformv1.AbortAnnotation,
	platformv1.RetryAnnotation,
}

// AppDeploymentWebhook rejects AppDeployments that the schema cannot judge,
// and those that would let their author run pods they could not create
// directly.
type AppDeploymentWebhook struct {
	// Client creates SubjectAccessReviews.
	Client client.Client
}

var _ admission.Validator[*platformv1.AppDeployment] = &AppDeploymentWebhook{}

// ValidateCreate checks a new AppDeployment.
func (v *AppDeploymentWebhook) ValidateCreate(ctx context.Context, ad *platformv1.AppDeployment) (admission.Warnings, error) {
	return v.validate(ctx, ad, true)
}

// ValidateUpdate checks a changed AppDeployment. One being deleted, and an
// update that changes neither the spec nor a request annotation, pass
// unjudged; the author's right to create Deployments is asked again only
// when the spec changed.
func (v *AppDeploymentWebhook) ValidateUpdate(ctx context.Context, old, ad *platformv1.AppDeployment) (admission.Warnings, error) {
	if !old.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	specChanged := !equality.Semantic.DeepEqual(old.Spec, ad.Spec)
	if !specChanged && len(changedAnnotations(old.Annotations, ad.Annotations, appRequestAnnotations)) == 0 {
		return nil, nil
	}
	return v.validate(ctx, ad, specChanged)
}

// ValidateDelete allows every deletion.
func (v *AppDeploymentWebhook) ValidateDelete(context.Context, *platformv1.AppDeployment) (admission.Warnings, error) {
	return nil, nil
}

// validate judges the AppDeployment by today's rules and, when asked, the
// user's right to create Deployments in its namespace.
func (v *AppDeploymentWebhook) validate(ctx context.Context, ad *platformv1.AppDeployment, checkDeployments bool) (admission.Warnings, error) {
	errs, warnings := validation.AppDeployment(ad)
	annotations := field.NewPath("metadata", "annotations")
	for _, k := range appRequestAnnotations {
		if n := len(ad.Annotations[k]); n > platformv1.MaxRequestValueLength {
			errs = append(errs, field.Invalid(annotations.Key(k), fmt.Sprintf("%d characters", n),
				fmt.Sprintf("must be at most %d characters: any new value asks once", platformv1.MaxRequestValueLength)))
		}
	}
	if checkDeployments {
		u, err := requestUser(ctx)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		forbidden, err := v.mayNotCreateDeployments(ctx, u, ad.Namespace)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		errs = append(errs, forbidden...)
	}
	return warnings, invalid(platformv1.GroupVersion.WithKind("AppDeployment").GroupKind(), ad.Name, errs)
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

// SetupAppDeploymentWebhook registers the AppDeployment webhook with the
// manager.
func SetupAppDeploymentWebhook(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &platformv1.AppDeployment{}).
		WithValidator(&AppDeploymentWebhook{Client: mgr.GetClient()}).
		Complete()
}
