//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

// TestNamespacedMode_ServesItsNamespacesWithRolesAndLeavesOthersAlone runs
// a manager with --watch-namespaces and only the rights the chart grants
// with watchNamespaces: Roles in the served namespaces and the few cluster
// rights left. It serves its namespaces (a task gets its CronJob, a run is
// recorded), leaves a task of another namespace untouched, and its webhook,
// which the harness registers for every namespace as a kustomize install
// would, judges only objects it serves: a schedule it refuses in a served
// namespace is let through, unjudged and undefaulted, elsewhere. It runs on
// a cluster of its own, since the chart's roles have the names of the
// shared cluster's.
func TestNamespacedMode_ServesItsNamespacesWithRolesAndLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	own := ownCluster(t)
	servedA, servedB, other := harness.Namespace(t, own), harness.Namespace(t, own), harness.Namespace(t, own)
	watch := servedA + "," + servedB
	op, err := harness.StartOperator(ctx, own, harness.OperatorOptions{Replicas: 1,
		ChartValues: []string{"watchNamespaces={" + watch + "}"},
		Args:        []string{"--watch-namespaces=" + watch}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(op.Stop)

	// What the chart granted, as the API server's authorizer sees it.
	canI := func(verb, resource, ns string) string {
		args := []string{"auth", "can-i", verb, resource, "--as", harness.OperatorUser}
		if ns == "" {
			args = append(args, "--all-namespaces")
		} else {
			args = append(args, "-n", ns)
		}
		// can-i exits 1 for "no"; the answer is on stdout either way.
		out, _ := own.KubectlOutput(ctx, nil, args...)
		return strings.TrimSpace(string(out))
	}
	for _, ns := range []string{servedA, servedB} {
		g.Expect(canI("create", "cronjobs.batch", ns)).To(Equal("yes"), "in %s", ns)
		g.Expect(canI("update", "scheduletasks.platform.example.com/status", ns)).To(Equal("yes"), "in %s", ns)
	}
	g.Expect(canI("create", "cronjobs.batch", other)).To(Equal("no"))
	g.Expect(canI("list", "scheduletasks.platform.example.com", other)).To(Equal("no"))
	g.Expect(canI("list", "scheduletasks.platform.example.com", "")).To(Equal("no"), "no list of every namespace")
	g.Expect(canI("list", "secrets", "")).To(Equal("no"))

	yearly := testutil.WithSchedule("0 0 1 1 *")
	for _, ns := range []string{servedA, servedB, other} {
		g.Expect(own.Client.Create(ctx, testutil.NewScheduleTask(ns, "nightly", yearly))).To(Succeed(), "in %s", ns)
	}
	g.Expect(own.Client.Create(ctx, testutil.NewManualTaskRun(servedA, "now", "nightly"))).To(Succeed())
	for _, ns := range []string{servedA, servedB} {
		g.Eventually(func(g Gomega) {
			g.Expect(own.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, &batchv1.CronJob{})).To(Succeed())
			st := &platformv1.ScheduleTask{}
			g.Expect(own.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nightly"}, st)).To(Succeed())
			g.Expect(st.Finalizers).To(ContainElement(platformv1.ScheduleTaskFinalizer), "the webhook defaulted it")
			g.Expect(st.Status.ObservedGeneration).To(Equal(st.Generation))
		}).WithTimeout(time.Minute).Should(Succeed(), "the task in served namespace %s", ns)
	}
	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(own.Client.Get(ctx, client.ObjectKey{Namespace: servedA, Name: "now"}, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunSucceeded))
	}).WithTimeout(2 * time.Minute).Should(Succeed())

	// Created with the served ones and never touched: no CronJob, no
	// status, no finalizer.
	g.Consistently(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(own.Client.Get(ctx,
			client.ObjectKey{Namespace: other, Name: "nightly"}, &batchv1.CronJob{}))).To(BeTrue())
		st := &platformv1.ScheduleTask{}
		g.Expect(own.Client.Get(ctx, client.ObjectKey{Namespace: other, Name: "nightly"}, st)).To(Succeed())
		g.Expect(st.Status.ObservedGeneration).To(BeZero())
		g.Expect(st.Status.Conditions).To(BeEmpty())
		g.Expect(st.Finalizers).To(BeEmpty())
	}).WithTimeout(5 * time.Second).Should(Succeed())

	// A minute that does not exist: the schema lets it pass, the webhook
	// refuses it, but only where the manager serves.
	bad := testutil.WithSchedule("61 * * * *")
	err = own.Client.Create(ctx, testutil.NewScheduleTask(servedB, "bad", bad))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.schedule"))
	g.Expect(own.Client.Create(ctx, testutil.NewScheduleTask(other, "bad", bad))).To(Succeed(),
		"the webhook does not judge a namespace it does not serve")

	// Nothing in the manager's log says it tried what it may not do.
	log, err := os.ReadFile(op.Live()[0].LogPath)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(log)).NotTo(ContainSubstring("is forbidden"))
}
