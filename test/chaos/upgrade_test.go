//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package chaos

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/release"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

// upgradeFrom is the version the upgrade test starts from: the last one
// before AppDeployment and ScheduleTask took a whole pod template, which
// changed how both render their pods (the work that landed with 336505a).
const upgradeFrom = "8271b23"

// TestUpgrade_NewManagerChangesNothingAnOlderOneMade runs the manager of
// upgradeFrom, built from that commit's source, until its applications
// are released and its task's CronJob made, then replaces it with this
// version's, as `helm upgrade` of the operator would: the new manager
// starts no release (the spec's revision, the stable Deployment's
// generation and the absent canary stay as they were) and leaves the
// CronJob's spec as it was.
func TestUpgrade_NewManagerChangesNothingAnOlderOneMade(t *testing.T) {
	cluster := takeCluster(t)
	g := NewWithT(t)
	ctx := t.Context()
	src := sourceAt(t, cluster.Repo, upgradeFrom)
	ns := harness.Namespace(t, cluster)

	old, err := harness.StartOperator(ctx, cluster,
		harness.OperatorOptions{Source: src, Args: []string{"--leader-elect=false"}})
	g.Expect(err).NotTo(HaveOccurred())
	if _, err := old.StartReplica(ctx); err != nil {
		old.Stop()
		t.Fatalf("starting the manager of %s: %v", upgradeFrom, err)
	}
	plain := upgradedApp(ns, "plain")
	full := upgradedApp(ns, "full")
	full.Spec.Port = 8080
	full.Spec.HealthCheck = platformv1.HealthCheck{Path: "/healthz", PeriodSeconds: 5}
	full.Spec.Command, full.Spec.Args = []string{"/app"}, []string{"--serve"}
	full.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "prod"}}
	full.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{
		corev1.ResourceMemory: resource.MustParse("128Mi")}}
	task := testutil.NewScheduleTask(ns, "nightly", testutil.WithSchedule("0 3 * * *"))
	for _, obj := range []client.Object{plain, full, task} {
		mustEventually(t, func() error { return client.IgnoreAlreadyExists(cluster.Client.Create(ctx, obj)) })
	}
	before := map[string]*platformv1.AppDeployment{}
	for _, ad := range []*platformv1.AppDeployment{plain, full} {
		waitVersion(t, ad, "v1.0.0")
		got := &platformv1.AppDeployment{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(ad), got)).To(Succeed())
		before[ad.Name] = got
	}
	stableGen := map[string]int64{}
	for name := range before {
		d := &appsv1.Deployment{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
		stableGen[name] = d.Generation
	}
	cronJob := &batchv1.CronJob{}
	g.Eventually(func() error {
		return cluster.Client.Get(ctx, client.ObjectKeyFromObject(task), cronJob)
	}).WithTimeout(time.Minute).Should(Succeed())
	old.Stop()

	m, err := startOperator(t, "--leader-elect=false").StartReplica(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	for name, was := range before {
		// The new manager keeps each spec's revision in a ControllerRevision
		// from its first pass: that revision's being there is the proof
		// that it has seen the application, and that it renders the same
		// revision the old one did.
		g.Eventually(func() error {
			return cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns,
				Name: release.RevisionName(name, was.Status.CurrentRevision)}, &appsv1.ControllerRevision{})
		}).WithTimeout(time.Minute).Should(Succeed(), "%s: no ControllerRevision of revision %s (log %s)",
			name, was.Status.CurrentRevision, m.LogPath)
	}
	g.Consistently(func(g Gomega) {
		for name, was := range before {
			got := &platformv1.AppDeployment{}
			g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(was), got)).To(Succeed())
			g.Expect(got.Status.CurrentRevision).To(Equal(was.Status.CurrentRevision), "%s: the spec's revision", name)
			g.Expect(got.Status.StableRevision).To(Equal(was.Status.StableRevision), "%s: the stable revision", name)
			g.Expect(got.Status.Canary).To(BeNil(), "%s: a release started", name)
			d := &appsv1.Deployment{}
			g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			g.Expect(d.Generation).To(Equal(stableGen[name]), "%s: the stable Deployment was changed", name)
			err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-canary"}, &appsv1.Deployment{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "%s: a canary Deployment was made", name)
		}
		cj := &batchv1.CronJob{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(task), cj)).To(Succeed())
		g.Expect(cj.Generation).To(Equal(cronJob.Generation), "the CronJob's spec was changed")
	}).WithTimeout(10 * time.Second).WithPolling(time.Second).Should(Succeed())
}

// upgradedApp is an application released by a canary, as most are, so
// that a changed rendering would show as a canary.
func upgradedApp(ns, name string) *platformv1.AppDeployment {
	return &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: platformv1.AppDeploymentSpec{
			Image:    "registry.example.com/app:v1.0.0",
			Replicas: ptr.To[int32](2),
			Strategy: platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 50},
		},
	}
}

// sourceAt extracts the project's source at commit into a new directory.
// A clone without that commit (a shallow one) cannot run the test.
func sourceAt(t *testing.T, repo, commit string) string {
	t.Helper()
	if err := exec.Command("git", "-C", repo, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		t.Skipf("the clone at %s lacks commit %s to upgrade from (a shallow clone?): %v", repo, commit, err)
	}
	dir := filepath.Join(t.TempDir(), "src")
	out, err := exec.Command("sh", "-c", fmt.Sprintf("mkdir -p %q && git -C %q archive %s | tar -x -C %q",
		dir, repo, commit, dir)).CombinedOutput()
	if err != nil {
		t.Fatalf("extracting %s: %v\n%s", commit, err, out)
	}
	return dir
}
