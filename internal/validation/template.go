// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Pod labels the operator sets, and AppDeployments select on, beside those
// under operatorPrefix; a template may not set them.
var (
	appPodLabels  = []string{platformv1.AppNameLabel, platformv1.AppVersionLabel, platformv1.ManagedByLabel}
	taskPodLabels = []string{platformv1.ManagedByLabel}
)

// operatorPrefix begins every other label the operator puts on pods.
const operatorPrefix = "platform.example.com/"

// podTemplate returns what is wrong with a spec's pod template beyond what
// the schema checks: labels that are the operator's, a restartPolicy the
// workload cannot have, a container the API server would refuse for want of
// an image, and a size over platformv1.MaxPodTemplateBytes. operatorLabels
// are the kind's own pod labels; restartPolicies are the ones allowed, the
// first the one the kind needs most. appContainer is the container the
// spec's own fields fill in, image included.
func podTemplate(path *field.Path, t *corev1.PodTemplateSpec, appContainer string, operatorLabels []string,
	restartPolicies ...corev1.RestartPolicy) field.ErrorList {
	if t == nil {
		return nil
	}
	var errs field.ErrorList
	labels := path.Child("metadata", "labels")
	for _, k := range slices.Sorted(maps.Keys(t.Labels)) {
		if slices.Contains(operatorLabels, k) || strings.HasPrefix(k, operatorPrefix) {
			errs = append(errs, field.Invalid(labels.Key(k), t.Labels[k],
				"is a label the operator sets on the pods; use another key"))
		}
	}
	if p := t.Spec.RestartPolicy; p != "" && !slices.Contains(restartPolicies, p) {
		errs = append(errs, field.NotSupported(path.Child("spec", "restartPolicy"), p, restartPolicies))
	}
	containers := path.Child("spec", "containers")
	for i, c := range t.Spec.Containers {
		if c.Image == "" && c.Name != appContainer {
			errs = append(errs, field.Required(containers.Index(i).Child("image"),
				fmt.Sprintf("every container but %q, whose image is spec.image, needs one", appContainer)))
		}
	}
	for i, c := range t.Spec.InitContainers {
		if c.Image == "" {
			errs = append(errs, field.Required(path.Child("spec", "initContainers").Index(i).Child("image"), "an init container needs an image"))
		}
	}
	if data, err := json.Marshal(t); err == nil && len(data) > platformv1.MaxPodTemplateBytes {
		errs = append(errs, field.Invalid(path, fmt.Sprintf("%d bytes", len(data)),
			fmt.Sprintf("must hold at most %d bytes as JSON", platformv1.MaxPodTemplateBytes)))
	}
	return errs
}
