// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// holdFinalizer is a finalizer of the tests' own, to keep an object in
// Terminating until the test lets it go.
const holdFinalizer = "test.example.com/hold"

// A task stored before a rule tightened (here: its name is longer than
// today's webhook accepts) must still be deletable: removing its finalizers
// is not a change anyone needs to validate.
func TestTenant_TaskFailingTodaysRulesCanStillBeDeleted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	old := testutil.NewScheduleTask(ns, strings.Repeat("l", 60))
	old.Finalizers = []string{holdFinalizer}
	withoutTaskWebhook(t, ns, func() {
		eventually(t, "store a task past the webhook", func() error {
			err := k8sClient.Create(ctx, old.DeepCopy())
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
	})
	key := client.ObjectKeyFromObject(old)

	// Today's rules refuse it: a spec edit is still validated.
	err := editTask(ctx, k8sClient, key, func(st *platformv1.ScheduleTask) { st.Spec.Image = editedImage })
	expectRefused(t, err, 422, "metadata.name")

	// An uninterpreted label and a finalizer are metadata only: allowed.
	g.Expect(editTask(ctx, k8sClient, key, func(st *platformv1.ScheduleTask) {
		st.Labels = map[string]string{"team": "a"}
	})).To(Succeed(), "label-only update of a task that fails today's rules")

	g.Expect(k8sClient.Delete(ctx, old)).To(Succeed())
	g.Expect(editTask(ctx, k8sClient, key, func(st *platformv1.ScheduleTask) {
		controllerutil.RemoveFinalizer(st, holdFinalizer)
	})).To(Succeed(), "finalizer removal of a task being deleted")
	g.Eventually(func() error {
		return k8sClient.Get(ctx, key, &platformv1.ScheduleTask{})
	}, timeout, poll).Should(Satisfy(apierrors.IsNotFound), "the task is gone")
}

// With every webhook down, finalizer and other uninterpreted metadata
// updates and deletions still go through; what the operator interprets
// (the spec, run-now, a run's number) waits for the webhooks.
func TestTenant_WebhookOutageBlocksNeitherFinalizersNorDeletion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "kept")
	st.Finalizers = []string{holdFinalizer}
	createTask(t, st)
	tr := testutil.NewManualTaskRun(ns, "kept-run", "kept")
	tr.Finalizers = []string{holdFinalizer}
	g.Expect(k8sClient.Create(ctx, tr)).To(Succeed())
	taskKey, runKey := client.ObjectKeyFromObject(st), client.ObjectKeyFromObject(tr)
	g.Eventually(func(g Gomega) {
		var got platformv1.TaskRun
		g.Expect(k8sClient.Get(ctx, runKey, &got)).To(Succeed())
		g.Expect(got.Spec.JobRef).NotTo(BeNil(), "the run was adopted and started")
	}, timeout, poll).Should(Succeed())

	down := func(err error, what string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
			t.Errorf("%s during the outage: %v, want the webhook's failure", what, err)
		}
	}
	withWebhooksDown(t, ns, func() {
		down(editTask(ctx, k8sClient, taskKey, func(st *platformv1.ScheduleTask) { st.Spec.Image = editedImage }),
			"spec edit")
		down(editTask(ctx, k8sClient, taskKey, setAnnotation[*platformv1.ScheduleTask](platformv1.RunNowAnnotation, "1")),
			"run-now")
		down(editRun(ctx, k8sClient, runKey, setAnnotation[*platformv1.TaskRun](platformv1.RunNumberAnnotation, "7")),
			"run-number edit")

		g.Expect(editTask(ctx, k8sClient, taskKey, func(st *platformv1.ScheduleTask) {
			controllerutil.AddFinalizer(st, holdFinalizer+"-2")
			st.Labels = map[string]string{"team": "a"}
			st.Annotations = map[string]string{"note": "outage"}
		})).To(Succeed(), "finalizer, label and annotation update of a task")
		g.Expect(editRun(ctx, k8sClient, runKey, func(tr *platformv1.TaskRun) {
			controllerutil.AddFinalizer(tr, holdFinalizer+"-2")
			tr.Labels["team"] = "a"
		})).To(Succeed(), "finalizer and label update of a run")

		g.Expect(k8sClient.Delete(ctx, tr)).To(Succeed())
		g.Expect(k8sClient.Delete(ctx, st)).To(Succeed())
		g.Expect(editRun(ctx, k8sClient, runKey, func(tr *platformv1.TaskRun) { tr.Finalizers = nil })).
			To(Succeed(), "finalizer removal of a run being deleted")
		g.Expect(editTask(ctx, k8sClient, taskKey, func(st *platformv1.ScheduleTask) {
			controllerutil.RemoveFinalizer(st, holdFinalizer)
			controllerutil.RemoveFinalizer(st, holdFinalizer+"-2")
		})).To(Succeed(), "finalizer removal of a task being deleted")
		// The operator's own finalizer goes too, while the webhooks are down.
		g.Eventually(func() error { return k8sClient.Get(ctx, taskKey, &platformv1.ScheduleTask{}) }, timeout, poll).
			Should(Satisfy(apierrors.IsNotFound), "the task is gone during the outage")
		g.Eventually(func() error { return k8sClient.Get(ctx, runKey, &platformv1.TaskRun{}) }, timeout, poll).
			Should(Satisfy(apierrors.IsNotFound), "the run is gone during the outage")

		// The outage lasted throughout.
		down(webhooksServed(ctx, ns), "a new task")
	})
}
