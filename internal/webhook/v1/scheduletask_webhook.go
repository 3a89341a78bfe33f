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

// Package v1 holds the admission webhooks of the platform.example.com/v1
// kinds: the checks that need code or a question to the API server, where
// the CRD schema and CEL cannot reach.
package v1

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/validation"
)

// +kubebuilder:webhook:path=/validate-platform-example-com-v1-scheduletask,mutating=false,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=scheduletasks,verbs=create;update,versions=v1,name=vscheduletask-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// ScheduleTaskValidator rejects ScheduleTasks that the schema cannot judge,
// and those that would let their author run a workload they could not
// create directly.
type ScheduleTaskValidator struct {
	// Client creates SubjectAccessReviews.
	Client client.Client
}

var _ admission.Validator[*platformv1.ScheduleTask] = &ScheduleTaskValidator{}

// ValidateCreate checks a new task.
func (v *ScheduleTaskValidator) ValidateCreate(ctx context.Context, st *platformv1.ScheduleTask) (admission.Warnings, error) {
	return nil, v.validate(ctx, st, true)
}

// ValidateUpdate checks a changed task; the author's rights are asked again
// only when the spec changed, as metadata edits run nothing new.
func (v *ScheduleTaskValidator) ValidateUpdate(ctx context.Context, old, st *platformv1.ScheduleTask) (admission.Warnings, error) {
	return nil, v.validate(ctx, st, !equality.Semantic.DeepEqual(old.Spec, st.Spec))
}

// ValidateDelete allows every deletion.
func (v *ScheduleTaskValidator) ValidateDelete(context.Context, *platformv1.ScheduleTask) (admission.Warnings, error) {
	return nil, nil
}

func (v *ScheduleTaskValidator) validate(ctx context.Context, st *platformv1.ScheduleTask, checkRights bool) error {
	errs := validation.ScheduleTask(st)
	if checkRights {
		forbidden, err := v.mayNotCreateCronJobs(ctx, st.Namespace)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		errs = append(errs, forbidden...)
	}
	return invalid(platformv1.GroupVersion.WithKind("ScheduleTask").GroupKind(), st.Name, errs)
}

// mayNotCreateCronJobs asks the API server whether the requesting user may
// create CronJobs in the namespace. The operator's ServiceAccount can run any
// image under any ServiceAccount of the namespace; this check keeps a
// ScheduleTask from being a way around the author's own RBAC.
func (v *ScheduleTaskValidator) mayNotCreateCronJobs(ctx context.Context, namespace string) (field.ErrorList, error) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil, err
	}
	u := req.UserInfo
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, Groups: u.Groups, UID: u.UID, Extra: map[string]authorizationv1.ExtraValue{},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: "create", Group: "batch", Resource: "cronjobs",
		},
	}}
	for k, vals := range u.Extra {
		sar.Spec.Extra[k] = authorizationv1.ExtraValue(vals)
	}
	if err := v.Client.Create(ctx, sar); err != nil {
		return nil, fmt.Errorf("ask the API server whether %s may create CronJobs: %w", u.Username, err)
	}
	if sar.Status.Allowed {
		return nil, nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec"), fmt.Sprintf(
		"user %q may not create cronjobs.batch in namespace %q, and a ScheduleTask runs its container as one would", u.Username, namespace))}, nil
}

// invalid turns field errors into the API's status: HTTP 422 Invalid (403
// Forbidden when the only problem is the author's rights), every problem in
// one message as `<field>: <what is wrong> (<value>)`, and each as a cause
// that clients can read field by field.
func invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	status := apierrors.NewInvalid(gk, name, errs)
	status.ErrStatus.Message = fmt.Sprintf("%s %q is invalid: %s", gk.Kind, name, strings.Join(validation.Format(errs), "; "))
	if onlyForbidden(errs) {
		status.ErrStatus.Code = http.StatusForbidden
		status.ErrStatus.Reason = metav1.StatusReasonForbidden
		status.ErrStatus.Message = fmt.Sprintf("%s %q is forbidden: %s", gk.Kind, name, strings.Join(validation.Format(errs), "; "))
	}
	return status
}

func onlyForbidden(errs field.ErrorList) bool {
	for _, e := range errs {
		if e.Type != field.ErrorTypeForbidden {
			return false
		}
	}
	return true
}

// SetupScheduleTaskWebhook registers the ScheduleTask webhooks with the manager.
func SetupScheduleTaskWebhook(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &platformv1.ScheduleTask{}).
		WithValidator(&ScheduleTaskValidator{Client: mgr.GetClient()}).
		Complete()
}
