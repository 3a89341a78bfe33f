//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// Users may not drop a run's owner reference, but the garbage collector
// must: deleting a task with propagationPolicy Orphan has it remove the
// reference from every run, and a refusal would hold the task in
// Terminating. Only the real kube-controller-manager's garbage collector
// shows this.
func TestTenant_OrphaningDeleteOfATaskIsNotBlockedByTheRunsOwnerRule(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "orphaning", testutil.WithSuspend(true))
	g.Expect(cluster.Client.Create(ctx, st)).To(Succeed())
	run := testutil.NewManualTaskRun(ns, "kept-record", "orphaning")
	g.Eventually(func() error { return cluster.Client.Create(ctx, run) }).WithTimeout(settleTimeout).Should(Succeed())
	key := client.ObjectKeyFromObject(run)
	g.Eventually(func(g Gomega) {
		var tr platformv1.TaskRun
		g.Expect(cluster.Client.Get(ctx, key, &tr)).To(Succeed())
		g.Expect(tr.OwnerReferences).To(HaveLen(1), "adopted by its task")
	}).WithTimeout(settleTimeout).Should(Succeed())

	task := &platformv1.ScheduleTask{}
	g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orphaning"}, task)).To(Succeed())
	g.Expect(cluster.Client.Delete(ctx, task, client.PropagationPolicy("Orphan"))).To(Succeed())
	g.Eventually(func() error {
		return cluster.Client.Get(ctx, client.ObjectKeyFromObject(task), &platformv1.ScheduleTask{})
	}).WithTimeout(60*time.Second).Should(Satisfy(apierrors.IsNotFound), "the task is gone")
	var tr platformv1.TaskRun
	g.Expect(cluster.Client.Get(ctx, key, &tr)).To(Succeed(), "the run was orphaned, not deleted")
	g.Expect(tr.OwnerReferences).To(BeEmpty())
}
