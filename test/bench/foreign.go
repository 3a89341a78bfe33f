// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"fmt"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The attack of issue 31 (item 2): Deployments of some 700 KB that carry the
// operator's labels, scaled to zero and owned by nothing, so they cost the
// cluster nothing but their storage.
const (
	// foreignObjects is how many the figure is measured at.
	foreignObjects = 200
	// foreignDeploymentBytes is the least each encodes to.
	foreignDeploymentBytes = 700_000
)

// foreignDeployment is one Deployment of the attack: its bulk is in its pod
// template's environment, the way a large configuration would be, spread
// over values below the API server's limits.
func foreignDeployment(namespace, name string, labels map[string]string) *appsv1.Deployment {
	const values, valueBytes = 8, 90_000
	env := make([]corev1.EnvVar, values)
	for i := range env {
		env[i] = corev1.EnvVar{Name: fmt.Sprintf("PAYLOAD_%d", i), Value: strings.Repeat(string(rune('a'+i)), valueBytes)}
	}
	selector := map[string]string{"example.com/attack": name}
	template := maps.Clone(labels)
	maps.Copy(template, selector)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: maps.Clone(labels)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: template},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "main", Image: "registry.example.com/big:v1", Env: env,
				}}},
			},
		},
	}
}

// encodeForeignDeployments encodes n Deployments of the attack, each with a
// UID and resourceVersion of its own as the API server would send them,
// and, with owner, that controller reference.
func encodeForeignDeployments(codec k8sruntime.Encoder, n int, labels map[string]string,
	owner *metav1.OwnerReference) ([][]byte, error) {
	out := make([][]byte, n)
	for i := range out {
		d := foreignDeployment("attacker", fmt.Sprintf("big-%04d", i), labels)
		if owner != nil {
			d.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		d.UID = types.UID(fmt.Sprintf("6b1f0c2e-0000-4000-8000-%012d", i))
		d.ResourceVersion = fmt.Sprint(1000 + i)
		var err error
		if out[i], err = k8sruntime.Encode(codec, d); err != nil {
			return nil, fmt.Errorf("encode Deployment %s: %w", d.Name, err)
		}
	}
	return out, nil
}
