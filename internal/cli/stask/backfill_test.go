// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// backfillRuns are the task's backfill runs by fire time.
func backfillRuns(t *testing.T, c client.Client) map[string]int {
	t.Helper()
	var list platformv1.TaskRunList
	if err := c.List(t.Context(), &list, client.InNamespace("team")); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, tr := range list.Items {
		if tr.Spec.Trigger == platformv1.TriggerBackfill {
			out[tr.Spec.ScheduledTime.UTC().Format(time.RFC3339)]++
		}
	}
	return out
}

func TestBackfill_DryRunByDefaultThenOneRunPerFireTimeOnce(t *testing.T) {
	c := newClient(t, interceptor.Funcs{}, cluster()...)
	window := []string{"backfill", "data-check", "--from", "2026-11-29", "--to", "2026-11-29T06:00:00Z"}
	out, _, err := execute(t, c, "", window...)
	if err != nil {
		t.Fatal(err)
	}
	want := `2026-11-29T00:00:00Z  create
2026-11-29T02:00:00Z  create
2026-11-29T04:00:00Z  create
2026-11-29T06:00:00Z  create
dry run: nothing created; --yes creates the runs
`
	if out != want {
		t.Errorf("dry run printed:\n%s\nwant:\n%s", out, want)
	}
	if got := backfillRuns(t, c); len(got) != 0 {
		t.Fatalf("a dry run created %v", got)
	}

	if _, _, err := execute(t, c, "", append(window, "--yes")...); err != nil {
		t.Fatal(err)
	}
	got := backfillRuns(t, c)
	if len(got) != 4 || got["2026-11-29T00:00:00Z"] != 1 || got["2026-11-29T06:00:00Z"] != 1 {
		t.Fatalf("backfill runs %v, want one for each of the 4 fire times", got)
	}

	out, _, err = execute(t, c, "", append(window, "--yes")...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "skip: run data-check-backfill-") != 4 || strings.Contains(out, "created") {
		t.Errorf("a second backfill of the window printed:\n%s\nwant every fire time skipped", out)
	}
	if _, _, err := execute(t, c, "", append(window, "--yes", "--force")...); err != nil {
		t.Fatal(err)
	}
	if got := backfillRuns(t, c); got["2026-11-29T02:00:00Z"] != 2 {
		t.Errorf("--force: runs %v, want a second run of each fire time", got)
	}
}

func TestBackfill_RefusesAWindowTooLargeOrNotInThePastAndCreatesNothing(t *testing.T) {
	c := newClient(t, interceptor.Funcs{}, cluster()...)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "2026-11-01", "--to", "2026-11-29", "--yes"}, "more than 100 fire times"},
		{[]string{"--from", "2026-11-29", "--to", "2026-11-30", "--yes"}, "in the future"},
		{[]string{"--from", "2026-11-29T05:00:00Z", "--to", "2026-11-29T04:00:00Z", "--yes"}, "is before --from"},
		{[]string{"--from", "yesterday", "--to", "2026-11-29", "--yes"}, "want an RFC 3339 time"},
		{[]string{"--to", "2026-11-29", "--yes"}, "needs --from and --to"},
		{[]string{"--from", "2026-11-29T00:30:00Z", "--to", "2026-11-29T01:30:00Z", "--yes"}, "does not fire"},
	} {
		_, _, err := execute(t, c, "", append([]string{"backfill", "data-check"}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want an error saying %q", tt.args, err, tt.want)
		}
	}
	if got := backfillRuns(t, c); len(got) != 0 {
		t.Errorf("refused backfills created %v", got)
	}
}
