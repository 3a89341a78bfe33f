//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// The harness's self-test: the kwok cluster itself, without the operator.
// The e2e, fault and benchmark layers trust that a Job on it behaves as on a
// real cluster and that the pod annotations of hack/kwok/README.md (the
// Stages in hack/kwok/config.yaml) do what they say; these tests check that,
// through the real CronJob, Job and scheduler controllers, so that a broken
// Stage fails here by name rather than as a puzzling operator failure.
// `make test-e2e` runs them next to test/e2e.
package harness_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/test/harness"
)

// cluster is the self-test's kwok cluster, with no operator on it.
var cluster *harness.Cluster

func TestMain(m *testing.M) {
	harness.ReapIfAsked()
	os.Exit(runSuite(m))
}

// runSuite does the work of TestMain and returns the exit code, so that the
// cluster is deleted before os.Exit.
func runSuite(m *testing.M) int {
	name := fmt.Sprintf("harness-%08x", rand.Uint32())
	c, teardown, err := harness.StartCluster(context.Background(), name, harness.ClusterOptions{})
	if err != nil {
		harness.Logf("%v", err)
		return 1
	}
	defer teardown()
	cluster = c
	return m.Run()
}

// newNamespace creates a namespace for t; see harness.Namespace.
func newNamespace(t *testing.T) string {
	t.Helper()
	return harness.Namespace(t, cluster)
}

// Pod annotations understood by the Stages in hack/kwok/config.yaml.
const (
	// exitCodeAnnotation makes every container of the pod exit with the
	// given code; a non-zero code ends the pod Failed.
	exitCodeAnnotation = "platform.example.com/kwok-exit-code"
	// runDelayAnnotation sets how long the pod runs before it terminates.
	runDelayAnnotation = "pod-complete.stage.kwok.x-k8s.io/delay"

	// kwokNodeAnnotation marks the nodes that kwok simulates.
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
)

// TestCronJob_JobPodCompletes runs a CronJob through the real CronJob, Job
// and scheduler controllers: the CronJob fires at the next minute boundary,
// its Job's pod is bound to a kwok node and succeeds, and the success is
// reported back on the Job and the CronJob.
func TestCronJob_JobPodCompletes(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	// Up to 60s until the schedule fires, then a few seconds of work.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	g := NewWithT(t)
	c := cluster.Client
	start := time.Now()

	cronJob := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "every-minute", Namespace: ns},
		Spec: batchv1.CronJobSpec{
			Schedule:          "* * * * *",
			ConcurrencyPolicy: batchv1.ForbidConcurrent,
			JobTemplate:       batchv1.JobTemplateSpec{Spec: jobSpec(nil)},
		},
	}
	g.Expect(c.Create(ctx, cronJob)).To(Succeed())
	due := start.Truncate(time.Minute).Add(time.Minute)
	t.Logf("created CronJob %s; it is due at %s", cronJob.Name, due.Format(time.TimeOnly))

	var job batchv1.Job
	g.Eventually(ctx, func(g Gomega) {
		var jobs batchv1.JobList
		g.Expect(c.List(ctx, &jobs, client.InNamespace(ns))).To(Succeed())
		ownedByCronJob := WithTransform(func(j batchv1.Job) bool { return metav1.IsControlledBy(&j, cronJob) }, BeTrue())
		g.Expect(jobs.Items).To(ContainElement(ownedByCronJob, &job), "Jobs of CronJob %s", cronJob.Name)
	}).Should(Succeed())
	t.Logf("%s: CronJob created Job %s", since(start), job.Name)

	pod := waitForJobPod(ctx, t, &job, func(g Gomega, pod *corev1.Pod) {
		g.Expect(pod.Spec.NodeName).NotTo(BeEmpty(), "pod %s is not scheduled yet", pod.Name)
	})
	var node corev1.Node
	g.Expect(c.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, &node)).To(Succeed())
	g.Expect(node.Annotations).To(HaveKeyWithValue(kwokNodeAnnotation, "fake"),
		"pod %s was bound to node %s, which kwok does not manage", pod.Name, node.Name)
	t.Logf("%s: pod %s bound to kwok node %s", since(start), pod.Name, node.Name)

	pod = waitForJobPod(ctx, t, &job, func(g Gomega, pod *corev1.Pod) {
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), "phase of pod %s", pod.Name)
		expectTerminated(g, pod, 0, "Completed")
	})
	t.Logf("%s: pod %s succeeded", since(start), pod.Name)

	cond := waitForJobCondition(ctx, t, &job, batchv1.JobComplete)
	t.Logf("%s: Job %s is Complete (%s)", since(start), job.Name, cond.Reason)

	g.Eventually(ctx, func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cronJob), cronJob)).To(Succeed())
		g.Expect(cronJob.Status.LastSuccessfulTime).NotTo(BeNil(), "status.lastSuccessfulTime of CronJob %s", cronJob.Name)
	}).Should(Succeed())
	t.Logf("%s: CronJob %s lastSuccessfulTime is %s", since(start), cronJob.Name, cronJob.Status.LastSuccessfulTime)
}

// TestJob_PodFailsWithChosenExitCode checks that the exit-code annotation
// makes the pod fail with that code and that the Job controller sees the
// failure.
func TestJob_PodFailsWithChosenExitCode(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := time.Now()

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "exit-3", Namespace: ns},
		Spec:       jobSpec(map[string]string{exitCodeAnnotation: "3"}),
	}
	NewWithT(t).Expect(cluster.Client.Create(ctx, job)).To(Succeed())

	pod := waitForJobPod(ctx, t, job, func(g Gomega, pod *corev1.Pod) {
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodFailed), "phase of pod %s", pod.Name)
		expectTerminated(g, pod, 3, "Error")
	})
	t.Logf("%s: pod %s failed with exit code 3", since(start), pod.Name)

	cond := waitForJobCondition(ctx, t, job, batchv1.JobFailed)
	NewWithT(t).Expect(cond.Reason).To(Equal(batchv1.JobReasonBackoffLimitExceeded))
	t.Logf("%s: Job %s is Failed (%s)", since(start), job.Name, cond.Reason)
}

// TestJob_PodRunsForAnnotatedDelay checks that the delay annotation keeps the
// pod running for that long before it completes.
func TestJob_PodRunsForAnnotatedDelay(t *testing.T) {
	t.Parallel()
	const runFor = 15 * time.Second
	ns := newNamespace(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := time.Now()

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "run-15s", Namespace: ns},
		Spec:       jobSpec(map[string]string{runDelayAnnotation: runFor.String()}),
	}
	NewWithT(t).Expect(cluster.Client.Create(ctx, job)).To(Succeed())

	pod := waitForJobPod(ctx, t, job, func(g Gomega, pod *corev1.Pod) {
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), "phase of pod %s", pod.Name)
		expectTerminated(g, pod, 0, "Completed")
	})
	term := pod.Status.ContainerStatuses[0].State.Terminated
	ran := term.FinishedAt.Sub(term.StartedAt.Time)
	t.Logf("%s: pod %s succeeded after running for %s", since(start), pod.Name, ran)
	// The API server keeps these times to the second.
	NewWithT(t).Expect(ran).To(BeNumerically(">=", runFor-time.Second), "how long pod %s ran", pod.Name)
}

// jobSpec returns the spec of a Job with one pod that is never retried, with
// podAnnotations on the pod. The image is never pulled: kwok only pretends
// to run the pod.
func jobSpec(podAnnotations map[string]string) batchv1.JobSpec {
	return batchv1.JobSpec{
		BackoffLimit: new(int32(0)),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: podAnnotations},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "example.com/not-pulled:latest"}},
			},
		},
	}
}

// waitForJobPod waits until job has a pod that passes check, and returns it.
func waitForJobPod(ctx context.Context, t *testing.T, job *batchv1.Job, check func(Gomega, *corev1.Pod)) *corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	NewWithT(t).Eventually(ctx, func(g Gomega) {
		var pods corev1.PodList
		g.Expect(cluster.Client.List(ctx, &pods, client.InNamespace(job.Namespace),
			client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1), "pods of Job %s", job.Name)
		pod = pods.Items[0]
		check(g, &pod)
	}).Should(Succeed())
	return &pod
}

// waitForJobCondition waits until job has condition condType set to True, and
// returns that condition. It updates job.
func waitForJobCondition(
	ctx context.Context, t *testing.T, job *batchv1.Job, condType batchv1.JobConditionType,
) batchv1.JobCondition {
	t.Helper()
	var found batchv1.JobCondition
	NewWithT(t).Eventually(ctx, func(g Gomega) {
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(job), job)).To(Succeed())
		isTrue := And(HaveField("Type", condType), HaveField("Status", corev1.ConditionTrue))
		g.Expect(job.Status.Conditions).To(ContainElement(isTrue, &found), "conditions of Job %s", job.Name)
	}).Should(Succeed())
	return found
}

// expectTerminated checks that the pod's only container has terminated with
// exitCode and reason.
func expectTerminated(g Gomega, pod *corev1.Pod, exitCode int32, reason string) {
	g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1), "container statuses of pod %s", pod.Name)
	term := pod.Status.ContainerStatuses[0].State.Terminated
	g.Expect(term).NotTo(BeNil(), "state of container %s in pod %s", pod.Status.ContainerStatuses[0].Name, pod.Name)
	g.Expect(term.ExitCode).To(Equal(exitCode), "exit code of pod %s", pod.Name)
	g.Expect(term.Reason).To(Equal(reason), "termination reason of pod %s", pod.Name)
}

// since formats the time elapsed since start for progress logs.
func since(start time.Time) string {
	return time.Since(start).Round(100 * time.Millisecond).String()
}

// TestCluster_ControlPlaneOutlivesAStalledAPIServer freezes the API server
// for longer than a leader-election renew deadline (10 s), as two starved
// cores can: the controller-manager and the scheduler must still run after
// it, and a new namespace must still get its ServiceAccount. Not parallel:
// the other tests of this cluster would stall with it.
func TestCluster_ControlPlaneOutlivesAStalledAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	g := NewWithT(t)
	g.Expect(cluster.PauseComponent(ctx, "kube-apiserver", 20*time.Second)).To(Succeed())
	// A component that gave up exits a few seconds after the API server
	// answers again; the watchdog looks every two.
	g.Consistently(cluster.DeadComponents).WithTimeout(15*time.Second).WithPolling(time.Second).
		Should(BeEmpty(), "components of the cluster that exited after the API server's stall")
	ns := newNamespace(t)
	t.Logf("namespace %s got its default ServiceAccount after the stall", ns)
}

// TestCluster_AControllerManagerThatDiedIsStartedAgain kills the
// controller-manager as the kernel or a crash would, nobody having stopped
// it: the watchdog reports it, and the next namespace a test asks for
// starts it again (Cluster.Revive) and gets its ServiceAccount, where it
// would otherwise wait two minutes and fail. Not parallel: the other tests
// of this cluster need the controller-manager.
func TestCluster_AControllerManagerThatDiedIsStartedAgain(t *testing.T) {
	g := NewWithT(t)
	pidFile := filepath.Join(filepath.Dir(cluster.Kubeconfig), "pids", "kube-controller-manager.pid")
	data, err := os.ReadFile(pidFile)
	g.Expect(err).NotTo(HaveOccurred())
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	g.Eventually(cluster.DeadComponents).WithTimeout(30*time.Second).
		Should(ContainElement("kube-controller-manager"), "the watchdog saw it exit")

	start := time.Now()
	ns := newNamespace(t)
	t.Logf("namespace %s got its default ServiceAccount %s after the controller-manager was killed",
		ns, time.Since(start).Round(time.Millisecond))
	g.Eventually(func() (bool, error) {
		data, err := os.ReadFile(pidFile)
		if err != nil {
			return false, err
		}
		again, err := strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && again != pid && syscall.Kill(again, 0) == nil, err
	}).WithTimeout(30*time.Second).Should(BeTrue(), "a new controller-manager runs")
}
