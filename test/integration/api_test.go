// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

func TestScheduleTask_APIServerAppliesDefaults(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	if err := k8sClient.Create(ctx, testutil.NewScheduleTask(ns, "defaults")); err != nil {
		t.Fatalf("create: %v", err)
	}
	var got platformv1.ScheduleTask
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "defaults"}, &got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Spec.ConcurrencyPolicy != platformv1.AllowConcurrent {
		t.Errorf("concurrencyPolicy = %q, want %q", got.Spec.ConcurrencyPolicy, platformv1.AllowConcurrent)
	}
	for name, p := range map[string]*int32{
		"backoffLimit":               got.Spec.BackoffLimit,
		"successfulRunsHistoryLimit": got.Spec.SuccessfulRunsHistoryLimit,
		"failedRunsHistoryLimit":     got.Spec.FailedRunsHistoryLimit,
	} {
		// The literal numbers are the documented defaults; the constants the
		// controllers fall back on must agree with what the API server stores.
		want := int32(10)
		if name == "backoffLimit" {
			want = 6
		}
		if fallback := map[bool]int32{true: platformv1.DefaultBackoffLimit, false: platformv1.DefaultRunsHistoryLimit}[name == "backoffLimit"]; fallback != want {
			t.Errorf("%s: the controllers' fallback is %d, the documented default %d", name, fallback, want)
		}
		if p == nil || *p != want {
			t.Errorf("%s = %v, want %d", name, p, want)
		}
	}
}

func TestScheduleTask_SchemaRejectsBadFieldsNamingEachField(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "bad",
		testutil.WithConcurrencyPolicy("Sometimes"),
		testutil.WithBackoffLimit(-1))
	st.Spec.Image = ""

	err := k8sClient.Create(ctx, st)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("create returned %v, want an Invalid error", err)
	}
	for _, field := range []string{"spec.concurrencyPolicy", "spec.backoffLimit", "spec.image"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error does not name %s: %v", field, err)
		}
	}
	var got platformv1.ScheduleTask
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(st), &got); !apierrors.IsNotFound(err) {
		t.Errorf("rejected task exists anyway (get: %v)", err)
	}
}

func TestTaskRun_StatusChangesOnlyThroughStatusSubresource(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	tr := testutil.NewManualTaskRun(ns, "run", "some-task")
	if err := k8sClient.Create(ctx, tr); err != nil {
		t.Fatalf("create: %v", err)
	}
	key := client.ObjectKeyFromObject(tr)
	// The operator writes this TaskRun's status too, so each write retries on
	// a conflict with a fresh read.
	write := func(status bool, mutate func(*platformv1.TaskRun)) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur platformv1.TaskRun
			if err := k8sClient.Get(ctx, key, &cur); err != nil {
				return err
			}
			mutate(&cur)
			if status {
				return k8sClient.Status().Update(ctx, &cur)
			}
			return k8sClient.Update(ctx, &cur)
		})
		if err != nil {
			t.Fatalf("update (status=%v): %v", status, err)
		}
	}

	write(false, func(tr *platformv1.TaskRun) {
		tr.Status.Phase = "Bogus"
		tr.Labels = map[string]string{"touched": "yes"}
	})
	var got platformv1.TaskRun
	if err := k8sClient.Get(ctx, key, &got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Labels["touched"] != "yes" {
		t.Fatalf("the main-resource update did not happen: labels %v", got.Labels)
	}
	if got.Status.Phase == "Bogus" {
		t.Fatalf("a main-resource update changed status.phase")
	}

	start := metav1.NewTime(time.Now().Truncate(time.Second))
	write(true, func(tr *platformv1.TaskRun) {
		tr.Status.Phase = platformv1.TaskRunFailed
		tr.Status.StartTime = &start
	})
	if err := k8sClient.Get(ctx, key, &got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Status.Phase != platformv1.TaskRunFailed || got.Status.StartTime == nil {
		t.Errorf("status after status update = %+v, want phase Failed with a start time", got.Status)
	}
}

func TestSamples_ApplyUnchanged(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"platform_v1_scheduletask.yaml", "platform_v1_scheduletask_heartbeat.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "config", "samples", f))
		if err != nil {
			t.Fatal(err)
		}
		var st platformv1.ScheduleTask
		if err := yaml.UnmarshalStrict(data, &st); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		st.Namespace = ns
		if err := k8sClient.Create(ctx, &st); err != nil {
			t.Errorf("%s: create: %v", f, err)
		}
	}
}

func TestTaskRun_SpecIsImmutableExceptSettingJobRefOnce(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	tr := testutil.NewManualTaskRun(ns, "record", "no-such-task")
	if err := k8sClient.Create(ctx, tr); err != nil {
		t.Fatalf("create: %v", err)
	}
	key := client.ObjectKeyFromObject(tr)
	update := func(mutate func(*platformv1.TaskRun)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur platformv1.TaskRun
			if err := k8sClient.Get(ctx, key, &cur); err != nil {
				return err
			}
			mutate(&cur)
			return k8sClient.Update(ctx, &cur)
		})
	}

	for field, mutate := range map[string]func(*platformv1.TaskRun){
		"scheduleTaskName": func(tr *platformv1.TaskRun) { tr.Spec.ScheduleTaskName = "other" },
		"trigger":          func(tr *platformv1.TaskRun) { tr.Spec.Trigger = platformv1.TriggerScheduled },
		"scheduledTime":    func(tr *platformv1.TaskRun) { tr.Spec.ScheduledTime = &metav1.Time{Time: time.Now()} },
	} {
		err := update(mutate)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field+" is immutable") {
			t.Errorf("changing %s: got %v, want Invalid naming the field", field, err)
		}
	}

	if err := update(func(tr *platformv1.TaskRun) { tr.Spec.JobRef = &platformv1.JobRef{Name: "j", UID: "1"} }); err != nil {
		t.Fatalf("setting jobRef the first time: %v", err)
	}
	if err := update(func(tr *platformv1.TaskRun) { tr.Spec.JobRef.UID = "2" }); !apierrors.IsInvalid(err) {
		t.Errorf("changing jobRef: got %v, want Invalid", err)
	}
	if err := update(func(tr *platformv1.TaskRun) { tr.Spec.JobRef = nil }); !apierrors.IsInvalid(err) {
		t.Errorf("removing jobRef: got %v, want Invalid", err)
	}
}

func TestScheduleTask_ScheduleWithTZPrefixIsRejected(t *testing.T) {
	ns := newNamespace(t)
	for _, s := range []string{"TZ=UTC 0 * * * *", "CRON_TZ=Europe/Berlin 0 * * * *"} {
		err := k8sClient.Create(context.Background(), testutil.NewScheduleTask(ns, "tz", testutil.WithSchedule(s)))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.schedule") || !strings.Contains(err.Error(), "spec.timeZone") {
			t.Errorf("schedule %q: got %v, want Invalid pointing at spec.timeZone", s, err)
		}
	}
}
