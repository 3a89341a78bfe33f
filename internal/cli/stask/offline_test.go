// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/schedule"
)

// offline runs a command that needs no cluster.
func offline(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	out, _, err := execute(t, newClient(t, interceptor.Funcs{}), stdin, args...)
	return out, err
}

func TestNextCommand_PrintsRunTimesInTheZone(t *testing.T) {
	out, err := offline(t, "", "next", "30 9 * * *", "--time-zone", "Asia/Tokyo", "-c", "2")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), out)
	}
	for _, l := range lines {
		ts, err := time.Parse(time.RFC3339, strings.Fields(l)[0])
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if _, off := ts.Zone(); off != 9*3600 || ts.Hour() != 9 || ts.Minute() != 30 {
			t.Errorf("%s is not 09:30 in Tokyo", ts)
		}
	}
	if _, err := offline(t, "", "next", "every day"); err == nil || !strings.Contains(err.Error(), "expected exactly 5 fields") {
		t.Errorf("a bad expression gave %v", err)
	}
}

func TestLintCommand_ReportsEveryProblemAndEverySkippedDocumentAndExitsOne(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(`apiVersion: platform.example.com/v1
kind: ScheduleTask
metadata:
  name: fine
spec:
  schedule: "@daily"
  image: busybox:1.36
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ignored
---
apiVersion: platform.example.com/v1
kind: AppDeployment
metadata:
  name: order-service
spec:
  image: harbor.example.com/order-service:v1.2.3
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`apiVersion: platform.example.com/v1
kind: ScheduleTask
metadata:
  name: broken
spec:
  schedule: "61 * * * *"
  image: busybox:1.36
  concurrencyPolicy: Sometimes
  backoffLimit: -1
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := offline(t, "", "lint", good)
	if err != nil || !strings.Contains(out, "1 file(s) OK") {
		t.Errorf("good file: %v\n%s", err, out)
	}
	for _, want := range []string{
		"good.yaml: skipped: ConfigMap ignored (not a ScheduleTask)\n",
		"good.yaml: skipped: AppDeployment order-service (not a ScheduleTask; use kubectl appdeploy lint)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint did not report a document it skipped: want %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "skipped: ScheduleTask") {
		t.Errorf("lint reported the ScheduleTask it checked as skipped:\n%s", out)
	}
	out, err = offline(t, "", "lint", good, bad)
	var exit *core.ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("lint of a bad file returned %v, want exit code 1", err)
	}
	for _, want := range []string{"bad.yaml: broken: spec.schedule:", "bad.yaml: broken: spec.concurrencyPolicy:", "bad.yaml: broken: spec.backoffLimit: must be at least 0 (-1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = offline(t, `apiVersion: platform.example.com/v1
kind: ScheduleTask
metadata:
  name: export
spec:
  schedule: "@daily"
  image: busybox:1.36
  template:
    metadata:
      labels:
        app.kubernetes.io/managed-by: me
    spec:
      restartPolicy: Always
      initContainers:
      - name: fetch
      volumes:
      - name: creds
        secret:
          secretName: creds
`, "lint", "-")
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Errorf("lint of a bad template returned %v, want exit code 1:\n%s", err, out)
	}
	for _, want := range []string{"export: spec.template.metadata.labels[app.kubernetes.io/managed-by]:",
		"export: spec.template.spec.restartPolicy: supported values: \"Never\", \"OnFailure\" (Always)",
		"export: spec.template.spec.initContainers[0].image: is required"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = offline(t, "apiVersion: platform.example.com/v1\nkind: ScheduleTask\nmetadata:\n  name: x\nspec:\n  schedule: \"@hourly\"\n  image: busybox\n  sechdule: typo\n", "lint", "-")
	if err == nil || !strings.Contains(out, "sechdule") {
		t.Errorf("an unknown field passed lint: %v\n%s", err, out)
	}
}

func TestNextCommand_SpreadNeedsItsTaskAndShowsTheEffectiveSchedule(t *testing.T) {
	if _, err := offline(t, "", "next", "H 2 * * *"); err == nil || !strings.Contains(err.Error(), "--task NAMESPACE/NAME") {
		t.Errorf("H without --task gave %v, want a pointer to --task", err)
	}
	out, err := offline(t, "", "next", "H 2 * * *", "--task", "team-a/backup", "-c", "1")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := schedule.Effective("H 2 * * *", "team-a", "backup")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "effective schedule: "+want {
		t.Fatalf("got:\n%s\nwant the effective schedule %q, then one time", out, want)
	}
	ts, err := time.Parse(time.RFC3339, strings.Fields(lines[1])[0])
	if err != nil || ts.Hour() != 2 || strconv.Itoa(ts.Minute()) != strings.Fields(want)[0] {
		t.Errorf("next run %q does not follow %q (%v)", lines[1], want, err)
	}
}
