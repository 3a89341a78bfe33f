// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// taskLabels are the labels DesiredCronJob gives a task's pods.
func taskLabels(name string) map[string]string {
	return map[string]string{platformv1.ScheduleTaskLabel: name, platformv1.ManagedByLabel: platformv1.ManagedByValue}
}

func TestPodTemplate_TheTasksFieldsWinOnTheTaskContainerAndTheRestPassesThrough(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "backup")
	task.Spec.Image = "backup:v2"
	task.Spec.Command = []string{"/backup"}
	task.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "full"}, {Name: "NEW", Value: "1"}}
	task.Spec.ServiceAccountName = ptr.To("backup")
	task.Spec.Template = &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "data"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyOnFailure,
			Containers: []corev1.Container{
				{Name: "log-shipper", Image: "shipper:v1"},
				{Name: "task", Image: "ignored:v0", Command: []string{"/ignored"}, Args: []string{"--kept"},
					Env:          []corev1.EnvVar{{Name: "MODE", Value: "incremental"}, {Name: "KEEP", Value: "yes"}},
					VolumeMounts: []corev1.VolumeMount{{Name: "creds", MountPath: "/creds"}}},
			},
			Volumes: []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}}},
			Tolerations:        []corev1.Toleration{{Key: "dedicated", Value: "backup", Effect: corev1.TaintEffectNoSchedule}},
			ServiceAccountName: "template-sa",
		},
	}
	before := task.Spec.Template.DeepCopy()

	got := podTemplate(task, taskLabels("backup"))

	if diff := cmp.Diff(before, task.Spec.Template); diff != "" {
		t.Errorf("the task's template was changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"team": "data", platformv1.ScheduleTaskLabel: "backup",
		platformv1.ManagedByLabel: platformv1.ManagedByValue}, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if got.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("restartPolicy %q, want the template's OnFailure", got.Spec.RestartPolicy)
	}
	if got.Spec.ServiceAccountName != "backup" || got.Spec.DeprecatedServiceAccount != "backup" {
		t.Errorf("service account %q/%q, want the task's", got.Spec.ServiceAccountName, got.Spec.DeprecatedServiceAccount)
	}
	if len(got.Spec.Containers) != 2 || got.Spec.Containers[0].Name != "log-shipper" {
		t.Fatalf("containers %v, want the template's two in its order", got.Spec.Containers)
	}
	c := got.Spec.Containers[1]
	if c.Image != "backup:v2" || !cmp.Equal(c.Command, []string{"/backup"}) || !cmp.Equal(c.Args, []string{"--kept"}) {
		t.Errorf("task container image %q command %v args %v: want the task's image and command, the template's args",
			c.Image, c.Command, c.Args)
	}
	wantEnv := []corev1.EnvVar{{Name: "MODE", Value: "full"}, {Name: "KEEP", Value: "yes"}, {Name: "NEW", Value: "1"}}
	if diff := cmp.Diff(wantEnv, c.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if len(c.VolumeMounts) != 1 || len(got.Spec.Volumes) != 1 || len(got.Spec.Tolerations) != 1 {
		t.Errorf("mounts %v, volumes %v, tolerations %v: want the template's", c.VolumeMounts, got.Spec.Volumes, got.Spec.Tolerations)
	}
	if sc := c.SecurityContext; sc == nil || ptr.Deref(sc.AllowPrivilegeEscalation, true) {
		t.Errorf("task container securityContext %v, want no privilege escalation", sc)
	}
	if sc := got.Spec.Containers[0].SecurityContext; sc != nil {
		t.Errorf("sidecar securityContext %v, want the template's (none)", sc)
	}
}

func TestPodTemplate_AddsTheTaskContainerFirstAndKeepsThePodsSeccompChoice(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t")
	task.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		SecurityContext:    &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}},
		Containers:         []corev1.Container{{Name: "helper", Image: "helper:v1"}},
		ServiceAccountName: "template-sa",
	}}
	got := podTemplate(task, taskLabels("t"))
	if got.Spec.Containers[0].Name != platformv1.TaskContainerName || got.Spec.Containers[0].Image != task.Spec.Image {
		t.Errorf("first container %q image %q, want the task's", got.Spec.Containers[0].Name, got.Spec.Containers[0].Image)
	}
	if got.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never when the template sets none", got.Spec.RestartPolicy)
	}
	if p := got.Spec.SecurityContext.SeccompProfile.Type; p != corev1.SeccompProfileTypeUnconfined {
		t.Errorf("pod seccomp %q, want the template's", p)
	}
	if sc := got.Spec.Containers[0].SecurityContext; sc.SeccompProfile != nil {
		t.Errorf("task container seccomp %v overrides the pod's choice", sc.SeccompProfile)
	}
	if got.Spec.ServiceAccountName != "template-sa" || got.Spec.DeprecatedServiceAccount != "template-sa" {
		t.Errorf("service account %q/%q, want the template's in both", got.Spec.ServiceAccountName, got.Spec.DeprecatedServiceAccount)
	}
}

func TestDesiredCronJob_PutsTheTemplateInTheJobTemplate(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t")
	task.Spec.Template = &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"example.com/owner": "data"}},
		Spec: corev1.PodSpec{
			NodeSelector:   map[string]string{"disk": "ssd"},
			InitContainers: []corev1.Container{{Name: "fetch", Image: "busybox:1.36"}},
		},
	}
	tmpl := rendered(t, task)["spec"].(map[string]any)["jobTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)
	meta := tmpl["metadata"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"example.com/owner": "data"}, meta["annotations"]); diff != "" {
		t.Errorf("pod annotations (-want +got):\n%s", diff)
	}
	pod := tmpl["spec"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"disk": "ssd"}, pod["nodeSelector"]); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	init := pod["initContainers"].([]any)[0].(map[string]any)
	if _, ok := init["resources"]; ok {
		t.Errorf("init container resources are set though empty: %v", init)
	}
	if _, ok := meta["creationTimestamp"]; ok {
		t.Errorf("metadata.creationTimestamp is set: %v", meta)
	}
}
