// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package podsecurity fills in what the restricted Pod Security Standard
// asks of a pod, where a namespace enforces it and the author left it unset:
// the admission webhooks store it on a new ScheduleTask or AppDeployment, so
// that a manifest written without security contexts (the design documents'
// own) runs there as written. It never overrides a field the author set:
// whoever needs more, or less, says so, and the namespace's Pod Security
// admission judges it.
package podsecurity

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// EnforceLabel is the namespace label of Pod Security admission's enforced
// level, and Restricted its most demanding value.
const (
	EnforceLabel = "pod-security.kubernetes.io/enforce"
	Restricted   = "restricted"
)

// Enforced reports whether a namespace with these labels enforces the
// restricted standard.
func Enforced(namespaceLabels map[string]string) bool {
	return namespaceLabels[EnforceLabel] == Restricted
}

// RestrictContainer returns sc with what the restricted standard asks of
// every container filled in where unset: no privilege escalation, and every
// capability dropped. A nil sc becomes one with just those.
func RestrictContainer(sc *corev1.SecurityContext) *corev1.SecurityContext {
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	if sc.AllowPrivilegeEscalation == nil && !ptr.Deref(sc.Privileged, false) {
		sc.AllowPrivilegeEscalation = ptr.To(false)
	}
	if sc.Capabilities == nil {
		sc.Capabilities = &corev1.Capabilities{}
	}
	if len(sc.Capabilities.Drop) == 0 {
		sc.Capabilities.Drop = []corev1.Capability{"ALL"}
	}
	return sc
}

// RestrictTaskContainer returns a ScheduleTask's container security context
// with RestrictContainer's fields and, since a task has no pod-level one,
// a non-root user and the runtime's default seccomp profile, each where
// unset.
func RestrictTaskContainer(sc *corev1.SecurityContext) *corev1.SecurityContext {
	sc = RestrictContainer(sc)
	if sc.RunAsNonRoot == nil {
		sc.RunAsNonRoot = ptr.To(true)
	}
	if sc.SeccompProfile == nil {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return sc
}

// RestrictPod returns psc with what the restricted standard asks of the
// pod filled in where unset: a non-root user and the runtime's default
// seccomp profile. A nil psc becomes one with just those.
func RestrictPod(psc *corev1.PodSecurityContext) *corev1.PodSecurityContext {
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if psc.RunAsNonRoot == nil {
		psc.RunAsNonRoot = ptr.To(true)
	}
	if psc.SeccompProfile == nil {
		psc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return psc
}

// RestrictTemplate fills in a pod template, every container and init
// container and the pod, with RestrictContainer and RestrictPod. The
// container named app, which a spec's own fields fill in, is added first
// when the template has none, so that it gets its security context here
// too; the renderer keeps a security context the template sets.
func RestrictTemplate(t *corev1.PodTemplateSpec, app string) *corev1.PodTemplateSpec {
	if t == nil {
		t = &corev1.PodTemplateSpec{}
	}
	if !slices.ContainsFunc(t.Spec.Containers, func(c corev1.Container) bool { return c.Name == app }) {
		t.Spec.Containers = slices.Insert(t.Spec.Containers, 0, corev1.Container{Name: app})
	}
	return RestrictPodTemplate(t)
}

// RestrictPodTemplate fills in every container and init container of a
// pod template with RestrictContainer, and the pod with RestrictPod. It is
// for a ScheduleTask's template, whose task container takes its security
// context from spec.securityContext (RestrictTaskContainer).
func RestrictPodTemplate(t *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	for i := range t.Spec.Containers {
		t.Spec.Containers[i].SecurityContext = RestrictContainer(t.Spec.Containers[i].SecurityContext)
	}
	for i := range t.Spec.InitContainers {
		t.Spec.InitContainers[i].SecurityContext = RestrictContainer(t.Spec.InitContainers[i].SecurityContext)
	}
	t.Spec.SecurityContext = RestrictPod(t.Spec.SecurityContext)
	return t
}
