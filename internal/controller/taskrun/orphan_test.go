// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/reconciler"
	"github.com/example/platform-operator/internal/testutil"
)

func TestCheckOrphan_EndsOnlyRunsWhoseTaskIsMissingOrUnableForTheGrace(t *testing.T) {
	const grace = time.Minute
	created := now.Add(-2 * grace)
	task := func(mutate func(*platformv1.ScheduleTask)) *platformv1.ScheduleTask {
		st := testutil.NewScheduleTask("ns", "t")
		st.Generation = 2
		mutate(st)
		return st
	}
	ready := func(status metav1.ConditionStatus, generation int64, since time.Time) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) {
			st.Status.Conditions = []metav1.Condition{{Type: platformv1.ConditionReady, Status: status,
				Reason: platformv1.ReasonCronJobError, Message: "CronJob refused: exceeded quota",
				ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(since)}}
		}
	}
	tests := []struct {
		name        string
		run         func(*platformv1.TaskRun)
		task        *platformv1.ScheduleTask // nil: no such task
		wantReason  string                   // empty: the run goes on
		wantRecheck time.Duration
	}{
		{"young run of a missing task waits", func(tr *platformv1.TaskRun) { tr.CreationTimestamp = metav1.NewTime(now.Add(-10 * time.Second)) },
			nil, "", 50 * time.Second},
		{"missing task after the grace", nil, nil, platformv1.ReasonTaskNotFound, 0},
		{"task being deleted after the grace", nil, task(func(st *platformv1.ScheduleTask) {
			st.DeletionTimestamp = &metav1.Time{Time: now}
			st.Finalizers = []string{"keep"}
		}), platformv1.ReasonTaskNotFound, 0},
		{"ready task", nil, task(ready(metav1.ConditionTrue, 2, created)), "", grace},
		{"task not yet looked at", nil, task(func(*platformv1.ScheduleTask) {}), "", grace},
		{"task unable for the grace", nil, task(ready(metav1.ConditionFalse, 2, now.Add(-grace))), platformv1.ReasonTaskCannotRun, 0},
		{"task unable only since a moment", nil, task(ready(metav1.ConditionFalse, 2, now.Add(-5*time.Second))), "", 55 * time.Second},
		{"task unable for an older generation", nil, task(ready(metav1.ConditionFalse, 1, created)), "", grace},
		{"run with a Job", func(tr *platformv1.TaskRun) { tr.Spec.JobRef = &platformv1.JobRef{Name: "j", UID: "u"} }, nil, "", 0},
		{"run asked to stop", func(tr *platformv1.TaskRun) {
			tr.Annotations = map[string]string{platformv1.StopReasonAnnotation: platformv1.ReasonCancelled}
		}, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := testutil.NewManualTaskRun("ns", "run", "t")
			tr.CreationTimestamp = metav1.NewTime(created)
			if tt.run != nil {
				tt.run(tr)
			}
			b := fake.NewClientBuilder().WithScheme(scheme(t))
			if tt.task != nil {
				b = b.WithObjects(tt.task)
			}
			r := &Reconciler{Base: reconciler.Base{APIReader: b.Build(), Clock: clocktesting.NewFakePassiveClock(now)}, ManualRunGrace: grace}
			obs := &observation{}
			if err := r.checkOrphan(context.Background(), tr, obs); err != nil {
				t.Fatal(err)
			}
			gotReason := ""
			if obs.orphan != nil {
				gotReason = obs.orphan.reason
				if !strings.Contains(obs.orphan.message, "t ") {
					t.Errorf("message %q does not name the task", obs.orphan.message)
				}
			}
			if gotReason != tt.wantReason || obs.orphanRecheck != tt.wantRecheck {
				t.Errorf("verdict %q, recheck in %s; want %q, %s", gotReason, obs.orphanRecheck, tt.wantReason, tt.wantRecheck)
			}
			if tt.wantReason != "" {
				st := buildStatus(tr, obs, now)
				if st.Phase != platformv1.TaskRunFailed || st.Reason != tt.wantReason || st.CompletionTime == nil {
					t.Errorf("status %+v; want Failed with reason %s and a completion time", st, tt.wantReason)
				}
			}
		})
	}
}

// The run's message quotes the task's condition, cut so it stays within
// the run's own bound.
func TestCheckOrphan_CutsALongConditionMessage(t *testing.T) {
	st := testutil.NewScheduleTask("ns", "t")
	st.Status.Conditions = []metav1.Condition{{Type: platformv1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: platformv1.ReasonCronJobError, Message: strings.Repeat("x", 32768),
		LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
	tr := testutil.NewManualTaskRun("ns", "run", "t")
	tr.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
	r := &Reconciler{Base: reconciler.Base{APIReader: fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(st).Build(),
		Clock: clocktesting.NewFakePassiveClock(now)}}
	obs := &observation{}
	if err := r.checkOrphan(context.Background(), tr, obs); err != nil {
		t.Fatal(err)
	}
	if obs.orphan == nil || len([]rune(obs.orphan.message)) > 2*maxQuotedMessage {
		t.Fatalf("verdict %+v; want TaskCannotRun with a message of at most about %d characters", obs.orphan, maxQuotedMessage)
	}
}

// scheme knows the project's kinds, for the fake client.
func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := platformv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
