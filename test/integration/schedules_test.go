// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// expectTaskRefused creates st and requires a 422 naming field, with nothing
// stored.
func expectTaskRefused(t *testing.T, st *platformv1.ScheduleTask, field string) {
	t.Helper()
	ctx := context.Background()
	err := k8sClient.Create(ctx, st)
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		t.Fatalf("create returned %v, want a rejection", err)
	}
	if got := status.Status().Code; got != 422 {
		t.Errorf("HTTP %d, want 422: %v", got, err)
	}
	if !strings.Contains(err.Error(), field) {
		t.Errorf("message does not name %s: %v", field, err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(st), &platformv1.ScheduleTask{}); !apierrors.IsNotFound(err) {
		t.Errorf("rejected task is stored (get: %v)", err)
	}
}

// The schedule language is the one the CronJob documentation promises: five
// fields and the named macros. robfig/cron's @every, which the CronJob API
// takes although its documentation does not mention it, is refused: it can
// fire every second, at two API writes a second per task.
func TestAdmission_AcceptsTheDocumentedScheduleLanguageOnly(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	for i, s := range []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly",
		"*/5 9-17 * * MON-FRI", "0 0 1 1 *"} {
		st := testutil.NewScheduleTask(ns, fmt.Sprintf("ok-%d", i), testutil.WithSchedule(s))
		if err := k8sClient.Create(ctx, st); err != nil {
			t.Errorf("schedule %q was refused: %v", s, err)
		}
	}
	refused := []string{"@every 1s", "@every 30s", "@every 1h", "@every", "* * * * * *", "*/10 * * * * *", "@reboot"}
	for i, s := range refused {
		t.Run(s, func(t *testing.T) {
			st := testutil.NewScheduleTask(ns, fmt.Sprintf("bad-%d", i), testutil.WithSchedule(s))
			expectTaskRefused(t, st, "spec.schedule")
		})
	}
}

// A time zone the CronJob API refuses would leave the task without a
// CronJob for good (never Ready, manual runs never started): admission
// refuses it first.
func TestAdmission_RefusesTimeZonesTheCronJobAPIRefuses(t *testing.T) {
	ns := newNamespace(t)
	for i, z := range []string{"", "Local", "local", "Europe/../UTC", "Mars/Olympus"} {
		t.Run(fmt.Sprintf("%q", z), func(t *testing.T) {
			st := testutil.NewScheduleTask(ns, fmt.Sprintf("zone-%d", i))
			st.Spec.TimeZone = ptr.To(z)
			expectTaskRefused(t, st, "spec.timeZone")
		})
	}
	st := testutil.NewScheduleTask(ns, "berlin")
	st.Spec.TimeZone = ptr.To("Europe/Berlin")
	createTask(t, st)
}
