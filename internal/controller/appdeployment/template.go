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

// Package appdeployment holds the AppDeployment reconciler: it owns the
// stable and canary Deployments and the Service of an application, and
// releases each new version by rolling update, recreate or canary.
package appdeployment

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/release"
)

// ContainerName is the name of the application's one container.
const ContainerName = "app"

// revisionLength is how many hex digits of the template hash name a
// revision: as many as a ReplicaSet's pod-template-hash has characters,
// short enough for a label value and a kubectl column.
const revisionLength = 10

// podTemplate renders the pods an AppDeployment asks for, without the track
// label (stable and canary pods of one revision are the same pods), and
// returns it with its revision: the hash of the template, which changes
// exactly when the pods would.
func podTemplate(ad *platformv1.AppDeployment) (*corev1.PodTemplateSpec, string) {
	s := &ad.Spec
	c := corev1.Container{
		Name:      ContainerName,
		Image:     s.Image,
		Command:   s.Command,
		Args:      s.Args,
		Env:       s.Env,
		Resources: ptr.Deref(s.Resources, corev1.ResourceRequirements{}),
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
	if s.Port != 0 {
		c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: s.Port, Protocol: corev1.ProtocolTCP}}
	}
	if hc := s.HealthCheck; hc.Path != "" {
		port := hc.Port
		if port == 0 {
			port = s.Port
		}
		probe := func() *corev1.Probe {
			return &corev1.Probe{
				ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Path: hc.Path, Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP,
				}},
				InitialDelaySeconds: ptr.Deref(hc.InitialDelaySeconds, 0),
				PeriodSeconds:       orDefault(hc.PeriodSeconds, 10),
				FailureThreshold:    orDefault(hc.FailureThreshold, 3),
				SuccessThreshold:    orDefault(hc.SuccessThreshold, 1),
				TimeoutSeconds:      1,
			}
		}
		c.ReadinessProbe = probe()
		c.LivenessProbe = probe()
		// Liveness restarts a pod; the API requires it to succeed once.
		c.LivenessProbe.SuccessThreshold = 1
	}
	t := &corev1.PodTemplateSpec{}
	t.Labels = map[string]string{
		platformv1.AppNameLabel:   ad.Name,
		platformv1.ManagedByLabel: platformv1.ManagedByValue,
	}
	if v := release.Version(s); v != "" {
		t.Labels[platformv1.AppVersionLabel] = v
	}
	t.Spec.Containers = []corev1.Container{c}
	t.Spec.ServiceAccountName = s.ServiceAccountName
	t.Spec.SecurityContext = &corev1.PodSecurityContext{
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	return t, revisionOf(t)
}

// revisionOf hashes a pod template, as the proof of a Job's origin does.
func revisionOf(t *corev1.PodTemplateSpec) string {
	return provenance.TemplateHash(t)[:revisionLength]
}

// forTrack returns the template of one track: the template with the track
// and revision labels that Deployments select on and queries group by.
func forTrack(t *corev1.PodTemplateSpec, revision, track string) *corev1.PodTemplateSpec {
	out := t.DeepCopy()
	out.Labels[platformv1.TrackLabel] = track
	out.Labels[platformv1.RevisionLabel] = revision
	return out
}

// orDefault is v, or def when v is unset (0).
func orDefault(v, def int32) int32 {
	if v == 0 {
		return def
	}
	return v
}
