// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package release

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// PodFields returns the fields of spec that make its pods, everything a
// revision is: image, version, command, args, env, resources, port,
// healthCheck, serviceAccountName and template. The rest (replicas, the
// strategy, rollback) says how a revision is released, not what it is.
func PodFields(spec *platformv1.AppDeploymentSpec) platformv1.AppDeploymentSpec {
	out := platformv1.AppDeploymentSpec{
		Image:              spec.Image,
		Version:            spec.Version,
		ContainerFields:    spec.ContainerFields,
		Port:               spec.Port,
		HealthCheck:        spec.HealthCheck,
		ServiceAccountName: spec.ServiceAccountName,
		Template:           spec.Template,
	}
	return *out.DeepCopy()
}

// SetPodFields sets on spec the pod fields of from (PodFields), leaving the
// rest of spec as it is: what undo puts back.
func SetPodFields(spec *platformv1.AppDeploymentSpec, from *platformv1.AppDeploymentSpec) {
	f := PodFields(from)
	spec.Image, spec.Version, spec.ContainerFields = f.Image, f.Version, f.ContainerFields
	spec.Port, spec.HealthCheck, spec.ServiceAccountName, spec.Template = f.Port, f.HealthCheck, f.ServiceAccountName, f.Template
}

// revisionData is what a ControllerRevision of an AppDeployment holds: its
// pod fields, under spec as in the AppDeployment itself.
type revisionData struct {
	Spec platformv1.AppDeploymentSpec `json:"spec"`
}

// RevisionData encodes the pod fields of spec for a ControllerRevision.
func RevisionData(spec *platformv1.AppDeploymentSpec) (runtime.RawExtension, error) {
	raw, err := json.Marshal(revisionData{Spec: PodFields(spec)})
	if err != nil {
		return runtime.RawExtension{}, err
	}
	return runtime.RawExtension{Raw: raw}, nil
}

// RevisionSpec decodes the pod fields a ControllerRevision of an
// AppDeployment holds.
func RevisionSpec(cr *appsv1.ControllerRevision) (*platformv1.AppDeploymentSpec, error) {
	var d revisionData
	if err := json.Unmarshal(cr.Data.Raw, &d); err != nil {
		return nil, fmt.Errorf("ControllerRevision %s: %w", cr.Name, err)
	}
	return &d.Spec, nil
}

// RevisionName is the name of the ControllerRevision that keeps an
// AppDeployment's revision: unique per revision, found without a list.
func RevisionName(app, revision string) string {
	return app + "-" + revision
}
