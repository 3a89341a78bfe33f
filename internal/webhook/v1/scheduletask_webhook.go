// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package v1 holds the admission webhooks of the platform.example.com/v1
// kinds: the checks that need code or a question to the API server, where
// the CRD schema and CEL cannot reach.
package v1

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/namespaces"
	"github.com/example/platform-operator/internal/podsecurity"
	"github.com/example/platform-operator/internal/tracing"
	"github.com/example/platform-operator/internal/validation"
	"github.com/example/platform-operator/internal/webhook/admit"
)

// The matchConditions keep the API server from calling the webhook for an
// update of a task being deleted, and for one that changes neither the spec
// nor an interpreted annotation (finalizers, other labels and annotations,
// owner references): see metadata.go. Keep the list of annotations in the CEL
// equal to interpretedTaskAnnotations.
//
// +kubebuilder:webhook:path=/validate-platform-example-com-v1-scheduletask,mutating=false,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=scheduletasks,verbs=create;update,versions=v1,name=vscheduletask-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"request.operation != 'UPDATE' || !has(oldObject.metadata.deletionTimestamp)"},{"name":"interpreted-change","expression":"request.operation != 'UPDATE' || object.spec != oldObject.spec || ['platform.example.com/run-now', 'platform.example.com/run-now-requested-by'].exists(k, object.metadata.?annotations[?k] != oldObject.metadata.?annotations[?k])"}]}`
// +kubebuilder:webhook:path=/mutate-platform-example-com-v1-scheduletask,mutating=true,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=scheduletasks,verbs=create;update,versions=v1,name=mscheduletask-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"request.operation != 'UPDATE' || !has(oldObject.metadata.deletionTimestamp)"},{"name":"create-spec-or-recorded-annotation-change","expression":"request.operation == 'CREATE' || object.spec != oldObject.spec || ['platform.example.com/run-now', 'platform.example.com/traceparent'].exists(k, object.metadata.?annotations[?k] != oldObject.metadata.?annotations[?k])"}]}`
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=localsubjectaccessreviews,verbs=create

// ScheduleTaskWebhook rejects ScheduleTasks that the schema cannot judge,
// and those that would let their author run a workload they could not
// create directly; and records who asked for a run through run-now.
type ScheduleTaskWebhook struct {
	// Client creates SubjectAccessReviews.
	Client client.Client
	// Namespaces reads a new task's namespace for its Pod Security level,
	// from the cache when it holds it (see cacheFirst).
	Namespaces client.Reader
}

var (
	_ admission.Validator[*platformv1.ScheduleTask] = &ScheduleTaskWebhook{}
	_ admission.Defaulter[*platformv1.ScheduleTask] = &ScheduleTaskWebhook{}
)

// ValidateCreate checks a new task.
func (v *ScheduleTaskWebhook) ValidateCreate(ctx context.Context, st *platformv1.ScheduleTask) (admission.Warnings, error) {
	var runNow []string
	if st.Annotations[platformv1.RunNowAnnotation] != "" {
		runNow = []string{platformv1.RunNowAnnotation}
	}
	return nil, v.validate(ctx, st, true, changedAnnotations(nil, st.Annotations, interpretedTaskAnnotations), runNow)
}

// ValidateUpdate checks a changed task. A task being deleted, and an update
// that changes neither the spec nor an interpreted annotation, pass
// unjudged: a finalizer's removal must never wait for today's rules. The
// author's right to create CronJobs is asked again only when the spec
// changed, the right to run only when run-now changed.
func (v *ScheduleTaskWebhook) ValidateUpdate(ctx context.Context, old, st *platformv1.ScheduleTask) (admission.Warnings, error) {
	if !old.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	specChanged := !equality.Semantic.DeepEqual(old.Spec, st.Spec)
	changed := changedAnnotations(old.Annotations, st.Annotations, interpretedTaskAnnotations)
	if !specChanged && len(changed) == 0 {
		return nil, nil
	}
	var runNow []string
	if slices.Contains(changed, platformv1.RunNowAnnotation) && st.Annotations[platformv1.RunNowAnnotation] != "" {
		runNow = []string{platformv1.RunNowAnnotation}
	}
	return nil, v.validate(ctx, st, specChanged, changed, runNow)
}

// ValidateDelete allows every deletion.
func (v *ScheduleTaskWebhook) ValidateDelete(context.Context, *platformv1.ScheduleTask) (admission.Warnings, error) {
	return nil, nil
}

// validate judges the task by today's rules and, as asked, the user's right
// to create CronJobs (checkCronJobs) and to start a run (runNow non-empty).
// changed are the interpreted annotations this request changes; the run-now
// requester among them must be the requesting user (the mutating webhook
// sets it so).
func (v *ScheduleTaskWebhook) validate(ctx context.Context, st *platformv1.ScheduleTask, checkCronJobs bool, changed, runNow []string) error {
	errs := validation.ScheduleTask(st)
	u, err := requestUser(ctx)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if checkCronJobs {
		forbidden, err := v.mayNotCreateCronJobs(ctx, u, st.Namespace)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		errs = append(errs, forbidden...)
	}
	annotations := field.NewPath("metadata", "annotations")
	if len(runNow) > 0 {
		forbidden, err := mayNotRun(ctx, v.Client, u, annotations.Key(platformv1.RunNowAnnotation), st.Namespace, st.Name)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if forbidden != nil {
			errs = append(errs, forbidden)
		}
	}
	if slices.Contains(changed, platformv1.RunNowRequestedByAnnotation) {
		by := st.Annotations[platformv1.RunNowRequestedByAnnotation]
		switch {
		case !slices.Contains(changed, platformv1.RunNowAnnotation):
			errs = append(errs, field.Forbidden(annotations.Key(platformv1.RunNowRequestedByAnnotation),
				"is set by admission when run-now changes, and only then"))
		case by != u.Username:
			errs = append(errs, field.Forbidden(annotations.Key(platformv1.RunNowRequestedByAnnotation),
				fmt.Sprintf("must name the user who sets run-now, %q, not %q", u.Username, by)))
		}
	}
	return invalid(platformv1.GroupVersion.WithKind("ScheduleTask").GroupKind(), st.Name, errs)
}

// Default puts the operator's finalizer on a task at its creation, so the
// operator need not write the task once more to add it; records the trace of
// a request that creates the task or changes its spec, which the reconcile
// acting on it joins (tracing.AnnotateChange); and records who asked for a
// run: whenever a request sets or changes run-now, the run-now requester
// annotation becomes the requesting user, and the operator copies it to the
// TaskRun it starts. The matchConditions call this webhook only for creates
// and such updates; the checks here are for an installation without them.
func (v *ScheduleTaskWebhook) Default(ctx context.Context, st *platformv1.ScheduleTask) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return err
	}
	if req.Operation == admissionv1.Create && st.DeletionTimestamp.IsZero() {
		controllerutil.AddFinalizer(st, platformv1.ScheduleTaskFinalizer)
		restricted, err := restrictedNamespace(ctx, v.Namespaces, st.Namespace)
		if err != nil {
			return err
		}
		if restricted {
			st.Spec.SecurityContext = podsecurity.RestrictTaskContainer(st.Spec.SecurityContext)
			if st.Spec.Template != nil {
				st.Spec.Template = podsecurity.RestrictPodTemplate(st.Spec.Template)
			}
		}
	}
	var oldAnnotations map[string]string
	specChanged := true
	old, err := admit.Old[*platformv1.ScheduleTask](ctx)
	if err != nil {
		return fmt.Errorf("decode the stored task: %w", err)
	}
	if old != nil {
		if !old.DeletionTimestamp.IsZero() {
			return nil
		}
		oldAnnotations = old.Annotations
		specChanged = !equality.Semantic.DeepEqual(old.Spec, st.Spec)
	}
	st.Annotations = tracing.AnnotateChange(ctx, specChanged, oldAnnotations, st.Annotations)
	if len(changedAnnotations(oldAnnotations, st.Annotations, []string{platformv1.RunNowAnnotation})) == 0 {
		return nil
	}
	if st.Annotations == nil {
		st.Annotations = map[string]string{}
	}
	st.Annotations[platformv1.RunNowRequestedByAnnotation] = req.UserInfo.Username
	return nil
}

// mayNotCreateCronJobs asks the API server whether the requesting user may
// create CronJobs in the namespace. The operator's ServiceAccount can run any
// image under any ServiceAccount of the namespace; this check keeps a
// ScheduleTask from being a way around the author's own RBAC.
func (v *ScheduleTaskWebhook) mayNotCreateCronJobs(ctx context.Context, u authenticationv1.UserInfo, namespace string) (field.ErrorList, error) {
	ok, err := allowed(ctx, v.Client, u, authorizationv1.ResourceAttributes{
		Namespace: namespace, Verb: "create", Group: "batch", Resource: "cronjobs",
	})
	if err != nil || ok {
		return nil, err
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
func SetupScheduleTaskWebhook(mgr ctrl.Manager, served namespaces.Set) error {
	v := &ScheduleTaskWebhook{Client: mgr.GetClient(),
		Namespaces: cacheFirst{cache: mgr.GetCache(), live: mgr.GetAPIReader()}}
	return admit.Register[*platformv1.ScheduleTask](mgr,
		servedDefaulter[*platformv1.ScheduleTask]{served, v},
		servedValidator[*platformv1.ScheduleTask]{served, v})
}
