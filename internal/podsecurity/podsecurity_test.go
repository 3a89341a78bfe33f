// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package podsecurity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestEnforced_OnlyTheRestrictedLevel(t *testing.T) {
	for labels, want := range map[string]bool{"restricted": true, "baseline": false, "privileged": false, "": false} {
		if got := Enforced(map[string]string{EnforceLabel: labels}); got != want {
			t.Errorf("enforce=%q: %t, want %t", labels, got, want)
		}
	}
}

func TestRestrictTemplate_FillsWhatIsUnsetAndKeepsWhatIsSet(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false)},
		InitContainers:  []corev1.Container{{Name: "migrate", Image: "m:1"}},
		Containers: []corev1.Container{{Name: "proxy", Image: "envoy:1", SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(true),
			Capabilities:             &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}},
		}}},
	}}
	got := RestrictTemplate(tmpl, "app")
	restricted := &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	want := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		// runAsNonRoot false was the author's: kept, for Pod Security
		// admission to judge.
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		InitContainers: []corev1.Container{{Name: "migrate", Image: "m:1", SecurityContext: restricted}},
		Containers: []corev1.Container{
			{Name: "app", SecurityContext: restricted},
			{Name: "proxy", Image: "envoy:1", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(true),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"},
					Drop: []corev1.Capability{"ALL"}},
			}},
		},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restricted template (-want +got):\n%s", diff)
	}
}

func TestRestrictTemplate_NilTemplateGetsTheAppContainerAndPod(t *testing.T) {
	got := RestrictTemplate(nil, "app")
	if len(got.Spec.Containers) != 1 || got.Spec.Containers[0].Name != "app" {
		t.Fatalf("containers %v, want the app container", got.Spec.Containers)
	}
	if !ptr.Deref(got.Spec.SecurityContext.RunAsNonRoot, false) ||
		got.Spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v", got.Spec.SecurityContext)
	}
}

func TestRestrictContainer_PrivilegedKeepsEscalationUnset(t *testing.T) {
	// allowPrivilegeEscalation false with privileged true is refused by the
	// API server; the pod is Pod Security's to refuse, with its message.
	got := RestrictContainer(&corev1.SecurityContext{Privileged: ptr.To(true)})
	if got.AllowPrivilegeEscalation != nil {
		t.Errorf("allowPrivilegeEscalation %v, want unset beside privileged", *got.AllowPrivilegeEscalation)
	}
}

func TestRestrictTaskContainer_AddsTheUserAndSeccompATaskHasNoPodFor(t *testing.T) {
	got := RestrictTaskContainer(&corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)})
	want := &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
