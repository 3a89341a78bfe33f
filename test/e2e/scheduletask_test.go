//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/testutil"
)

// minuteTimeout covers a `* * * * *` schedule firing (up to a minute away),
// the CronJob controller's sync and a short run.
const minuteTimeout = 150 * time.Second

// settleTimeout bounds what takes a few seconds on a quiet cluster: a
// manual run, a CronJob made, a status written. Every test of the layer
// starts at once (make test-e2e), and in that first minute two cores run
// sixty tests' setup beside the API server, the controller-manager and
// kwok: a run that ends in 3 s alone took 25 s there (its pod made 14 s
// after the run, its Job marked Complete 7 s after the pod ended).
const settleTimeout = 90 * time.Second

// kwokPod makes the run's pod behave on the kwok cluster: run for runFor (a
// Go duration, "" for kwok's default of a second), then exit with code.
func kwokPod(code int, runFor string) testutil.ScheduleTaskOption {
	return func(st *platformv1.ScheduleTask) {
		if code != 0 {
			st.Spec.Env = append(st.Spec.Env, corev1.EnvVar{Name: "KWOK_EXIT_CODE", Value: strconv.Itoa(code)})
		}
		if runFor != "" {
			st.Spec.Env = append(st.Spec.Env, corev1.EnvVar{Name: "KWOK_RUN_FOR", Value: runFor})
		}
	}
}

// runState describes a run as the cluster has it, for a failure message:
// the TaskRun's status, its Job's and its pods', so that a run that does
// not end says where it stopped (the operator, the Job controller or kwok).
func runState(ctx context.Context, ns, name string) string {
	var b strings.Builder
	tr := &platformv1.TaskRun{}
	if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tr); err != nil {
		return fmt.Sprintf("taskrun %s: %v", name, err)
	}
	fmt.Fprintf(&b, "taskrun %s: phase %s, reason %s, pod %s, message %q\n", name, tr.Status.Phase,
		tr.Status.Reason, tr.Status.PodName, tr.Status.Message)
	if tr.Spec.JobRef == nil {
		return b.String()
	}
	jobName := tr.Spec.JobRef.Name
	job := &batchv1.Job{}
	if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobName}, job); err != nil {
		fmt.Fprintf(&b, "job: %v\n", err)
	} else {
		fmt.Fprintf(&b, "job: active %d, ready %v, succeeded %d, failed %d, terminating %v, conditions %+v\n",
			job.Status.Active, ptr.Deref(job.Status.Ready, 0), job.Status.Succeeded, job.Status.Failed,
			ptr.Deref(job.Status.Terminating, 0), job.Status.Conditions)
	}
	var pods corev1.PodList
	if err := cluster.Client.List(ctx, &pods, client.InNamespace(ns),
		client.MatchingLabels{batchv1.JobNameLabel: jobName}); err != nil {
		fmt.Fprintf(&b, "pods: %v\n", err)
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s: node %q, phase %s, deleting %v, created %s, containers %+v\n", p.Name, p.Spec.NodeName,
			p.Status.Phase, p.DeletionTimestamp != nil, p.CreationTimestamp.Format(time.RFC3339), p.Status.ContainerStatuses)
	}
	return b.String()
}

// runsOf lists the TaskRuns of a namespace.
func runsOf(g Gomega, ctx context.Context, ns string) []platformv1.TaskRun {
	var l platformv1.TaskRunList
	g.Expect(cluster.Client.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
	return l.Items
}

// jobsOf lists the Jobs of a namespace.
func jobsOf(g Gomega, ctx context.Context, ns string) []batchv1.Job {
	var l batchv1.JobList
	g.Expect(cluster.Client.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
	return l.Items
}

// waitForOnlyRunRunning waits for the first scheduled run of the namespace's
// one task to be running, alone, and returns its name.
func waitForOnlyRunRunning(g Gomega, ctx context.Context, ns string) string {
	var name string
	g.Eventually(func(g Gomega) {
		runs := runsOf(g, ctx, ns)
		g.Expect(runs).To(HaveLen(1))
		g.Expect(runs[0].Status.Phase).To(Equal(platformv1.TaskRunRunning))
		name = runs[0].Name
	}).WithTimeout(minuteTimeout).Should(Succeed())
	return name
}

// getTask reads a ScheduleTask.
func getTask(g Gomega, ctx context.Context, ns, name string) *platformv1.ScheduleTask {
	st := &platformv1.ScheduleTask{}
	g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, st)).To(Succeed())
	return st
}

func TestScheduleTask_EveryMinuteTaskRunsToSucceeded(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "minutely", kwokPod(0, "4s")))).To(Succeed())

	var runName string
	g.Eventually(func(g Gomega) {
		runs := runsOf(g, ctx, ns)
		g.Expect(runs).NotTo(BeEmpty())
		runName = runs[0].Name
		g.Expect(runs[0].Status.Phase).To(Equal(platformv1.TaskRunRunning))
		g.Expect(runs[0].Status.StartTime).NotTo(BeNil())
	}).WithTimeout(minuteTimeout).WithPolling(250 * time.Millisecond).Should(Succeed())

	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: runName}, tr)).To(Succeed())
		g.Expect(tr.Spec.Trigger).To(Equal(platformv1.TriggerScheduled))
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunSucceeded))
		g.Expect(tr.Status.Reason).To(Equal(platformv1.ReasonCompleted))
		g.Expect(tr.Status.CompletionTime).NotTo(BeNil())
		g.Expect(tr.Status.CompletionTime.Time).To(BeTemporally(">", tr.Status.StartTime.Time))
		g.Expect(tr.Spec.ScheduledTime.Time.Second()).To(Equal(0), "fired on the minute")
		g.Expect(tr.Status.Attempts).To(Equal(int32(1)))
		g.Expect(tr.Status.PodName).NotTo(BeEmpty())
		st := getTask(g, ctx, ns, "minutely")
		g.Expect(st.Status.LastResult).To(Equal(platformv1.RunSucceeded))
		g.Expect(st.Status.LastSuccessfulTime).NotTo(BeNil())
	}).WithTimeout(settleTimeout).Should(Succeed())
}

func TestScheduleTask_FailingPodEndsBackoffLimitExceededWithExitCode(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "failing",
		testutil.WithBackoffLimit(1), kwokPod(3, "")))).To(Succeed())

	g.Eventually(func(g Gomega) {
		runs := runsOf(g, ctx, ns)
		g.Expect(runs).NotTo(BeEmpty())
		tr := runs[0]
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunFailed))
		g.Expect(tr.Status.Reason).To(Equal(platformv1.ReasonBackoffLimitExceeded))
		g.Expect(tr.Status.ExitCode).To(Equal(ptr.To[int32](3)))
		g.Expect(tr.Status.Attempts).To(Equal(int32(2)), "one try and one retry")
		g.Expect(getTask(g, ctx, ns, "failing").Status.LastResult).To(Equal(platformv1.RunFailed))
	}).WithTimeout(minuteTimeout + time.Minute).Should(Succeed())
}

func TestScheduleTask_RunPastActiveDeadlineEndsDeadlineExceeded(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "slow", kwokPod(0, "10m"))
	st.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
	g.Expect(cluster.Client.Create(ctx, st)).To(Succeed())

	g.Eventually(func(g Gomega) {
		runs := runsOf(g, ctx, ns)
		g.Expect(runs).NotTo(BeEmpty())
		g.Expect(runs[0].Status.Phase).To(Equal(platformv1.TaskRunFailed))
		g.Expect(runs[0].Status.Reason).To(Equal(platformv1.ReasonDeadlineExceeded))
	}).WithTimeout(minuteTimeout).Should(Succeed())
}

func TestScheduleTask_ForbidSkipsWhileARunIsActive(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "forbid",
		testutil.WithConcurrencyPolicy(platformv1.ForbidConcurrent), kwokPod(0, "10m")))).To(Succeed())

	first := waitForOnlyRunRunning(g, ctx, ns)

	// Past the next minute boundary the first run still runs alone.
	g.Consistently(func(g Gomega) {
		runs := runsOf(g, ctx, ns)
		g.Expect(runs).To(HaveLen(1))
		g.Expect(runs[0].Name).To(Equal(first))
		g.Expect(jobsOf(g, ctx, ns)).To(HaveLen(1))
	}).WithTimeout(70 * time.Second).WithPolling(time.Second).Should(Succeed())
}

func TestScheduleTask_ReplaceStopsTheActiveRunForTheNextOne(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "replace",
		testutil.WithConcurrencyPolicy(platformv1.ReplaceConcurrent), kwokPod(0, "10m")))).To(Succeed())

	first := waitForOnlyRunRunning(g, ctx, ns)

	g.Eventually(func(g Gomega) {
		runs := runsOf(g, ctx, ns)
		g.Expect(runs).To(HaveLen(2))
		for _, tr := range runs {
			if tr.Name == first {
				g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunFailed))
				g.Expect(tr.Status.Reason).To(Equal(platformv1.ReasonCancelled))
			} else {
				g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunRunning))
			}
		}
	}).WithTimeout(minuteTimeout).Should(Succeed())
}

func TestScheduleTask_ManualTaskRunStartsAtOnce(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	// A schedule that will not fire during the test.
	adhoc := testutil.NewScheduleTask(ns, "adhoc", testutil.WithSchedule("0 0 1 1 *"))
	g.Expect(cluster.Client.Create(ctx, adhoc)).To(Succeed())
	g.Eventually(func() error {
		return cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "adhoc"}, &batchv1.CronJob{})
	}).WithTimeout(settleTimeout).Should(Succeed())

	created := time.Now()
	g.Expect(cluster.Client.Create(ctx, testutil.NewManualTaskRun(ns, "adhoc-now", "adhoc"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "adhoc-now"}, tr)).To(Succeed())
		g.Expect(tr.Spec.JobRef).NotTo(BeNil())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunSucceeded),
			func() string { return runState(ctx, ns, "adhoc-now") })
	}).WithTimeout(settleTimeout).Should(Succeed())
	t.Logf("manual run succeeded %s after it was asked for", time.Since(created).Round(time.Millisecond))
}

func TestScheduleTask_DeletionRemovesCronJobJobsPodsAndRuns(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "ephemeral", testutil.WithSchedule("0 0 1 1 *"), kwokPod(0, "10m"))
	g.Expect(cluster.Client.Create(ctx, st)).To(Succeed())
	g.Eventually(func() error {
		return cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ephemeral"}, &batchv1.CronJob{})
	}).WithTimeout(settleTimeout).Should(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewManualTaskRun(ns, "ephemeral-run", "ephemeral"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(cluster.Client.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		g.Expect(pods.Items[0].Status.Phase).To(Equal(corev1.PodRunning))
	}).WithTimeout(settleTimeout).Should(Succeed())

	g.Expect(cluster.Client.Delete(ctx, st)).To(Succeed())
	g.Eventually(func(g Gomega) {
		key := client.ObjectKeyFromObject(st)
		g.Expect(apierrors.IsNotFound(cluster.Client.Get(ctx, key, &platformv1.ScheduleTask{}))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(cluster.Client.Get(ctx, key, &batchv1.CronJob{}))).To(BeTrue())
		g.Expect(jobsOf(g, ctx, ns)).To(BeEmpty())
		g.Expect(runsOf(g, ctx, ns)).To(BeEmpty())
		var pods corev1.PodList
		g.Expect(cluster.Client.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty())
	}).WithTimeout(60 * time.Second).Should(Succeed())
}

func TestScheduleTask_HandEditedCronJobIsRepaired(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	drift := testutil.NewScheduleTask(ns, "drift", testutil.WithSchedule("0 3 * * *"))
	g.Expect(cluster.Client.Create(ctx, drift)).To(Succeed())
	cj := &batchv1.CronJob{}
	key := client.ObjectKey{Namespace: ns, Name: "drift"}
	g.Eventually(func() error { return cluster.Client.Get(ctx, key, cj) }).WithTimeout(settleTimeout).Should(Succeed())

	patch := client.MergeFrom(cj.DeepCopy())
	cj.Spec.Schedule = "* * * * *"
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "someone-else:latest"
	g.Expect(cluster.Client.Patch(ctx, cj, patch)).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := &batchv1.CronJob{}
		g.Expect(cluster.Client.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Spec.Schedule).To(Equal("0 3 * * *"))
		g.Expect(got.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image).To(Equal("busybox:1.36"))
		// managedFields say who owns what: the operator took the fields
		// back from the hand edit (its job template with an update that
		// drops the editor's claims, the rest with its apply), and its
		// apply entry stands.
		applied := false
		for _, mf := range got.ManagedFields {
			if mf.Manager == scheduletask.FieldManager {
				applied = applied || mf.Operation == metav1.ManagedFieldsOperationApply
				continue
			}
			g.Expect(mf.FieldsV1.GetRawString()).NotTo(Or(ContainSubstring(`"f:schedule"`), ContainSubstring(`"f:jobTemplate"`)),
				"field manager %s still owns fields the operator sets", mf.Manager)
		}
		g.Expect(applied).To(BeTrue(), "no apply entry of the operator")
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

func TestScheduleTask_SuspendStopsNewRuns(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "paused", testutil.WithSuspend(true)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		cj := &batchv1.CronJob{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "paused"}, cj)).To(Succeed())
		g.Expect(cj.Spec.Suspend).To(Equal(ptr.To(true)))
	}).WithTimeout(settleTimeout).Should(Succeed())

	// A whole minute boundary and the CronJob controller's next sync pass.
	g.Consistently(func(g Gomega) {
		g.Expect(jobsOf(g, ctx, ns)).To(BeEmpty())
		g.Expect(runsOf(g, ctx, ns)).To(BeEmpty())
	}).WithTimeout(75 * time.Second).WithPolling(time.Second).Should(Succeed())
}
