// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package podtemplate is what the ScheduleTask and AppDeployment renderers
// share when they turn a spec's optional pod template and its own container
// fields into the pods they ask for: the template copied with the
// operator's labels over it, the pod's default seccomp profile, the
// container the spec's fields fill in, and environment variables merged by
// name. Each renderer decides which of its fields win and how.
package podtemplate

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Start returns a copy of template (an empty one when nil) with labels
// set over its own (admission refuses a template that sets the operator's
// labels, so nothing of the author's is lost), and a pod security context
// whose seccomp profile is the runtime's default where the template sets
// none. podSeccomp reports whether the template set the pod's profile
// itself: a container default must not then override it.
func Start(template *corev1.PodTemplateSpec, labels map[string]string) (t *corev1.PodTemplateSpec, podSeccomp bool) {
	t = &corev1.PodTemplateSpec{}
	if template != nil {
		t = template.DeepCopy()
	}
	if t.Labels == nil {
		t.Labels = make(map[string]string, len(labels))
	}
	maps.Copy(t.Labels, labels)
	if t.Spec.SecurityContext == nil {
		t.Spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	podSeccomp = t.Spec.SecurityContext.SeccompProfile != nil
	if !podSeccomp {
		t.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return t, podSeccomp
}

// Container returns the template's container of that name, adding it
// first when the template has none: the container a spec's own fields
// fill in leads the list, as it did before templates existed.
func Container(t *corev1.PodTemplateSpec, name string) *corev1.Container {
	for i := range t.Spec.Containers {
		if t.Spec.Containers[i].Name == name {
			return &t.Spec.Containers[i]
		}
	}
	t.Spec.Containers = slices.Insert(t.Spec.Containers, 0, corev1.Container{Name: name})
	return &t.Spec.Containers[0]
}

// Image is the image of the template's container of that name; "" when it
// has none.
func Image(t *corev1.PodTemplateSpec, name string) string {
	for _, c := range t.Spec.Containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

// SetContainerFields sets on c, a template's container, a spec's own
// container fields: the image always; command, args and resources when the
// spec sets them; env by name, the spec's variables over the template's.
func SetContainerFields(c *corev1.Container, image string, f *platformv1.ContainerFields) {
	c.Image = image
	if len(f.Command) > 0 {
		c.Command = f.Command
	}
	if len(f.Args) > 0 {
		c.Args = f.Args
	}
	c.Env = mergeEnv(c.Env, f.Env)
	if f.Resources != nil {
		c.Resources = *f.Resources
	}
}

// mergeEnv is the template's variables with the spec's over them: one of
// the same name takes its place, the others follow in the spec's order.
// Without template variables it is the spec's list itself.
func mergeEnv(template, spec []corev1.EnvVar) []corev1.EnvVar {
	if len(template) == 0 {
		return spec
	}
	out := slices.Clone(template)
	for _, e := range spec {
		if i := slices.IndexFunc(out, func(t corev1.EnvVar) bool { return t.Name == e.Name }); i >= 0 {
			out[i] = e
		} else {
			out = append(out, e)
		}
	}
	return out
}

// DefaultSecurityContext is the security context of a container whose
// spec and template set none: no privilege escalation, which any image
// runs with, and, unless the pod sets a seccomp profile, the runtime's
// default one. It does not require a non-root user or drop every
// capability, which would stop images that run as root, such as busybox;
// where a namespace enforces the restricted standard, admission fills
// those in (package podsecurity).
func DefaultSecurityContext(podSeccomp bool) *corev1.SecurityContext {
	f := false
	sc := &corev1.SecurityContext{AllowPrivilegeEscalation: &f}
	if !podSeccomp {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return sc
}
