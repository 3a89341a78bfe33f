// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1alpha1

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// HubDataAnnotation holds, on a v1alpha1 object, the v1 spec fields that
// v1alpha1 lacks (concurrencyPolicy, timeZone, args, env, ...), so that
// writing the object back as v1alpha1 loses none of them. It never holds
// status: anyone who may update the task may write this annotation, and
// status is the operator's alone (it converts field by field instead).
const HubDataAnnotation = "platform.example.com/v1-data"

// OmittedAnnotation is put on the v1 object converted from a v1alpha1 one
// whose HubDataAnnotation had to leave spec fields out to fit the API
// server's limit on annotations; its value lists their JSON names. The v1
// object then lacks those fields only because they could not be shown, so
// the ScheduleTask webhook refuses to store it: such a task is written as v1.
const OmittedAnnotation = "platform.example.com/v1-data-omitted"

// hubData is what the annotation carries. Omitted names the spec fields that
// did not fit. An annotation written before status converted natively also
// has a "status" member, which decoding ignores.
type hubData struct {
	Spec    platformv1.ScheduleTaskSpec `json:"spec"`
	Omitted []string                    `json:"omitted,omitempty"`
}

var _ conversion.Convertible = &ScheduleTask{}

// ConvertTo converts this task to v1: the spec fields the annotation saved
// come back first, then the v1alpha1 fields, which a client may have
// changed, override them. Status comes from the v1alpha1 status only.
func (src *ScheduleTask) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*platformv1.ScheduleTask)
	if !ok {
		return fmt.Errorf("cannot convert to %T", dstRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = platformv1.ScheduleTaskSpec{}
	if raw, ok := dst.Annotations[HubDataAnnotation]; ok {
		var saved hubData
		// An annotation that does not parse (edited by hand) is dropped: the
		// v1alpha1 fields below still make a whole object.
		if json.Unmarshal([]byte(raw), &saved) == nil {
			dst.Spec = saved.Spec
			if len(saved.Omitted) > 0 {
				dst.Annotations[OmittedAnnotation] = strings.Join(saved.Omitted, ",")
			}
		}
		delete(dst.Annotations, HubDataAnnotation)
	}

	dst.Spec.Schedule = src.Spec.Schedule
	dst.Spec.Image = src.Spec.Image
	dst.Spec.Command = src.Spec.Command
	dst.Spec.BackoffLimit = src.Spec.BackoffLimit
	dst.Spec.ActiveDeadlineSeconds = src.Spec.ActiveDeadlineSeconds
	dst.Spec.Suspend = src.Spec.Suspend
	if dst.Spec.ConcurrencyPolicy == "" {
		// v1alpha1 had no policy; v1 requires one, and Allow is what a
		// v1alpha1 task always did.
		dst.Spec.ConcurrencyPolicy = platformv1.AllowConcurrent
	}

	s := &src.Status
	dst.Status = platformv1.ScheduleTaskStatus{
		Conditions:            s.Conditions,
		LastScheduleTime:      s.LastScheduleTime,
		LastSuccessfulTime:    s.LastSuccessfulTime,
		LastTaskRunName:       s.LastTaskRunName,
		TriggerCount:          s.TriggerCount,
		Active:                s.Active,
		ActiveRuns:            s.ActiveRuns,
		NextScheduleTime:      s.NextScheduleTime,
		LastResult:            platformv1.RunResult(s.LastResult),
		EffectiveSchedule:     s.EffectiveSchedule,
		ConsecutiveFailures:   s.ConsecutiveFailures,
		MissedRuns:            s.MissedRuns,
		LastMissedTime:        s.LastMissedTime,
		MissedRunsCheckedTime: s.MissedRunsCheckedTime,
		ObservedGeneration:    s.ObservedGeneration,
		HandledRequests:       platformv1.ScheduleTaskHandledRequests(s.HandledRequests),
	}
	return nil
}

// ConvertFrom converts a v1 task to this version, saving in an annotation
// the spec fields v1alpha1 cannot hold. It never fails on a valid object: a
// list of every task in this version must not fail because of one task, so
// when the annotation would not fit beside the task's own annotations it
// leaves out the largest fields, and names them (see OmittedAnnotation).
func (dst *ScheduleTask) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*platformv1.ScheduleTask)
	if !ok {
		return fmt.Errorf("cannot convert from %T", srcRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = ScheduleTaskSpec{
		Schedule:              src.Spec.Schedule,
		Image:                 src.Spec.Image,
		Command:               src.Spec.Command,
		BackoffLimit:          src.Spec.BackoffLimit,
		ActiveDeadlineSeconds: src.Spec.ActiveDeadlineSeconds,
		Suspend:               src.Spec.Suspend,
	}
	s := &src.Status
	dst.Status = ScheduleTaskStatus{
		Conditions:            s.Conditions,
		LastScheduleTime:      s.LastScheduleTime,
		LastSuccessfulTime:    s.LastSuccessfulTime,
		LastTaskRunName:       s.LastTaskRunName,
		TriggerCount:          s.TriggerCount,
		Active:                s.Active,
		ActiveRuns:            s.ActiveRuns,
		NextScheduleTime:      s.NextScheduleTime,
		LastResult:            RunResult(s.LastResult),
		EffectiveSchedule:     s.EffectiveSchedule,
		ConsecutiveFailures:   s.ConsecutiveFailures,
		MissedRuns:            s.MissedRuns,
		LastMissedTime:        s.LastMissedTime,
		MissedRunsCheckedTime: s.MissedRunsCheckedTime,
		ObservedGeneration:    s.ObservedGeneration,
		HandledRequests:       ScheduleTaskHandledRequests(s.HandledRequests),
	}
	delete(dst.Annotations, HubDataAnnotation)
	value, _, fits, err := hubAnnotation(src, annotationsSize(dst.Annotations))
	if err != nil {
		return fmt.Errorf("save v1 fields of ScheduleTask %s: %w", src.Name, err)
	}
	if !fits {
		return nil
	}
	if dst.Annotations == nil {
		dst.Annotations = map[string]string{}
	}
	dst.Annotations[HubDataAnnotation] = value
	return nil
}

// V1alpha1Omits returns the JSON names of the v1 spec fields of the task
// that its v1alpha1 form would leave out of HubDataAnnotation because the
// annotations would not fit the API server's limit (largest first), and
// whether the annotation would be left out altogether (the task's own
// annotations leave no room for it). Admission refuses such a task, naming
// these fields, so that conversion only ever leaves out fields of a task
// stored before that check.
func V1alpha1Omits(src *platformv1.ScheduleTask) (omitted []string, noRoom bool, err error) {
	others := annotationsSize(src.Annotations)
	if v, ok := src.Annotations[HubDataAnnotation]; ok {
		others -= len(HubDataAnnotation) + len(v)
	}
	_, omitted, fits, err := hubAnnotation(src, others)
	return omitted, !fits, err
}

// annotationsSize is the size of annotations as the API server counts it
// against apivalidation.TotalAnnotationSizeLimitB: keys and values in bytes.
func annotationsSize(a map[string]string) int {
	n := 0
	for k, v := range a {
		n += len(k) + len(v)
	}
	return n
}

// hubAnnotation returns the value of HubDataAnnotation for src, given the
// size of the object's other annotations: the v1 spec fields v1alpha1 lacks,
// less the largest of them while the annotations would not fit, and the
// names of those left out. fits is false when not even the annotation
// without any field fits: then there is no annotation.
func hubAnnotation(src *platformv1.ScheduleTask, others int) (value string, omitted []string, fits bool, err error) {
	room := apivalidation.TotalAnnotationSizeLimitB - others - len(HubDataAnnotation)
	spec := v1OnlySpec(&src.Spec)
	value, err = encode(hubData{Spec: spec})
	if err != nil || len(value) <= room {
		return value, nil, err == nil, err
	}
	// Too large: leave out the largest fields until it fits. The fields are
	// handled as raw JSON, so that what is measured is what is written.
	specJSON, err := encode(spec)
	if err != nil {
		return "", nil, false, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(specJSON), &fields); err != nil {
		return "", nil, false, err
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(fields[b]), len(fields[a])), cmp.Compare(a, b))
	})
	for _, name := range names {
		delete(fields, name)
		omitted = append(omitted, name)
		value, err = encode(struct {
			Spec    map[string]json.RawMessage `json:"spec"`
			Omitted []string                   `json:"omitted"`
		}{fields, omitted})
		if err != nil {
			return "", nil, false, err
		}
		if len(value) <= room {
			return value, omitted, true, nil
		}
	}
	return "", omitted, false, nil
}

// v1OnlySpec returns the spec with the fields v1alpha1 has cleared: those
// travel in the v1alpha1 object itself.
func v1OnlySpec(s *platformv1.ScheduleTaskSpec) platformv1.ScheduleTaskSpec {
	out := *s
	out.Schedule, out.Image, out.Command = "", "", nil
	out.BackoffLimit, out.ActiveDeadlineSeconds, out.Suspend = nil, nil, nil
	return out
}

// encode is json.Marshal without HTML escaping: an argument of 16384 '<'
// is 16384 bytes in the annotation, not the 98304 of "\u003c" escapes that
// would push a valid task past the annotations limit.
func encode(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
