// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// The annotations in which the operator once kept the request values it had
// acted on, before status.handledRequests.
const (
	legacyRunNowHandled           = "platform.example.com/run-now-handled"
	legacyResumeHandledAnnotation = "platform.example.com/resume-handled"
)

// A run-now value is acted on once, under the name of whoever set it. The
// record that it was acted on must be where a tenant cannot write: a tenant
// with edit rights but no right to run the task, who forgets that record,
// must not get the run started again, in the first requester's name.
func TestTenant_ForgettingAHandledRunNowReplaysNoRun(t *testing.T) {
	t.Parallel() // waits out a window in a namespace of its own
	ctx := context.Background()
	ns := newNamespace(t)
	createTask(t, testutil.NewScheduleTask(ns, "nightly"))
	runner := userClient(t, ns, "runner", withRules(runRule("nightly")))
	tenant := userClient(t, ns, "tenant", tenantRules)
	key := client.ObjectKey{Namespace: ns, Name: "nightly"}

	runNow := setAnnotation[*platformv1.ScheduleTask](platformv1.RunNowAnnotation, "once")
	if err := editTask(ctx, runner, key, runNow); err != nil {
		t.Fatalf("set run-now: %v", err)
	}
	runsOf := func(by string) ([]platformv1.TaskRun, error) {
		var list platformv1.TaskRunList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		var out []platformv1.TaskRun
		for _, tr := range list.Items {
			if tr.Annotations[platformv1.RequestedByAnnotation] == by {
				out = append(out, tr)
			}
		}
		return out, nil
	}
	var first platformv1.TaskRun
	eventually(t, "the run runner asked for, marked handled", func() error {
		runs, err := runsOf("runner")
		if err != nil || len(runs) != 1 {
			return fmt.Errorf("%d runs requested by runner (%v)", len(runs), err)
		}
		first = runs[0]
		handled, err := runNowHandled(ctx, key)
		if err != nil || handled != "once" {
			return fmt.Errorf("run-now handled value %q (%v)", handled, err)
		}
		return nil
	})

	// The run is gone (retention, or the tenant, who may delete runs), and
	// the tenant forgets the record of the value as far as its rights go:
	// an annotation it may remove, the status it may not write.
	if err := tenant.Delete(ctx, &first); err != nil {
		t.Fatalf("delete the run: %v", err)
	}
	if err := editTask(ctx, tenant, key, func(st *platformv1.ScheduleTask) {
		delete(st.Annotations, legacyRunNowHandled)
	}); err != nil {
		t.Fatalf("remove %s: %v", legacyRunNowHandled, err)
	}
	forget := client.RawPatch(types.MergePatchType, []byte(`{"status":{"handledRequests":null}}`))
	st := &platformv1.ScheduleTask{}
	st.Namespace, st.Name = ns, "nightly"
	expectRefused(t, tenant.Status().Patch(ctx, st, forget), 403)

	// No run starts again in runner's name.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		runs, err := runsOf("runner")
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range runs {
			if tr.UID != first.UID {
				t.Fatalf("run %s started again in runner's name after the tenant forgot the handled value", tr.Name)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runNowHandled is the run-now value the operator records as acted on,
// wherever it keeps it: status.handledRequests.runNow, or the annotation of
// managers before it.
func runNowHandled(ctx context.Context, key client.ObjectKey) (string, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(platformv1.GroupVersion.WithKind("ScheduleTask"))
	if err := k8sClient.Get(ctx, key, u); err != nil {
		return "", err
	}
	if v, ok, _ := unstructured.NestedString(u.Object, "status", "handledRequests", "runNow"); ok {
		return v, nil
	}
	return u.GetAnnotations()[legacyRunNowHandled], nil
}

// An upgrade from a manager that kept the handled run-now value in an
// annotation: the task as that manager left it (its run made and since
// deleted, the value marked handled) starts no run under the new manager,
// which takes the value over.
func TestUpgrade_RunNowHandledByAnOlderManagerStartsNoRun(t *testing.T) {
	t.Parallel() // waits out a window in a namespace of its own
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "nightly")
	// What the older manager left: the request and its mark, written as
	// the operator wrote them (k8sClient is the operator's identity).
	st.Annotations = map[string]string{
		platformv1.RunNowAnnotation:   "before-upgrade",
		legacyRunNowHandled:           "before-upgrade",
		platformv1.ResumeAnnotation:   "resumed-before",
		legacyResumeHandledAnnotation: "resumed-before",
	}
	createTask(t, st)
	key := client.ObjectKeyFromObject(st)
	eventually(t, "the handled value taken over", func() error {
		handled, err := runNowHandled(ctx, key)
		if err != nil || handled != "before-upgrade" {
			return fmt.Errorf("run-now handled value %q (%v)", handled, err)
		}
		return nil
	})
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var list platformv1.TaskRunList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > 0 {
			t.Fatalf("run %s started for a run-now value an older manager had handled", list.Items[0].Name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
