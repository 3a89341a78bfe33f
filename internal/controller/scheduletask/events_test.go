// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"

	"github.com/example/platform-operator/internal/reconciler"
	"github.com/example/platform-operator/internal/testutil"
)

// TestEmit_ATransitionIsAnnouncedOnlyOnceItsStatusIsStored: a pass whose
// status write failed makes its transitions (a resume, missed runs) again
// in the next pass, so it must not announce them now, or they would be
// announced twice; what it did in the cluster (a run started) it announces
// either way, in the order it did things.
func TestEmit_ATransitionIsAnnouncedOnlyOnceItsStatusIsStored(t *testing.T) {
	obs := &pass{}
	obs.event(nil, corev1.EventTypeNormal, EventCronJobUpdated, "Update", "Updated CronJob %s", "nightly")
	obs.transition(nil, corev1.EventTypeNormal, EventResumed, "Resume", "Resumed")
	obs.event(nil, corev1.EventTypeNormal, EventRunStarted, "Start", "Manual run %s started", "r1")
	obs.transition(nil, corev1.EventTypeWarning, EventMissedRuns, "Schedule", "missed %d", 2)

	for _, tt := range []struct {
		stored bool
		want   []string
	}{
		{stored: true, want: []string{
			"Normal CronJobUpdated Updated CronJob nightly", "Normal Resumed Resumed",
			"Normal RunStarted Manual run r1 started", "Warning MissedRuns missed 2"}},
		{stored: false, want: []string{
			"Normal CronJobUpdated Updated CronJob nightly", "Normal RunStarted Manual run r1 started"}},
	} {
		rec := events.NewFakeRecorder(10)
		r := &Reconciler{Base: reconciler.Base{Recorder: rec}}
		r.emit(testutil.NewScheduleTask("ns", "nightly"), obs, tt.stored)
		close(rec.Events)
		var got []string
		for e := range rec.Events {
			got = append(got, e)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("status stored %t: sent %q, want %q", tt.stored, got, tt.want)
		}
	}
}
