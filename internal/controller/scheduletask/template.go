// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/podtemplate"
)

// podTemplate renders the pod of every run: spec.template, when there is
// one, with labels over its own, and the task's own fields winning on the
// task container and the pod. Without a template it is the pod tasks had
// before templates existed, so that an upgrade of the operator changes no
// CronJob.
func podTemplate(task *platformv1.ScheduleTask, labels map[string]string) *corev1.PodTemplateSpec {
	s := &task.Spec
	t, podSeccomp := podtemplate.Start(s.Template, labels)
	if t.Spec.RestartPolicy == "" {
		t.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	if sa := s.ServiceAccountName; sa != nil && *sa != "" {
		t.Spec.ServiceAccountName = *sa
	}
	// The API server copies serviceAccountName into the deprecated
	// serviceAccount and, when the first is missing, reads the second
	// back. Owning both means that removing the name from the task removes
	// both, so the old value cannot come back through the mirror.
	if t.Spec.ServiceAccountName == "" {
		t.Spec.ServiceAccountName = t.Spec.DeprecatedServiceAccount
	}
	t.Spec.DeprecatedServiceAccount = t.Spec.ServiceAccountName

	c := podtemplate.Container(t, platformv1.TaskContainerName)
	podtemplate.SetContainerFields(c, s.Image, &s.ContainerFields)
	switch {
	case s.SecurityContext != nil:
		c.SecurityContext = s.SecurityContext.DeepCopy()
	case c.SecurityContext == nil:
		c.SecurityContext = podtemplate.DefaultSecurityContext(podSeccomp)
	}
	return t
}

// podTemplateConfiguration is the pod template as an apply configuration:
// the fields it sets and none other. A container's resources are left out
// when empty (the typed value always has them), so that the operator does
// not claim a field it does not set.
func podTemplateConfiguration(t *corev1.PodTemplateSpec) (*corev1ac.PodTemplateSpecApplyConfiguration, error) {
	ac, err := apply.ConfigurationOf[corev1ac.PodTemplateSpecApplyConfiguration](t)
	if err != nil {
		return nil, fmt.Errorf("render the pod template: %w", err)
	}
	for _, cs := range [][]corev1ac.ContainerApplyConfiguration{ac.Spec.Containers, ac.Spec.InitContainers} {
		for i := range cs {
			if r := cs[i].Resources; r != nil && emptyList(r.Limits) && emptyList(r.Requests) && len(r.Claims) == 0 {
				cs[i].Resources = nil
			}
		}
	}
	return ac, nil
}

// emptyList reports whether a resource list of a configuration holds nothing.
func emptyList(l *corev1.ResourceList) bool {
	return l == nil || len(*l) == 0
}
