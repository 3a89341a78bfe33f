// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// A manual run named like the task's next scheduled Job
// (<cronjob>-<minutes since the epoch>) must not take that Job's name: the
// scheduled run still happens and is recorded.
func TestTenant_ManualRunCannotSquatTheNextScheduledJobName(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "squatted")
	// The scheduled Job below stands for the CronJob controller's: made
	// within the starting deadline of its fire time, this minute's.
	st.Spec.StartingDeadlineSeconds = ptr.To[int64](300)
	cj := createTask(t, st)
	alice := userClient(t, ns, "alice", withRules(jobsRule))

	scheduled := testutil.JobFromCronJob(cj, time.Now().Truncate(time.Minute))
	squat := testutil.NewManualTaskRun(ns, scheduled.Name, "squatted")
	g.Expect(alice.Create(ctx, squat)).To(Succeed())
	var manualJob string
	g.Eventually(func(g Gomega) {
		var got platformv1.TaskRun
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(squat), &got)).To(Succeed())
		g.Expect(got.Spec.JobRef).NotTo(BeNil(), "the manual run started")
		manualJob = got.Spec.JobRef.Name
	}, timeout, poll).Should(Succeed())
	g.Expect(manualJob).NotTo(Equal(scheduled.Name), "the manual Job's name is not a scheduled Job's")

	// The CronJob controller's Job of that minute can be made, and is recorded.
	g.Expect(k8sClient.Create(ctx, scheduled)).To(Succeed())
	g.Eventually(func(g Gomega) {
		var recorded *platformv1.TaskRun
		for _, tr := range taskRuns(g, ns) {
			if tr.Spec.JobRef != nil && tr.Spec.JobRef.UID == scheduled.UID {
				recorded = &tr
			}
		}
		g.Expect(recorded).NotTo(BeNil(), "the scheduled Job has its run")
		g.Expect(recorded.Spec.Trigger).To(Equal(platformv1.TriggerScheduled))
		var jobs batchv1.JobList
		g.Expect(k8sClient.List(ctx, &jobs, client.InNamespace(ns))).To(Succeed())
		g.Expect(jobs.Items).To(HaveLen(2), "the manual and the scheduled Job")
	}, timeout, poll).Should(Succeed())
}
