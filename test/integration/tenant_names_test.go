/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
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
	cj := createTask(t, testutil.NewScheduleTask(ns, "squatted"))
	alice := userClient(t, ns, "alice", withRules(jobsRule))

	next := time.Now().Add(time.Minute).Truncate(time.Minute)
	scheduled := testutil.JobFromCronJob(cj, next)
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
