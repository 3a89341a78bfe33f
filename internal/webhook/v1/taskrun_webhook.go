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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// +kubebuilder:webhook:path=/validate-platform-example-com-v1-taskrun,mutating=false,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=taskruns,verbs=create;update,versions=v1,name=vtaskrun-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhook:path=/mutate-platform-example-com-v1-taskrun,mutating=true,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=taskruns,verbs=create,versions=v1,name=mtaskrun-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5

// TaskRunWebhook keeps run records honest: only the operator records
// scheduled runs and links runs to Jobs; a user may only ask for a manual run
// of a task that exists.
type TaskRunWebhook struct {
	// Reader looks up the named ScheduleTask, past the cache: a task created a
	// moment ago must be found.
	Reader client.Reader
	// OperatorUser returns the user name the operator authenticates as.
	OperatorUser func(context.Context) (string, error)
}

var (
	_ admission.Validator[*platformv1.TaskRun] = &TaskRunWebhook{}
	_ admission.Defaulter[*platformv1.TaskRun] = &TaskRunWebhook{}
)

// Default labels a new TaskRun with its task, so `kubectl get -l` finds a
// manual run at once, before the operator adopts it.
func (w *TaskRunWebhook) Default(_ context.Context, tr *platformv1.TaskRun) error {
	if tr.Spec.ScheduleTaskName == "" {
		return nil
	}
	if tr.Labels == nil {
		tr.Labels = map[string]string{}
	}
	if _, ok := tr.Labels[platformv1.ScheduleTaskLabel]; !ok {
		tr.Labels[platformv1.ScheduleTaskLabel] = tr.Spec.ScheduleTaskName
	}
	return nil
}

// ValidateCreate checks who may record what.
func (w *TaskRunWebhook) ValidateCreate(ctx context.Context, tr *platformv1.TaskRun) (admission.Warnings, error) {
	operator, err := w.byOperator(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if operator {
		return nil, nil
	}
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if tr.Spec.Trigger != platformv1.TriggerManual {
		errs = append(errs, field.Invalid(spec.Child("trigger"), string(tr.Spec.Trigger),
			"must be Manual: only the operator records scheduled runs"))
	}
	if tr.Spec.JobRef != nil {
		errs = append(errs, field.Invalid(spec.Child("jobRef"), tr.Spec.JobRef.Name,
			"must be empty: the operator starts the run's Job and sets jobRef itself"))
	}
	if tr.Spec.ScheduledTime != nil {
		errs = append(errs, field.Invalid(spec.Child("scheduledTime"), tr.Spec.ScheduledTime.UTC().String(),
			"must be empty: only scheduled runs have a scheduled time"))
	}
	if tr.Spec.ScheduleTaskName != "" {
		var st platformv1.ScheduleTask
		err := w.Reader.Get(ctx, client.ObjectKey{Namespace: tr.Namespace, Name: tr.Spec.ScheduleTaskName}, &st)
		switch {
		case apierrors.IsNotFound(err):
			errs = append(errs, field.Invalid(spec.Child("scheduleTaskName"), tr.Spec.ScheduleTaskName,
				fmt.Sprintf("no ScheduleTask of that name in namespace %q", tr.Namespace)))
		case err != nil:
			return nil, apierrors.NewInternalError(fmt.Errorf("look up ScheduleTask %s: %w", tr.Spec.ScheduleTaskName, err))
		case !st.DeletionTimestamp.IsZero():
			errs = append(errs, field.Invalid(spec.Child("scheduleTaskName"), tr.Spec.ScheduleTaskName,
				"the ScheduleTask is being deleted"))
		}
	}
	return nil, invalid(platformv1.GroupVersion.WithKind("TaskRun").GroupKind(), tr.Name, errs)
}

// ValidateUpdate lets only the operator link a run to its Job; the schema's
// CEL rules keep the rest of the spec as it was created.
func (w *TaskRunWebhook) ValidateUpdate(ctx context.Context, old, tr *platformv1.TaskRun) (admission.Warnings, error) {
	if old.Spec.JobRef != nil || tr.Spec.JobRef == nil {
		return nil, nil
	}
	operator, err := w.byOperator(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if operator {
		return nil, nil
	}
	return nil, invalid(platformv1.GroupVersion.WithKind("TaskRun").GroupKind(), tr.Name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "jobRef"), tr.Spec.JobRef.Name, "only the operator may link a run to its Job")})
}

// ValidateDelete allows every deletion.
func (w *TaskRunWebhook) ValidateDelete(context.Context, *platformv1.TaskRun) (admission.Warnings, error) {
	return nil, nil
}

// byOperator reports whether the request comes from the operator itself.
func (w *TaskRunWebhook) byOperator(ctx context.Context) (bool, error) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return false, err
	}
	operator, err := w.OperatorUser(ctx)
	if err != nil {
		return false, err
	}
	return operator != "" && req.UserInfo.Username == operator, nil
}

// SetupTaskRunWebhook registers the TaskRun webhooks with the manager.
func SetupTaskRunWebhook(mgr ctrl.Manager, operatorUser func(context.Context) (string, error)) error {
	w := &TaskRunWebhook{Reader: mgr.GetAPIReader(), OperatorUser: operatorUser}
	return ctrl.NewWebhookManagedBy(mgr, &platformv1.TaskRun{}).
		WithValidator(w).
		WithDefaulter(w).
		Complete()
}
