// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/namespaces"
	"github.com/example/platform-operator/internal/validation"
	"github.com/example/platform-operator/internal/webhook/admit"
)

// parametersPath is the field a refusal of a run's parameters names: args
// when the run sets them, else env.
func parametersPath(s *platformv1.TaskRunSpec) *field.Path {
	if len(s.Args) > 0 {
		return field.NewPath("spec", "args")
	}
	return field.NewPath("spec", "env")
}

// The validating webhook's matchConditions keep the API server from calling
// it for an update of a run being deleted, and for one that changes neither
// the spec, the owner references, nor a label or annotation of the
// operator's (platformv1.OperatorKeyPrefix): see metadata.go.
//
// +kubebuilder:webhook:path=/validate-platform-example-com-v1-taskrun,mutating=false,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=taskruns,verbs=create;update,versions=v1,name=vtaskrun-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"request.operation != 'UPDATE' || !has(oldObject.metadata.deletionTimestamp)"},{"name":"interpreted-change","expression":"request.operation != 'UPDATE' || object.spec != oldObject.spec || object.metadata.?ownerReferences != oldObject.metadata.?ownerReferences || [object, oldObject].exists(o, o.metadata.?labels.orValue({}).exists(k, k.startsWith('platform.example.com/') && object.metadata.?labels[?k] != oldObject.metadata.?labels[?k])) || [object, oldObject].exists(o, o.metadata.?annotations.orValue({}).exists(k, k.startsWith('platform.example.com/') && object.metadata.?annotations[?k] != oldObject.metadata.?annotations[?k]))"}]}`
// +kubebuilder:webhook:path=/mutate-platform-example-com-v1-taskrun,mutating=true,failurePolicy=fail,sideEffects=None,groups=platform.example.com,resources=taskruns,verbs=create,versions=v1,name=mtaskrun-v1.platform.example.com,admissionReviewVersions=v1,timeoutSeconds=5

// TaskRunWebhook keeps run records honest: only the operator records
// scheduled runs, links runs to Jobs, owns runs and writes their operator
// labels and annotations; a user may only ask for a manual run of a task,
// and only with the right to start it.
type TaskRunWebhook struct {
	// Reader looks up the named ScheduleTask, in the cache and, when it is
	// not there, past it: a task created a moment ago must be found (see
	// cacheFirst).
	Reader client.Reader
	// Client creates SubjectAccessReviews.
	Client client.Client
	// OperatorUser returns the user name the operator authenticates as.
	OperatorUser func(context.Context) (string, error)
	// Clock tells the time a backfill run's scheduledTime must not pass;
	// the real one when nil.
	Clock clock.PassiveClock
}

// now is the webhook's time.
func (w *TaskRunWebhook) now() time.Time {
	if w.Clock == nil {
		return time.Now()
	}
	return w.Clock.Now()
}

var (
	_ admission.Validator[*platformv1.TaskRun] = &TaskRunWebhook{}
	_ admission.Defaulter[*platformv1.TaskRun] = &TaskRunWebhook{}
)

// Default labels a new TaskRun with its task, so `kubectl get -l` finds a
// manual run at once, before the operator adopts it, and records who asked
// for a user's run.
func (w *TaskRunWebhook) Default(ctx context.Context, tr *platformv1.TaskRun) error {
	if tr.Spec.ScheduleTaskName != "" {
		if tr.Labels == nil {
			tr.Labels = map[string]string{}
		}
		if _, ok := tr.Labels[platformv1.ScheduleTaskLabel]; !ok {
			tr.Labels[platformv1.ScheduleTaskLabel] = tr.Spec.ScheduleTaskName
		}
	}
	operator, err := w.byOperator(ctx)
	if err != nil || operator {
		return err
	}
	u, err := requestUser(ctx)
	if err != nil {
		return err
	}
	if tr.Annotations == nil {
		tr.Annotations = map[string]string{}
	}
	// A value the user wrote is left for the validator to refuse.
	if _, ok := tr.Annotations[platformv1.RequestedByAnnotation]; !ok {
		tr.Annotations[platformv1.RequestedByAnnotation] = u.Username
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
	u, err := requestUser(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if tr.Spec.Trigger != platformv1.TriggerManual && tr.Spec.Trigger != platformv1.TriggerBackfill {
		errs = append(errs, field.Invalid(spec.Child("trigger"), string(tr.Spec.Trigger),
			"must be Manual or Backfill: only the operator records scheduled and catch-up runs"))
	}
	if tr.Spec.JobRef != nil {
		errs = append(errs, field.Invalid(spec.Child("jobRef"), tr.Spec.JobRef.Name,
			"must be empty: the operator starts the run's Job and sets jobRef itself"))
	}
	if tr.Spec.ScheduledTime != nil && tr.Spec.Trigger != platformv1.TriggerBackfill {
		errs = append(errs, field.Invalid(spec.Child("scheduledTime"), tr.Spec.ScheduledTime.UTC().String(),
			"must be empty: only scheduled, catch-up and backfill runs have a scheduled time"))
	}
	var task *platformv1.ScheduleTask
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
		default:
			task = &st
		}
		var forbidden *field.Error
		if tr.Spec.HasParameters() {
			forbidden, err = mayNotSetParameters(ctx, w.Client, u, parametersPath(&tr.Spec), tr.Namespace)
		} else {
			forbidden, err = mayNotRun(ctx, w.Client, u, spec.Child("scheduleTaskName"), tr.Namespace, tr.Spec.ScheduleTaskName)
		}
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if forbidden != nil {
			errs = append(errs, forbidden)
		}
	}
	if task != nil && tr.Spec.Trigger == platformv1.TriggerBackfill {
		errs = append(errs, validation.BackfillTime(&tr.Spec, task, w.now())...)
	}
	if tr.Spec.HasParameters() {
		var taskSpec *platformv1.ScheduleTaskSpec
		if task != nil {
			taskSpec = &task.Spec
		}
		errs = append(errs, validation.RunParameters(&tr.Spec, taskSpec)...)
	}
	errs = append(errs, userCreateMetadata(tr, task, u.Username)...)
	return nil, invalid(platformv1.GroupVersion.WithKind("TaskRun").GroupKind(), tr.Name, errs)
}

// userCreateMetadata checks the operator's metadata on a user's new run: of
// the operator's labels and annotations only the task label (naming the
// run's task) and the requester (naming the user) may be there, both as the
// mutating webhook sets them; the only owner a run may be created with is
// its task (the one the operator would set).
func userCreateMetadata(tr *platformv1.TaskRun, task *platformv1.ScheduleTask, user string) field.ErrorList {
	var errs field.ErrorList
	labels := field.NewPath("metadata", "labels")
	for _, k := range operatorKeys(nil, tr.Labels) {
		if k == platformv1.ScheduleTaskLabel && tr.Labels[k] == tr.Spec.ScheduleTaskName {
			continue
		}
		errs = append(errs, field.Forbidden(labels.Key(k), fmt.Sprintf(
			"is the operator's: a run may carry only %s, naming its task %q", platformv1.ScheduleTaskLabel, tr.Spec.ScheduleTaskName)))
	}
	annotations := field.NewPath("metadata", "annotations")
	for _, k := range operatorKeys(nil, tr.Annotations) {
		switch {
		case k == platformv1.RequestedByAnnotation && tr.Annotations[k] == user:
		case k == platformv1.RequestedByAnnotation:
			errs = append(errs, field.Forbidden(annotations.Key(k), fmt.Sprintf(
				"must name the requesting user, %q, or be left for admission to set", user)))
		default:
			errs = append(errs, field.Forbidden(annotations.Key(k),
				"is the operator's to set (run numbers, stop requests, links): leave it out"))
		}
	}
	for i, ref := range tr.OwnerReferences {
		if isTaskRef(ref, tr.Spec.ScheduleTaskName) && task != nil && ref.UID == task.UID {
			continue
		}
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "ownerReferences").Index(i), fmt.Sprintf(
			"a run may be owned only by its ScheduleTask %q, and the operator sets that reference", tr.Spec.ScheduleTaskName)))
	}
	return errs
}

// ValidateUpdate lets only the operator link a run to its Job and change the
// operator's labels, annotations and owner references (the schema's CEL
// rules keep the rest of the spec as it was created). A run being deleted
// passes unjudged, so nothing can hold it in Terminating.
func (w *TaskRunWebhook) ValidateUpdate(ctx context.Context, old, tr *platformv1.TaskRun) (admission.Warnings, error) {
	if !old.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	operator, err := w.byOperator(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if operator {
		return nil, nil
	}
	var errs field.ErrorList
	if old.Spec.JobRef == nil && tr.Spec.JobRef != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "jobRef"), tr.Spec.JobRef.Name,
			"only the operator may link a run to its Job"))
	}
	for _, k := range operatorKeys(old.Labels, tr.Labels) {
		if changed := changedAnnotations(old.Labels, tr.Labels, []string{k}); len(changed) > 0 {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "labels").Key(k),
				"is set by the operator and cannot be changed by users"))
		}
	}
	for _, k := range operatorKeys(old.Annotations, tr.Annotations) {
		if changed := changedAnnotations(old.Annotations, tr.Annotations, []string{k}); len(changed) > 0 {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(k),
				"is set by the operator and cannot be changed by users"))
		}
	}
	if !equality.Semantic.DeepEqual(old.OwnerReferences, tr.OwnerReferences) {
		ok, err := w.ownerGoneOnly(ctx, old, tr)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if !ok {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "ownerReferences"),
				"are set by the operator and cannot be changed by users (a run is owned by its task)"))
		}
	}
	return nil, invalid(platformv1.GroupVersion.WithKind("TaskRun").GroupKind(), tr.Name, errs)
}

// ownerGoneOnly reports whether the owner references changed only by losing
// the reference to a task that is being deleted or is gone: that is the
// garbage collector orphaning the run (a delete with propagation Orphan),
// which must not be refused or the task would wait in Terminating.
func (w *TaskRunWebhook) ownerGoneOnly(ctx context.Context, old, tr *platformv1.TaskRun) (bool, error) {
	kept := map[types.UID]metav1.OwnerReference{}
	for _, ref := range tr.OwnerReferences {
		kept[ref.UID] = ref
	}
	if len(kept) != len(tr.OwnerReferences) {
		return false, nil
	}
	var removed []metav1.OwnerReference
	for _, ref := range old.OwnerReferences {
		cur, ok := kept[ref.UID]
		switch {
		case !ok:
			removed = append(removed, ref)
		case !equality.Semantic.DeepEqual(cur, ref):
			return false, nil
		}
		delete(kept, ref.UID)
	}
	if len(kept) > 0 || len(removed) == 0 {
		return false, nil
	}
	for _, ref := range removed {
		if !isTaskRef(ref, tr.Spec.ScheduleTaskName) {
			return false, nil
		}
		var st platformv1.ScheduleTask
		err := w.Reader.Get(ctx, client.ObjectKey{Namespace: tr.Namespace, Name: ref.Name}, &st)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return false, fmt.Errorf("look up ScheduleTask %s: %w", ref.Name, err)
		case st.UID == ref.UID && st.DeletionTimestamp.IsZero():
			return false, nil
		}
	}
	return true, nil
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
func SetupTaskRunWebhook(mgr ctrl.Manager, served namespaces.Set, operatorUser func(context.Context) (string, error)) error {
	w := &TaskRunWebhook{Reader: cacheFirst{cache: mgr.GetCache(), live: mgr.GetAPIReader()}, Client: mgr.GetClient(),
		OperatorUser: operatorUser}
	return admit.Register[*platformv1.TaskRun](mgr,
		servedDefaulter[*platformv1.TaskRun]{served, w},
		servedValidator[*platformv1.TaskRun]{served, w})
}
