// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	platformv1alpha1 "github.com/example/platform-operator/api/v1alpha1"
	"github.com/example/platform-operator/internal/testutil"
)

// One tenant must not be able to store tasks big enough to exhaust the
// manager, which caches every task: the API server refuses every list or
// string over its limit, naming the field, and stores nothing.
func TestBounds_OverLimitTaskIsRefusedNamingTheField(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	long := func(n int) string { return strings.Repeat("x", n) }
	many := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = long(size)
		}
		return out
	}
	envs := func(n int) []corev1.EnvVar {
		out := make([]corev1.EnvVar, n)
		for i := range out {
			out[i] = corev1.EnvVar{Name: fmt.Sprintf("V%d", i), Value: "v"}
		}
		return out
	}
	limits := func(n int) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := range n {
			out[corev1.ResourceName(fmt.Sprintf("example.com/r%d", i))] = resource.MustParse("1")
		}
		return out
	}
	capabilities := func(n int) []corev1.Capability {
		out := make([]corev1.Capability, n)
		for i := range out {
			out[i] = corev1.Capability(fmt.Sprintf("CAP_%d", i))
		}
		return out
	}
	task := func(name string, mutate func(*platformv1.ScheduleTaskSpec)) client.Object {
		st := testutil.NewScheduleTask(ns, name)
		mutate(&st.Spec)
		return st
	}
	tests := []struct {
		name  string
		obj   client.Object
		field string
	}{
		{"65 command entries", task("b01", func(s *platformv1.ScheduleTaskSpec) { s.Command = many(65, 1) }), "spec.command"},
		{"command entry of 16385", task("b02", func(s *platformv1.ScheduleTaskSpec) {
			s.Command = []string{long(16385)}
		}), "spec.command[0]"},
		{"257 args", task("b03", func(s *platformv1.ScheduleTaskSpec) { s.Args = many(257, 1) }), "spec.args"},
		{"arg of 16385", task("b04", func(s *platformv1.ScheduleTaskSpec) {
			s.Args = []string{"a", long(16385)}
		}), "spec.args[1]"},
		{"129 env variables", task("b05", func(s *platformv1.ScheduleTaskSpec) { s.Env = envs(129) }), "spec.env"},
		{"env name of 257", task("b06", func(s *platformv1.ScheduleTaskSpec) {
			s.Env = []corev1.EnvVar{{Name: long(257), Value: "v"}}
		}), "spec.env[0].name"},
		{"env value of 16385", task("b07", func(s *platformv1.ScheduleTaskSpec) {
			s.Env = []corev1.EnvVar{{Name: "A", Value: long(16385)}}
		}), "spec.env[0].value"},
		{"secret key of 254", task("b08", func(s *platformv1.ScheduleTaskSpec) {
			s.Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: long(254)}}}}
		}), "spec.env[0].valueFrom.secretKeyRef"},
		{"command, args and env over 32768 together", task("b09", func(s *platformv1.ScheduleTaskSpec) {
			s.Command, s.Args = nil, many(3, 11000)
		}), "32768"},
		{"17 resource limits", task("b10", func(s *platformv1.ScheduleTaskSpec) {
			s.Resources = &corev1.ResourceRequirements{Limits: limits(17)}
		}), "spec.resources.limits"},
		{"65 added capabilities", task("b11", func(s *platformv1.ScheduleTaskSpec) {
			s.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: capabilities(65)}}
		}), "spec.securityContext.capabilities.add"},
		{"credential spec of 4097", task("b12", func(s *platformv1.ScheduleTaskSpec) {
			s.SecurityContext = &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
				GMSACredentialSpec: ptr.To(long(4097))}}
		}), "spec.securityContext.windowsOptions"},
		{"time zone of 65", task("b13", func(s *platformv1.ScheduleTaskSpec) {
			s.TimeZone = ptr.To(long(65))
		}), "spec.timeZone"},
		{"v1alpha1 with 65 command entries", &platformv1alpha1.ScheduleTask{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b14"},
			Spec:       platformv1alpha1.ScheduleTaskSpec{Schedule: "@daily", Image: "busybox", Command: many(65, 1)},
		}, "spec.command"},
		{"TaskRun with a Job UID of 129", &platformv1.TaskRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b15"},
			Spec: platformv1.TaskRunSpec{ScheduleTaskName: "any", Trigger: platformv1.TriggerManual,
				JobRef: &platformv1.JobRef{Name: "j", UID: types.UID(long(129))}},
		}, "spec.jobRef.uid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := k8sClient.Create(ctx, tt.obj)
			var status apierrors.APIStatus
			if err == nil || !errors.As(err, &status) {
				t.Fatalf("create returned %v, want a rejection", err)
			}
			if got := status.Status().Code; got != 422 {
				t.Errorf("HTTP %d, want 422: %v", got, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("message does not name %s: %v", tt.field, err)
			}
			key := client.ObjectKeyFromObject(tt.obj)
			fresh := tt.obj.DeepCopyObject().(client.Object)
			if err := k8sClient.Get(ctx, key, fresh); !apierrors.IsNotFound(err) {
				t.Errorf("rejected object is stored (get: %v)", err)
			}
		})
	}
}

// The limits are ones a real task never reaches: a task at every one of
// them is accepted, and its CronJob made.
func TestBounds_TaskAtEveryLimitIsAcceptedAndGetsItsCronJob(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.MaxSizeScheduleTask(ns, "biggest")
	st.Spec.Resources = &corev1.ResourceRequirements{
		Limits: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	st.Spec.SecurityContext = &corev1.SecurityContext{
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	cj := createTask(t, st)
	g.Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env).To(HaveLen(platformv1.MaxEnvItems))
	g.Eventually(func(g Gomega) {
		got := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, platformv1.ConditionReady)).To(BeTrue())
	}, timeout, poll).Should(Succeed())
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(st), &batchv1.CronJob{})).To(Succeed())
}
