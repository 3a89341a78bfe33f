// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package taskrun

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	platformv1 "github.com/example/platform-operator/api/v1"
)

func TestRunOfJob_FindsTheRunThatCarriesTheJob(t *testing.T) {
	run := func(name, task, jobName, jobUID string) *platformv1.TaskRun {
		tr := &platformv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: platformv1.TaskRunSpec{ScheduleTaskName: task}}
		if jobUID != "" {
			tr.Spec.JobRef = &platformv1.JobRef{Name: jobName, UID: types.UID(jobUID)}
		}
		return tr
	}
	scheme := runtime.NewScheme()
	if err := platformv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&platformv1.TaskRun{}, platformv1.TaskRunTaskNameIndex,
			func(o client.Object) []string { return []string{o.(*platformv1.TaskRun).Spec.ScheduleTaskName} }).
		WithObjects(
			run("t-100", "t", "t-100", "uid-100"),          // scheduled: named as its Job
			run("now", "t", "now-m0123abcd", "uid-manual"), // manual: its Job has another name
			run("t-200", "t", "t-200", "uid-old"),          // a run of an earlier Job of the same name
			run("other", "u", "other-m0123abcd", "uid-u"),  // another task's manual run
			run("waiting", "t", "", ""),                    // a manual run not started yet
		).Build()
	key := func(name string) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}}
	}
	for _, tc := range []struct {
		name           string
		job, uid, task string
		want           []reconcile.Request
	}{
		{"scheduled Job", "t-100", "uid-100", "t", key("t-100")},
		{"manual Job", "now-m0123abcd", "uid-manual", "t", key("now")},
		{"a Job whose namesake run carries another Job", "t-200", "uid-new", "t", nil},
		{"a Job of another task", "other-m0123abcd", "uid-u", "t", nil},
		{"a Job without a task label", "now-m0123abcd", "uid-manual", "", nil},
		{"a Job no run carries", "t-300", "uid-300", "t", nil},
	} {
		got := runOfJob(context.Background(), c, "ns", tc.job, tc.uid, tc.task)
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}
