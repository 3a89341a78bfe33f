// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// rendered returns DesiredCronJob(task) as the JSON the API server receives.
func rendered(t *testing.T, task *platformv1.ScheduleTask) map[string]any {
	t.Helper()
	ac, err := DesiredCronJob(task, testenv.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// decode parses a JSON literal of the test's expectations.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDesiredCronJob_RendersEveryFieldTheTaskSets(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t", testutil.WithSchedule("@daily"),
		testutil.WithConcurrencyPolicy(platformv1.ReplaceConcurrent), testutil.WithSuspend(true))
	task.UID = "task-uid"
	task.Spec.TimeZone = ptr.To("Asia/Tokyo")
	task.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
	task.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
	task.Spec.BackoffLimit = ptr.To[int32](2)
	task.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](3)
	task.Spec.Command = []string{"/bin/job"}
	task.Spec.Args = []string{"--x"}
	task.Spec.ServiceAccountName = ptr.To("runner")
	task.Spec.Env = []corev1.EnvVar{
		{Name: "A", Value: "1"},
		{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	task.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m")}}

	want := decode(t, `{
	  "kind": "CronJob", "apiVersion": "batch/v1",
	  "metadata": {
	    "name": "t", "namespace": "ns",
	    "labels": {"platform.example.com/scheduletask": "t", "app.kubernetes.io/managed-by": "platform-operator"},
	    "ownerReferences": [{"apiVersion": "platform.example.com/v1", "kind": "ScheduleTask", "name": "t",
	      "uid": "task-uid", "controller": true, "blockOwnerDeletion": true}]
	  },
	  "spec": {
	    "schedule": "@daily", "timeZone": "Asia/Tokyo", "startingDeadlineSeconds": 30,
	    "concurrencyPolicy": "Replace", "suspend": true,
	    "successfulJobsHistoryLimit": 13, "failedJobsHistoryLimit": 20,
	    "jobTemplate": {
	      "metadata": {"labels": {"platform.example.com/scheduletask": "t", "app.kubernetes.io/managed-by": "platform-operator"}},
	      "spec": {
	        "activeDeadlineSeconds": 600, "backoffLimit": 2,
	        "template": {
	          "metadata": {"labels": {"platform.example.com/scheduletask": "t", "app.kubernetes.io/managed-by": "platform-operator"}},
	          "spec": {
	            "restartPolicy": "Never", "serviceAccountName": "runner", "serviceAccount": "runner",
	            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
	            "containers": [{
	              "name": "task", "image": "busybox:1.36", "command": ["/bin/job"], "args": ["--x"],
	              "env": [{"name": "A", "value": "1"}, {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
	              "resources": {"limits": {"cpu": "1"}},
	              "securityContext": {"allowPrivilegeEscalation": false, "seccompProfile": {"type": "RuntimeDefault"}}
	            }]
	          }
	        }
	      }
	    }
	  }
	}`)
	if diff := cmp.Diff(want, rendered(t, task)); diff != "" {
		t.Errorf("rendered CronJob (-want +got):\n%s", diff)
	}
}

func TestDesiredCronJob_LeavesOutWhatTheTaskLeavesUnset(t *testing.T) {
	// Fields the task does not set are not in the configuration, so the
	// API server's defaults (and, after a removal, nothing) apply to them:
	// no time zone, deadlines, service account, command, env or resources.
	task := testutil.NewScheduleTask("ns", "t")
	task.Spec.Command, task.Spec.Args = nil, nil
	spec := rendered(t, task)["spec"].(map[string]any)
	for _, k := range []string{"timeZone", "startingDeadlineSeconds"} {
		if _, ok := spec[k]; ok {
			t.Errorf("spec.%s is set", k)
		}
	}
	pod := spec["jobTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	for _, k := range []string{"serviceAccountName", "serviceAccount"} {
		if _, ok := pod[k]; ok {
			t.Errorf("pod spec.%s is set", k)
		}
	}
	c := pod["containers"].([]any)[0].(map[string]any)
	for _, k := range []string{"command", "args", "env", "resources", "imagePullPolicy"} {
		if _, ok := c[k]; ok {
			t.Errorf("container.%s is set", k)
		}
	}
	if got := spec["jobTemplate"].(map[string]any)["spec"].(map[string]any)["backoffLimit"]; got != float64(platformv1.DefaultBackoffLimit) {
		t.Errorf("backoffLimit = %v, want the task default %d", got, platformv1.DefaultBackoffLimit)
	}
}

func TestDesiredCronJob_UsesTheTasksSecurityContextAsItIs(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "t")
	task.Spec.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	pod := rendered(t, task)["spec"].(map[string]any)["jobTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	got := pod["containers"].([]any)[0].(map[string]any)["securityContext"]
	if diff := cmp.Diff(map[string]any{"privileged": true}, got); diff != "" {
		t.Errorf("container securityContext (-want +got):\n%s", diff)
	}
}

func TestDesiredCronJob_KeepsMoreJobsThanTheTaskKeepsRuns(t *testing.T) {
	// The CronJob deletes finished Jobs beyond its limits; with the task's
	// limits alone, a Job could go before the operator records it.
	for _, tc := range []struct {
		name                 string
		successful, failed   *int32
		wantSucceed, wantErr float64
	}{
		{"none kept", ptr.To[int32](0), ptr.To[int32](0), 10, 10},
		{"unset", nil, nil, float64(platformv1.DefaultRunsHistoryLimit) + 10, float64(platformv1.DefaultRunsHistoryLimit) + 10},
		{"maximum", ptr.To[int32](1000), ptr.To[int32](1), 1010, 11},
	} {
		task := testutil.NewScheduleTask("ns", "t")
		task.Spec.SuccessfulRunsHistoryLimit, task.Spec.FailedRunsHistoryLimit = tc.successful, tc.failed
		spec := rendered(t, task)["spec"].(map[string]any)
		if got := spec["successfulJobsHistoryLimit"]; got != tc.wantSucceed {
			t.Errorf("%s: successfulJobsHistoryLimit = %v, want %v", tc.name, got, tc.wantSucceed)
		}
		if got := spec["failedJobsHistoryLimit"]; got != tc.wantErr {
			t.Errorf("%s: failedJobsHistoryLimit = %v, want %v", tc.name, got, tc.wantErr)
		}
	}
}

func TestDesiredCronJob_SkipGivesTheCronJobADeadline(t *testing.T) {
	// Without one the CronJob controller, back after an outage, starts the
	// latest missed fire time however late; Skip says not to.
	for _, tc := range []struct {
		name     string
		policy   platformv1.MissedRunsPolicy
		deadline *int64
		want     any
	}{
		{"Skip without a deadline", platformv1.MissedRunsSkip, nil, float64(platformv1.SkipStartingDeadlineSeconds)},
		{"Skip with its own", platformv1.MissedRunsSkip, ptr.To[int64](15), float64(15)},
		{"RunLatest without one", platformv1.MissedRunsRunLatest, nil, nil},
		{"RunAll with its own", platformv1.MissedRunsRunAll, ptr.To[int64](300), float64(300)},
	} {
		task := testutil.NewScheduleTask("ns", "t")
		task.Spec.MissedRuns, task.Spec.StartingDeadlineSeconds = tc.policy, tc.deadline
		if got := rendered(t, task)["spec"].(map[string]any)["startingDeadlineSeconds"]; got != tc.want {
			t.Errorf("%s: startingDeadlineSeconds = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDesiredCronJob_JobTemplateCarriesTheTasksTraceOnly(t *testing.T) {
	// Every Job of the schedule, and so its TaskRun, links to the change
	// that made the task what it is; the pod template and the CronJob itself
	// carry nothing of it.
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	task := testutil.NewScheduleTask("ns", "t")
	task.Annotations = map[string]string{"platform.example.com/traceparent": tp, "other": "x"}
	spec := rendered(t, task)["spec"].(map[string]any)
	got := spec["jobTemplate"].(map[string]any)["metadata"].(map[string]any)["annotations"]
	if diff := cmp.Diff(map[string]any{"platform.example.com/traceparent": tp}, got); diff != "" {
		t.Errorf("job template annotations (-want +got):\n%s", diff)
	}
	if a := rendered(t, task)["metadata"].(map[string]any)["annotations"]; a != nil {
		t.Errorf("CronJob annotations = %v, want none", a)
	}
}
