//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

// jobControllerLabels are the labels Kubernetes adds to a Job's pod template.
var jobControllerLabels = []string{batchv1.JobNameLabel, batchv1.ControllerUidLabel, "job-name", "controller-uid"}

// unverifiedReports lists the names of the Jobs that the UnverifiedJob
// events on a task name.
func unverifiedReports(g Gomega, ctx context.Context, ns, task string) []string {
	var evs eventsv1.EventList
	g.Expect(cluster.Client.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range evs.Items {
		if e.Regarding.Name == task && e.Reason == "UnverifiedJob" && e.Related != nil {
			out = append(out, e.Related.Name)
		}
	}
	return out
}

// jobFromTemplate is a Job made by hand from a CronJob's job template, as
// `kubectl create job --from=cronjob/...` makes one, controlled by the
// CronJob.
func jobFromTemplate(cj *batchv1.CronJob, name string) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   cj.Namespace,
			Name:        name,
			Labels:      maps.Clone(cj.Spec.JobTemplate.Labels),
			Annotations: maps.Clone(cj.Spec.JobTemplate.Annotations),
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))},
		},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Annotations[batchv1.CronJobScheduledTimestampAnnotation] = "2026-01-01T00:00:00Z"
	return job
}

// recordedJobs lists the names of the Jobs the namespace's TaskRuns record.
func recordedJobs(g Gomega, ctx context.Context, ns string) []string {
	var out []string
	for _, tr := range runsOf(g, ctx, ns) {
		if tr.Spec.JobRef != nil {
			out = append(out, tr.Spec.JobRef.Name)
		}
	}
	return out
}

func TestProvenance_ScheduledJobIsRecordedAndAForgedOneIsNot(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "signed", kwokPod(0, "2s")))).To(Succeed())

	// The CronJob controller's Job is recorded.
	var run platformv1.TaskRun
	g.Eventually(func(g Gomega) {
		runs := runsOf(g, ctx, ns)
		g.Expect(runs).NotTo(BeEmpty())
		run = runs[0]
		g.Expect(run.Spec.Trigger).To(Equal(platformv1.TriggerScheduled))
		g.Expect(run.Spec.JobRef).NotTo(BeNil())
	}).WithTimeout(minuteTimeout).Should(Succeed())

	// What the real controllers change between the CronJob's pod template
	// and the Job's: exactly the Job controller's labels, nothing else.
	cj := &batchv1.CronJob{}
	g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "signed"}, cj)).To(Succeed())
	job := &batchv1.Job{}
	g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: run.Spec.JobRef.Name}, job)).To(Succeed())
	got := job.Spec.Template.DeepCopy()
	var added []string
	for k := range got.Labels {
		if _, ok := cj.Spec.JobTemplate.Spec.Template.Labels[k]; !ok {
			added = append(added, k)
		}
	}
	g.Expect(added).To(ConsistOf(jobControllerLabels))
	for _, l := range jobControllerLabels {
		delete(got.Labels, l)
	}
	g.Expect(cmp.Diff(&cj.Spec.JobTemplate.Spec.Template, got)).To(BeEmpty(),
		"the Job's pod template differs from the CronJob's beyond the Job controller's labels")
	t.Logf("labels the API server added to the Job's pod template: %v", added)

	// A Job a tenant makes under the CronJob, with its labels and
	// signature but another image, is reported, never recorded, and
	// deleted with its pods (the garbage collector's work).
	forged := jobFromTemplate(cj, "signed-forged")
	forged.Spec.Template.Spec.Containers[0].Image = "evil.example.com/miner:1"
	g.Expect(cluster.Client.Create(ctx, forged)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(unverifiedReports(g, ctx, ns, "signed")).To(ConsistOf(forged.Name))
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(forged), &batchv1.Job{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the forged Job is still there (err %v)", err)
		var pods corev1.PodList
		g.Expect(cluster.Client.List(ctx, &pods, client.InNamespace(ns),
			client.MatchingLabels{batchv1.ControllerUidLabel: string(forged.UID)})).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty())
	}).WithTimeout(settleTimeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(recordedJobs(g, ctx, ns)).NotTo(ContainElement(forged.Name))
	}).WithTimeout(5 * time.Second).Should(Succeed())
}

func TestProvenance_JobFromTheTemplateBeforeAnEditIsRecorded(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "edited", testutil.WithSchedule("0 3 * * *"))
	g.Expect(cluster.Client.Create(ctx, st)).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "edited"}
	before := &batchv1.CronJob{}
	g.Eventually(func() error { return cluster.Client.Get(ctx, key, before) }).
		WithTimeout(settleTimeout).Should(Succeed())

	// The operator writes the task too (finalizer, status): retry on conflict.
	task := &platformv1.ScheduleTask{}
	task.Namespace, task.Name = ns, "edited"
	g.Expect(harness.Edit(ctx, cluster.Client, task, func(task *platformv1.ScheduleTask) {
		task.Spec.Args = []string{"changed"}
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		cj := &batchv1.CronJob{}
		g.Expect(cluster.Client.Get(ctx, key, cj)).To(Succeed())
		g.Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"changed"}))
	}).WithTimeout(settleTimeout).Should(Succeed())

	// As the CronJob controller would have made it a moment before the edit.
	old := jobFromTemplate(before, "edited-before")
	g.Expect(cluster.Client.Create(ctx, old)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(recordedJobs(g, ctx, ns)).To(ContainElement(old.Name))
	}).WithTimeout(settleTimeout).Should(Succeed())
	g.Expect(unverifiedReports(g, ctx, ns, "edited")).To(BeEmpty())
}
