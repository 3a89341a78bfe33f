// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/testutil"
)

func TestBuildStatus_AContestedCronJobSetsChildContestedAndLeavesTheTaskReady(t *testing.T) {
	task := testutil.NewScheduleTask("ns", "fought")
	obs := &pass{task: task, cronJob: &batchv1.CronJob{},
		contest: apply.Contest{Contested: true, Manager: "co-tenant-loop", Repairs: 10}}
	st := buildStatus(task, obs, now)

	c := meta.FindStatusCondition(st.Conditions, platformv1.ConditionChildContested)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != platformv1.ReasonRepairedRepeatedly {
		t.Fatalf("ChildContested = %+v; want True, RepairedRepeatedly", c)
	}
	for _, want := range []string{"CronJob ns/fought", `"co-tenant-loop"`} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q does not name %s", c.Message, want)
		}
	}
	if !obs.becameContested {
		t.Error("the pass that made the CronJob contested did not ask for the event")
	}
	if !meta.IsStatusConditionTrue(st.Conditions, platformv1.ConditionReady) {
		t.Errorf("Ready = %+v; a contested CronJob must not touch it",
			meta.FindStatusCondition(st.Conditions, platformv1.ConditionReady))
	}

	// Once the contest ends, the condition goes and Ready stays.
	task.Status = st
	quiet := &pass{task: task, cronJob: &batchv1.CronJob{}}
	st = buildStatus(task, quiet, now)
	if c := meta.FindStatusCondition(st.Conditions, platformv1.ConditionChildContested); c != nil {
		t.Errorf("ChildContested = %+v once the CronJob is quiet; want none", c)
	}
	if !meta.IsStatusConditionTrue(st.Conditions, platformv1.ConditionReady) {
		t.Error("Ready is not True once the contest ended")
	}
}
