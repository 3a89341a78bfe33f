// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/testutil"
)

func TestMetrics_FinishedRunsAndTaskStatesAreExported(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	succeededBefore := counterValue(g, "platform_operator_taskruns_total", "Succeeded")

	cj := createTask(t, testutil.NewScheduleTask(ns, "measured"))
	createTask(t, testutil.NewScheduleTask(ns, "paused", testutil.WithSuspend(true)))
	job := testutil.JobFromCronJob(cj, time.Now().Truncate(time.Minute))
	g.Expect(k8sClient.Create(ctx, job)).To(Succeed())
	testutil.CompleteJob(job, time.Now().Add(-10*time.Second), time.Now())
	g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: job.Name}, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunSucceeded))
	}, timeout, poll).Should(Succeed())

	g.Eventually(func(g Gomega) {
		succeeded := counterValue(g, "platform_operator_taskruns_total", "Succeeded") - succeededBefore
		g.Expect(succeeded).To(BeNumerically(">=", 1))
	}, timeout, poll).Should(Succeed())

	// Every metric of docs/metrics.md is on the manager's registry.
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	byName := map[string]bool{}
	states := map[string]float64{}
	for _, f := range families {
		byName[f.GetName()] = true
		if f.GetName() == "platform_operator_scheduletasks" {
			for _, m := range f.GetMetric() {
				states[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	for _, name := range []string{
		"platform_operator_reconcile_duration_seconds", "platform_operator_reconcile_errors_total",
		"platform_operator_taskruns_total",
		"platform_operator_taskrun_duration_seconds", "platform_operator_schedule_lag_seconds",
		"platform_operator_scheduletasks", "controller_runtime_reconcile_total", "workqueue_depth",
	} {
		g.Expect(byName).To(HaveKey(name))
	}
	g.Expect(states).To(HaveKey(scheduletask.StateSuspended))
	g.Expect(states[scheduletask.StateSuspended]).To(BeNumerically(">=", 1))
	g.Expect(states).To(HaveKey(scheduletask.StateIdle))

	// The per-task gauges show the task's status as stored; the suspended
	// task has no next fire time.
	g.Eventually(func(g Gomega) {
		st := &platformv1.ScheduleTask{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "measured"}, st)).To(Succeed())
		g.Expect(st.Status.LastSuccessfulTime).NotTo(BeNil())
		g.Expect(st.Status.NextScheduleTime).NotTo(BeNil())
		g.Expect(taskGauge(g, "platform_operator_scheduletask_last_success_timestamp_seconds", ns, "measured")).
			To(HaveValue(BeEquivalentTo(st.Status.LastSuccessfulTime.Unix())))
		g.Expect(taskGauge(g, "platform_operator_scheduletask_next_schedule_timestamp_seconds", ns, "measured")).
			To(HaveValue(BeEquivalentTo(st.Status.NextScheduleTime.Unix())))
		g.Expect(taskGauge(g, "platform_operator_scheduletask_next_schedule_timestamp_seconds", ns, "paused")).To(BeNil())
	}, timeout, poll).Should(Succeed())
}

// taskGauge reads the series of the per-task gauge name for the task
// namespace/name from the manager's registry; nil when there is none.
func taskGauge(g Gomega, name, namespace, task string) *float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == namespace && labels["name"] == task {
				v := m.GetGauge().GetValue()
				return &v
			}
		}
	}
	return nil
}

// counterValue reads one series of a counter with a single label from the
// manager's registry, 0 when the series does not exist.
func counterValue(g Gomega, name, label string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == label {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
