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

package v1alpha1

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// HubDataAnnotation holds, on a v1alpha1 object, the v1 spec and status it
// was converted from, so that writing it back as v1alpha1 loses none of
// what only v1 has (concurrencyPolicy, timeZone, env, ...).
const HubDataAnnotation = "platform.example.com/v1-data"

// hubData is what the annotation carries.
type hubData struct {
	Spec   platformv1.ScheduleTaskSpec   `json:"spec"`
	Status platformv1.ScheduleTaskStatus `json:"status"`
}

var _ conversion.Convertible = &ScheduleTask{}

// ConvertTo converts this task to v1: the fields the annotation saved come
// back first, then the v1alpha1 fields, which a client may have changed,
// override them.
func (src *ScheduleTask) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*platformv1.ScheduleTask)
	if !ok {
		return fmt.Errorf("cannot convert to %T", dstRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec, dst.Status = platformv1.ScheduleTaskSpec{}, platformv1.ScheduleTaskStatus{}
	if raw, ok := dst.Annotations[HubDataAnnotation]; ok {
		var saved hubData
		// An annotation that does not parse (edited by hand) is dropped: the
		// v1alpha1 fields below still make a whole object.
		if json.Unmarshal([]byte(raw), &saved) == nil {
			dst.Spec, dst.Status = saved.Spec, saved.Status
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

	dst.Status.LastScheduleTime = src.Status.LastScheduleTime
	dst.Status.Active = src.Status.Active
	dst.Status.Conditions = src.Status.Conditions
	return nil
}

// ConvertFrom converts a v1 task to this version, saving in an annotation
// what v1alpha1 cannot hold.
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
	dst.Status = ScheduleTaskStatus{
		LastScheduleTime: src.Status.LastScheduleTime,
		Active:           src.Status.Active,
		Conditions:       src.Status.Conditions,
	}
	data, err := json.Marshal(hubData{Spec: src.Spec, Status: src.Status})
	if err != nil {
		return fmt.Errorf("save v1 fields of ScheduleTask %s: %w", src.Name, err)
	}
	if dst.Annotations == nil {
		dst.Annotations = map[string]string{}
	}
	dst.Annotations[HubDataAnnotation] = string(data)
	return nil
}
