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

package metrics

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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

func TestInstrument_TimesEveryCallAndCountsErrorsByReason(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "taskruns"}, "x", errors.New("changed"))
	results := []struct {
		res reconcile.Result
		err error
	}{
		{reconcile.Result{}, nil},
		{reconcile.Result{RequeueAfter: time.Second}, nil},
		{reconcile.Result{}, conflict},
		{reconcile.Result{}, errors.New("plain")},
	}
	i := 0
	r := Instrument("instrument-test", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		out := results[i]
		i++
		return out.res, out.err
	}))
	for range results {
		_, _ = r.Reconcile(context.Background(), reconcile.Request{})
	}
	for result, want := range map[string]uint64{"success": 1, "requeue": 1, "error": 2} {
		if got := samples(t, ReconcileDuration.WithLabelValues("instrument-test", result)); got != want {
			t.Errorf("%s reconciles timed = %d, want %d", result, got, want)
		}
	}
	for reason, want := range map[string]float64{"Conflict": 1, "Unknown": 1} {
		if got := testutil.ToFloat64(ReconcileErrors.WithLabelValues("instrument-test", reason)); got != want {
			t.Errorf("%s errors = %v, want %v", reason, got, want)
		}
	}
}

func TestRunFinishedAndStarted_RecordResultDurationAndLag(t *testing.T) {
	due := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	start := metav1.NewTime(due.Add(3 * time.Second))
	end := metav1.NewTime(start.Add(42 * time.Second))
	tr := &platformv1.TaskRun{
		Spec:   platformv1.TaskRunSpec{ScheduledTime: &due},
		Status: platformv1.TaskRunStatus{Phase: platformv1.TaskRunFailed, StartTime: &start, CompletionTime: &end},
	}
	failedBefore := testutil.ToFloat64(TaskRuns.WithLabelValues("Failed"))
	durationsBefore, lagsBefore := samples(t, TaskRunDuration), samples(t, ScheduleLag)
	RunStarted(tr)
	RunFinished(tr)
	if got := testutil.ToFloat64(TaskRuns.WithLabelValues("Failed")) - failedBefore; got != 1 {
		t.Errorf("failed runs counted %v times, want once", got)
	}
	if samples(t, TaskRunDuration) != durationsBefore+1 || samples(t, ScheduleLag) != lagsBefore+1 {
		t.Errorf("duration or lag not observed")
	}
}

func TestTaskState_EachTaskInExactlyOneState(t *testing.T) {
	ready := func(s metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: platformv1.ConditionReady, Status: s}}
	}
	tests := []struct {
		name string
		st   platformv1.ScheduleTask
		want string
	}{
		{"idle", platformv1.ScheduleTask{Status: platformv1.ScheduleTaskStatus{Conditions: ready("True")}}, StateIdle},
		{"active", platformv1.ScheduleTask{Status: platformv1.ScheduleTaskStatus{Active: true}}, StateActive},
		{"last run failed", platformv1.ScheduleTask{Status: platformv1.ScheduleTaskStatus{Active: true, LastResult: platformv1.RunFailed}}, StateFailing},
		{"not ready", platformv1.ScheduleTask{Status: platformv1.ScheduleTaskStatus{Conditions: ready("False")}}, StateFailing},
		{"suspended wins", platformv1.ScheduleTask{Spec: platformv1.ScheduleTaskSpec{Suspend: ptr.To(true)},
			Status: platformv1.ScheduleTaskStatus{LastResult: platformv1.RunFailed}}, StateSuspended},
	}
	for _, tt := range tests {
		if got := taskState(&tt.st); got != tt.want {
			t.Errorf("%s: state %q, want %q", tt.name, got, tt.want)
		}
	}
}
