//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// TestScheduleTask_ATemplateWithASecretVolumeAndATolerationRunsRestricted
// runs a backup-like task whose template mounts a Secret and tolerates a
// taint, in a namespace enforcing the restricted Pod Security Standard,
// by `kubectl stask run --wait` and on its schedule: both pods are
// admitted as the webhook defaulted them, land on the only node they may
// (tainted, and selected by the template), and carry the volume.
func TestScheduleTask_ATemplateWithASecretVolumeAndATolerationRunsRestricted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	enforceRestricted(t, cluster, ns)
	node := taintedNode(t, ns)

	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backup-creds"},
		StringData: map[string]string{"password": "s3cret"}}
	g.Expect(cluster.Client.Create(ctx, creds)).To(Succeed())
	// Allow, the default: under Forbid a scheduled run that a loaded
	// machine starts first would refuse the manual one.
	task := testutil.NewScheduleTask(ns, "backup", testutil.WithSchedule("* * * * *"), kwokPod(0, "1s"))
	task.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: platformv1.TaskContainerName,
			VolumeMounts: []corev1.VolumeMount{{Name: "creds", MountPath: "/creds", ReadOnly: true}}}},
		Volumes: []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: creds.Name}}}},
		NodeSelector: map[string]string{nodePoolLabel: ns},
		Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "backup",
			Effect: corev1.TaintEffectNoSchedule}},
	}}
	g.Expect(cluster.Client.Create(ctx, task)).To(Succeed())

	out, code := stask(t, ns, "run", "backup", "--wait", "--timeout", "90s")
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(ContainSubstring("succeeded"))

	var scheduled platformv1.TaskRun
	g.Eventually(func(g Gomega) {
		for _, tr := range runsOf(g, ctx, ns) {
			if tr.Spec.Trigger == platformv1.TriggerScheduled && tr.Status.Phase == platformv1.TaskRunSucceeded {
				scheduled = tr
				return
			}
		}
		g.Expect(runsOf(g, ctx, ns)).To(ContainElement(HaveField("Spec.Trigger", platformv1.TriggerScheduled)),
			"no scheduled run has succeeded yet")
	}).WithTimeout(2*time.Minute + releaseTimeout).WithPolling(time.Second).Should(Succeed())

	for _, tr := range runsOf(g, ctx, ns) {
		if tr.Status.Phase != platformv1.TaskRunSucceeded {
			continue
		}
		pod := &corev1.Pod{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: tr.Status.PodName}, pod)).To(Succeed(),
			"pod of run %s", tr.Name)
		g.Expect(pod.Spec.NodeName).To(Equal(node), "run %s ran elsewhere than on the tainted node", tr.Name)
		g.Expect(pod.Spec.Volumes).To(ContainElement(HaveField("Secret.SecretName", creds.Name)))
		g.Expect(pod.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()), "restricted defaults of run %s", tr.Name)
	}
	t.Logf("scheduled run %s and the manual run succeeded on node %s", scheduled.Name, node)
}

const (
	// nodePoolLabel selects the node a test made for itself.
	nodePoolLabel = "platform.example.com/e2e-pool"
	// kwokNodeAnnotation marks the nodes that kwok simulates.
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
)

// taintedNode adds to the cluster a kwok node of the test's own, labelled
// with ns under nodePoolLabel and tainted dedicated=backup:NoSchedule, so
// that only a pod that selects it and tolerates the taint lands there;
// it is deleted when the test ends.
func taintedNode(t *testing.T, ns string) string {
	t.Helper()
	g := NewWithT(t)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "tainted-" + ns,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
			Labels:      map[string]string{nodePoolLabel: ns, "type": "kwok"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: "backup",
			Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	g.Expect(cluster.Client.Create(t.Context(), node)).To(Succeed())
	t.Cleanup(func() {
		_ = cluster.Client.Delete(context.Background(), node)
	})
	g.Eventually(func(g Gomega) {
		n := &corev1.Node{}
		g.Expect(cluster.Client.Get(t.Context(), client.ObjectKeyFromObject(node), n)).To(Succeed())
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		g.Expect(ready).To(BeTrue(), "node %s is not Ready", n.Name)
	}).WithTimeout(releaseTimeout).Should(Succeed())
	return node.Name
}
