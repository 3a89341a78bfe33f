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

package scheduletask

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

func TestMutateCronJob_RendersEveryManagedField(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t", testutil.WithSchedule("@daily"),
		testutil.WithConcurrencyPolicy(platformv1.ReplaceConcurrent), testutil.WithSuspend(true))
	task.Spec.TimeZone = ptr.To("Asia/Tokyo")
	task.Spec.Args = []string{"--x"}
	task.Spec.ServiceAccountName = "runner"
	cj := &batchv1.CronJob{}
	mutateCronJob(cj, task)

	if cj.Spec.Schedule != "@daily" || *cj.Spec.TimeZone != "Asia/Tokyo" || cj.Spec.ConcurrencyPolicy != batchv1.ReplaceConcurrent || !*cj.Spec.Suspend {
		t.Errorf("scheduling fields not rendered: %+v", cj.Spec)
	}
	if *cj.Spec.SuccessfulJobsHistoryLimit != defaultHistoryLimit || *cj.Spec.FailedJobsHistoryLimit != defaultHistoryLimit {
		t.Errorf("history limits = %v/%v, want the task defaults", *cj.Spec.SuccessfulJobsHistoryLimit, *cj.Spec.FailedJobsHistoryLimit)
	}
	js := cj.Spec.JobTemplate.Spec
	if *js.BackoffLimit != defaultBackoffLimit {
		t.Errorf("backoffLimit = %d, want %d", *js.BackoffLimit, defaultBackoffLimit)
	}
	ps := js.Template.Spec
	if ps.RestartPolicy != corev1.RestartPolicyNever || ps.ServiceAccountName != "runner" || ps.DeprecatedServiceAccount != "runner" {
		t.Errorf("pod spec = %+v", ps)
	}
	for _, l := range []map[string]string{cj.Labels, cj.Spec.JobTemplate.Labels, js.Template.Labels} {
		if l[platformv1.ScheduleTaskLabel] != "t" {
			t.Errorf("labels %v lack the task label", l)
		}
	}
	if c := ps.Containers; len(c) != 1 || c[0].Name != containerName || c[0].Image != task.Spec.Image || c[0].Args[0] != "--x" {
		t.Errorf("containers = %+v", c)
	}
}

func TestMutateCronJob_KeepsWhatTheAPIServerDefaulted(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t")
	task.Spec.Env = []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	live := &batchv1.CronJob{}
	mutateCronJob(live, task)
	// What the API server adds to a stored CronJob.
	c := &live.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	live.Spec.JobTemplate.Spec.Template.Spec.DNSPolicy = corev1.DNSClusterFirst
	live.Spec.JobTemplate.Spec.Completions = ptr.To[int32](1)
	live.Labels["team"] = "a"

	again := live.DeepCopy()
	mutateCronJob(again, task)
	if !equality.Semantic.DeepEqual(live, again) {
		t.Errorf("mutating an up-to-date CronJob changed it; the operator would write on every pass")
	}
	if again.Labels["team"] != "a" || again.Spec.JobTemplate.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("fields the operator does not own were dropped")
	}
	if got := again.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env[0].ValueFrom.FieldRef.APIVersion; got != "v1" {
		t.Errorf("fieldRef apiVersion = %q, want the API server's default v1", got)
	}
}

func TestMutateCronJob_RepairsHandEdits(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t")
	live := &batchv1.CronJob{}
	mutateCronJob(live, task)
	live.Spec.Schedule = "0 0 1 1 *"
	live.Spec.JobTemplate.Spec.Template.Spec.Containers = append(live.Spec.JobTemplate.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar"})
	mutateCronJob(live, task)
	if live.Spec.Schedule != task.Spec.Schedule {
		t.Errorf("schedule = %q, want %q", live.Spec.Schedule, task.Spec.Schedule)
	}
	if n := len(live.Spec.JobTemplate.Spec.Template.Spec.Containers); n != 1 {
		t.Errorf("%d containers, want exactly the task's one", n)
	}
}

func TestMutateCronJob_RunsWithoutPrivilegeEscalationUnlessTheTaskSaysSo(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t")
	cj := &batchv1.CronJob{}
	mutateCronJob(cj, task)
	ps := cj.Spec.JobTemplate.Spec.Template.Spec
	c := ps.Containers[0].SecurityContext
	if c == nil || c.AllowPrivilegeEscalation == nil || *c.AllowPrivilegeEscalation ||
		c.SeccompProfile == nil || c.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("default container security context = %+v", c)
	}
	if ps.SecurityContext == nil || ps.SecurityContext.SeccompProfile == nil ||
		ps.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context = %+v, want seccomp RuntimeDefault", ps.SecurityContext)
	}

	task.Spec.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	mutateCronJob(cj, task)
	if got := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].SecurityContext; got == nil || !ptr.Deref(got.Privileged, false) || got.AllowPrivilegeEscalation != nil {
		t.Errorf("the task's own security context was not used as it is: %+v", got)
	}
}
