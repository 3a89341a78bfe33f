// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package appdeployment holds the AppDeployment reconciler: it owns the
// stable and canary Deployments and the Service of an application, and
// releases each new version by rolling update, recreate or canary.
package appdeployment

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/podtemplate"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/release"
)

// ContainerName is the application container's name.
const ContainerName = platformv1.AppContainerName

// revisionLength is how many hex digits of the template hash name a
// revision: as many as a ReplicaSet's pod-template-hash has characters,
// short enough for a label value and a kubectl column.
const revisionLength = 10

// podTemplate renders the pods an AppDeployment asks for, without the track
// label (stable and canary pods of one revision are the same pods), and
// returns it with its revision: the hash of the template, which changes
// exactly when the pods would. It starts from spec.template, when there is
// one, and the spec's own fields win over it on the application container
// and the pod (applyContainerFields); without a template the pods are what
// they were before templates existed, so that an upgrade of the operator
// starts no release.
func podTemplate(ad *platformv1.AppDeployment) (*corev1.PodTemplateSpec, string) {
	s := &ad.Spec
	labels := map[string]string{
		platformv1.AppNameLabel:   ad.Name,
		platformv1.ManagedByLabel: platformv1.ManagedByValue,
	}
	if v := release.Version(s); v != "" {
		labels[platformv1.AppVersionLabel] = v
	}
	t, podSeccomp := podtemplate.Start(s.Template, labels)
	if s.ServiceAccountName != "" || s.Template == nil {
		t.Spec.ServiceAccountName = s.ServiceAccountName
	}
	name := ContainerName
	if s.Adopts() {
		name = appContainerName(t)
	}
	applyContainerFields(podtemplate.Container(t, name), s, podSeccomp)
	return t, revisionOf(t)
}

// appImage is the image of a rendered template's application container.
func appImage(t *corev1.PodTemplateSpec) string {
	return podtemplate.Image(t, appContainerName(t))
}

// applyContainerFields sets on the application container what the spec's
// own fields say: the image always; command, args, resources, the port and
// the health check's probes when set; env by name, the spec's over the
// template's. A container without a security context gets no privilege
// escalation and, unless the pod sets a seccomp profile, the runtime's
// default one; one with a security context keeps it as written.
func applyContainerFields(c *corev1.Container, s *platformv1.AppDeploymentSpec, podSeccomp bool) {
	podtemplate.SetContainerFields(c, s.Image, &s.ContainerFields)
	if c.SecurityContext == nil {
		c.SecurityContext = podtemplate.DefaultSecurityContext(podSeccomp)
	}
	if s.Port != 0 {
		c.Ports = withPort(c.Ports, corev1.ContainerPort{Name: "http", ContainerPort: s.Port, Protocol: corev1.ProtocolTCP})
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
}

// withPort is ports with p in the place of the port of its name or number,
// or added last.
func withPort(ports []corev1.ContainerPort, p corev1.ContainerPort) []corev1.ContainerPort {
	i := slices.IndexFunc(ports, func(q corev1.ContainerPort) bool {
		return q.Name == p.Name || q.ContainerPort == p.ContainerPort
	})
	if i < 0 {
		return append(ports, p)
	}
	out := slices.Clone(ports)
	out[i] = p
	return out
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
