// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// samples is the number of observations in one histogram series.
func samples(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	var m dto.Metric
	if err := o.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

func TestRunFinishedAndStarted_RecordResultDurationAndLag(t *testing.T) {
	due := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	start := metav1.NewTime(due.Add(3 * time.Second))
	end := metav1.NewTime(start.Add(42 * time.Second))
	tr := &platformv1.TaskRun{
		Spec:   platformv1.TaskRunSpec{ScheduledTime: &due},
		Status: platformv1.TaskRunStatus{Phase: platformv1.TaskRunFailed, StartTime: &start, CompletionTime: &end},
	}
	failedBefore := testutil.ToFloat64(runsTotal.WithLabelValues("Failed"))
	durationsBefore, lagsBefore := samples(t, runDuration), samples(t, scheduleLag)
	runStarted(tr)
	runFinished(tr)
	if got := testutil.ToFloat64(runsTotal.WithLabelValues("Failed")) - failedBefore; got != 1 {
		t.Errorf("failed runs counted %v times, want once", got)
	}
	if samples(t, runDuration) != durationsBefore+1 || samples(t, scheduleLag) != lagsBefore+1 {
		t.Errorf("duration or lag not observed")
	}
}
