// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	platformv1 "github.com/example/platform-operator/api/v1"
	platformv1alpha1 "github.com/example/platform-operator/api/v1alpha1"
)

// v1alpha1Form returns the problems of a task's deprecated v1alpha1 form.
//
// That form carries the v1 spec fields it lacks in an annotation, and the API
// server refuses a converted object whose annotations exceed
// apivalidation.TotalAnnotationSizeLimitB: one task whose v1alpha1 form does
// not fit would fail every list of tasks in v1alpha1, everyone's. Conversion
// therefore leaves out what does not fit; admission refuses such a task in
// the first place, naming the fields conversion would have to leave out, so
// that only a task stored before this check is ever shown incomplete.
//
// A request that carries platformv1alpha1.OmittedAnnotation was written from
// such an incomplete v1alpha1 form: storing it would drop the fields left
// out, so it is refused.
func v1alpha1Form(st *platformv1.ScheduleTask) field.ErrorList {
	var errs field.ErrorList
	annotations := field.NewPath("metadata", "annotations")
	if omitted, ok := st.Annotations[platformv1alpha1.OmittedAnnotation]; ok {
		errs = append(errs, field.Forbidden(annotations.Key(platformv1alpha1.OmittedAnnotation), fmt.Sprintf(
			"this request was written from a %s form that lacked spec fields %s (they do not fit in annotations); write the task as %s",
			platformv1alpha1.GroupVersion, omitted, platformv1.GroupVersion)))
	}
	omitted, noRoom, err := platformv1alpha1.V1alpha1Omits(st)
	if err != nil {
		return append(errs, field.InternalError(field.NewPath("spec"), err))
	}
	detail := fmt.Sprintf("too long: the %s form of this task would not fit in annotations "+
		"(at most %d bytes of keys and values together, the %s annotation included)",
		platformv1alpha1.GroupVersion, apivalidation.TotalAnnotationSizeLimitB, platformv1alpha1.HubDataAnnotation)
	if noRoom {
		return append(errs, &field.Error{Type: field.ErrorTypeTooLong, Field: annotations.String(),
			BadValue: fmt.Sprintf("%d bytes", annotationsSize(st.Annotations)), Detail: detail})
	}
	spec := field.NewPath("spec")
	for _, name := range omitted {
		errs = append(errs, &field.Error{Type: field.ErrorTypeTooLong, Field: spec.Child(name).String(),
			BadValue: "", Detail: detail})
	}
	return errs
}

// annotationsSize is the size of annotations as the API server counts it.
func annotationsSize(a map[string]string) int {
	n := 0
	for k, v := range a {
		n += len(k) + len(v)
	}
	return n
}
