// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// applyAs server-side applies obj's fields (as a configuration: only what
// is set) as c, under a GitOps tool's field manager.
func applyAs(ctx context.Context, c client.Client, obj map[string]any) error {
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: obj}),
		client.FieldOwner("gitops"), client.ForceOwnership)
}

// Fields a mutating webhook adds to a request are the request's manager's,
// so a server-side apply that does not repeat them removes them. The
// requester and task label that admission writes must survive a re-apply
// of the same manifest (GitOps tools do that on every sync), not make it
// fail.
func TestTenant_ReapplyingAManifestKeepsWhatAdmissionRecorded(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createTask(t, testutil.NewScheduleTask(ns, "applied"))
	alice := userClient(t, ns, "alice", withRules(jobsRule))

	run := func(labels map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": platformv1.GroupVersion.String(), "kind": "TaskRun",
			"metadata": map[string]any{"namespace": ns, "name": "applied-run", "labels": labels},
			"spec":     map[string]any{"scheduleTaskName": "applied", "trigger": "Manual"},
		}
	}
	if err := applyAs(ctx, alice, run(map[string]any{"team": "a"})); err != nil {
		t.Fatalf("first apply of the run: %v", err)
	}
	if err := applyAs(ctx, alice, run(map[string]any{"team": "b"})); err != nil {
		t.Errorf("re-apply of the run: %v", err)
	}
	var tr platformv1.TaskRun
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "applied-run"}, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Labels[platformv1.ScheduleTaskLabel] != "applied" ||
		tr.Annotations[platformv1.RequestedByAnnotation] != "alice" {
		t.Errorf("admission's records lost: labels %v annotations %v", tr.Labels, tr.Annotations)
	}

	task := func(image string) map[string]any {
		return map[string]any{
			"apiVersion": platformv1.GroupVersion.String(), "kind": "ScheduleTask",
			"metadata": map[string]any{"namespace": ns, "name": "gitops-task",
				"annotations": map[string]any{platformv1.RunNowAnnotation: "1"}},
			"spec": map[string]any{"schedule": "* * * * *", "image": image, "command": []any{"true"}},
		}
	}
	if err := applyAs(ctx, k8sClient, task("busybox:1.36")); err != nil {
		t.Fatalf("first apply of the task: %v", err)
	}
	if err := applyAs(ctx, k8sClient, task(editedImage)); err != nil {
		t.Errorf("re-apply of the task with a new image and the same run-now: %v", err)
	}
	var st platformv1.ScheduleTask
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gitops-task"}, &st); err != nil {
		t.Fatal(err)
	}
	if st.Annotations[platformv1.RunNowRequestedByAnnotation] == "" {
		t.Errorf("the run-now requester was lost: %v", st.Annotations)
	}
}
