//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

// TestMissedRuns_EachPolicyRunsWhatItPromisesAfterTheControllerManagerWasDown
// stops the kube-controller-manager (and with it the CronJob controller)
// across two fire times of three `* * * * *` tasks, one per policy, and
// starts it again 15 seconds after the second. Then, with T0 the last fire
// time before the stop and T1, T2 the two missed:
//
//   - RunLatest (a CronJob's own behaviour) has runs at T0, T2 (late) and
//     T3, and counts T1 as missed;
//   - RunAll has those and a CatchUp run at T1, whose Job carries the name
//     the CronJob would have given it;
//   - Skip (startingDeadlineSeconds 10, shorter than the 15 s) has runs at
//     T0 and T3 only, and counts T1 and T2 when T3 starts;
//
// every fire time has exactly one TaskRun and one Job, and a Warning event
// names the missed times. Two missed fire times are the fewest that tell
// the three policies apart (with one, RunLatest and RunAll do the same),
// and each minute missed is a minute of the e2e layer's wall time. It runs
// on a cluster of its own, since stopping the controller-manager would
// stall every other test's runs, and in parallel with them: it waits three
// minutes of fire times, the longest wait of the layer, so its cluster
// starts before t.Parallel: during the serial tests, ahead of the other
// tests' clusters.
func TestMissedRuns_EachPolicyRunsWhatItPromisesAfterTheControllerManagerWasDown(t *testing.T) {
	own := ownCluster(t)
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	op, err := harness.StartOperator(ctx, own, harness.OperatorOptions{Replicas: 1})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(op.Stop)
	ns := harness.Namespace(t, own)

	policies := map[string]platformv1.MissedRunsPolicy{
		"latest": platformv1.MissedRunsRunLatest, "all": platformv1.MissedRunsRunAll, "skip": platformv1.MissedRunsSkip,
	}
	for name, policy := range policies {
		st := testutil.NewScheduleTask(ns, name)
		st.Spec.MissedRuns = policy
		if policy == platformv1.MissedRunsSkip {
			st.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
		}
		g.Expect(own.Client.Create(ctx, st)).To(Succeed())
	}

	// T0: the first fire time at which all three ran.
	var t0 int64
	g.Eventually(func(g Gomega) {
		byTask := scheduledRuns(g, ctx, own, ns)
		g.Expect(byTask).To(HaveLen(3))
		for _, times := range byTask {
			g.Expect(times).NotTo(BeEmpty())
			t0 = max(t0, times[0])
		}
		for name, times := range byTask {
			g.Expect(times).To(ContainElement(t0), "%s ran at T0", name)
		}
	}).WithTimeout(minuteTimeout).WithPolling(time.Second).Should(Succeed())
	g.Expect(own.StopComponent(ctx, "kube-controller-manager")).To(Succeed())
	fire := func(n int) time.Time { return time.Unix(t0, 0).Add(time.Duration(n) * time.Minute) }
	t.Logf("T0 %s; the controller-manager stopped at %s", fire(0).Format(time.TimeOnly), time.Now().Format(time.TimeOnly))
	// No fire time passed between T0's runs and the stop.
	g.Expect(time.Now().Before(fire(1))).To(BeTrue(), "the controller-manager stopped after T1")

	time.Sleep(time.Until(fire(2).Add(15 * time.Second)))
	g.Expect(own.StartComponents(ctx)).To(Succeed())
	t.Logf("the controller-manager started again at %s", time.Now().Format(time.TimeOnly))

	at := func(ns ...int) []int64 {
		var times []int64
		for _, n := range ns {
			times = append(times, fire(n).Unix())
		}
		return times
	}
	want := map[string][]int64{"latest": at(0, 2, 3), "all": at(0, 1, 2, 3), "skip": at(0, 3)}
	wantMissed := map[string]int64{"latest": 1, "all": 1, "skip": 2}
	g.Eventually(func(g Gomega) {
		byTask := scheduledRuns(g, ctx, own, ns)
		for name, times := range want {
			g.Expect(between(byTask[name], t0, fire(3).Unix())).To(Equal(times), "the runs of %s", name)
		}
		for name, n := range wantMissed {
			st := &platformv1.ScheduleTask{}
			g.Expect(own.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, st)).To(Succeed())
			g.Expect(st.Status.MissedRuns).To(Equal(n), "status.missedRuns of %s", name)
		}
	}).WithTimeout(time.Until(fire(3).Add(minuteTimeout))).WithPolling(2 * time.Second).Should(Succeed())

	// Each fire time once: one TaskRun and one Job, the catch-up ones by
	// the CronJob's names and with the trigger CatchUp.
	var runs platformv1.TaskRunList
	g.Expect(own.Client.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
	var jobs batchv1.JobList
	g.Expect(own.Client.List(ctx, &jobs, client.InNamespace(ns))).To(Succeed())
	jobNames := map[string]bool{}
	for _, j := range jobs.Items {
		jobNames[j.Name] = true
	}
	for _, tr := range runs.Items {
		if tr.Spec.ScheduledTime == nil || tr.Spec.ScheduledTime.After(fire(3)) {
			continue
		}
		g.Expect(tr.Spec.JobRef).NotTo(BeNil(), "run %s has a Job", tr.Name)
		g.Expect(jobNames).To(HaveKey(tr.Spec.JobRef.Name), "the Job of run %s", tr.Name)
		cronJobName := fmt.Sprintf("%s-%d", tr.Spec.ScheduleTaskName, tr.Spec.ScheduledTime.Unix()/60)
		g.Expect(tr.Spec.JobRef.Name).To(Equal(cronJobName), "run %s's Job has the CronJob's name", tr.Name)
		due := tr.Spec.ScheduledTime.Time
		catchUp := tr.Spec.ScheduleTaskName == "all" && due.Equal(fire(1))
		wantTrigger := platformv1.TriggerScheduled
		if catchUp {
			wantTrigger = platformv1.TriggerCatchUp
		}
		g.Expect(tr.Spec.Trigger).To(Equal(wantTrigger), "the trigger of run %s", tr.Name)
	}

	// The event names the missed fire times, and what the policy did.
	g.Eventually(func(g Gomega) {
		var evs eventsv1.EventList
		g.Expect(own.Client.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		said := map[string]string{}
		for _, ev := range evs.Items {
			if ev.Reason == scheduletask.EventMissedRuns {
				said[ev.Regarding.Name] = ev.Note
			}
		}
		g.Expect(said["all"]).To(And(ContainSubstring(fire(1).UTC().Format(time.RFC3339)), ContainSubstring("CatchUp")))
		g.Expect(said["latest"]).To(ContainSubstring(fire(1).UTC().Format(time.RFC3339)))
		g.Expect(said["skip"]).To(And(ContainSubstring(fire(2).UTC().Format(time.RFC3339)), ContainSubstring("Skip")))
	}).WithTimeout(settleTimeout).Should(Succeed())
}

// scheduledRuns lists, by task, the scheduled times (seconds since the
// epoch) of the namespace's TaskRuns, oldest first; a time listed twice is a
// run recorded twice.
func scheduledRuns(g Gomega, ctx context.Context, c *harness.Cluster, ns string) map[string][]int64 {
	var runs platformv1.TaskRunList
	g.Expect(c.Client.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
	byTask := map[string][]int64{}
	for _, tr := range runs.Items {
		if tr.Spec.ScheduledTime != nil {
			byTask[tr.Spec.ScheduleTaskName] = append(byTask[tr.Spec.ScheduleTaskName], tr.Spec.ScheduledTime.Unix())
		}
	}
	for _, times := range byTask {
		slices.Sort(times)
	}
	return byTask
}

// between keeps the times from first to last. A task whose CronJob came
// before a minute's turn that the others' missed (their creates were slow)
// ran once before T0: a run outside what the test follows.
func between(times []int64, first, last int64) []int64 {
	return slices.DeleteFunc(slices.Clone(times), func(t int64) bool { return t < first || t > last })
}
