// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeEvents(t *testing.T, path string, events []event) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSummary_NamesTheFailedLeafTestsWithWhyAndTheLayersTimes(t *testing.T) {
	dir := t.TempDir()
	layers := "unit\t312\t0\ne2e\t420\t1\nchaos\t3\t2\n"
	if err := os.WriteFile(filepath.Join(dir, "layers.tsv"), []byte(layers), 0o600); err != nil {
		t.Fatal(err)
	}
	const pkg = "example/test/e2e"
	out := func(test, s string) event { return event{Action: "output", Package: pkg, Test: test, Output: s + "\n"} }
	writeEvents(t, filepath.Join(dir, "e2e.json"), []event{
		out("TestA", "=== RUN   TestA"),
		out("TestA/slow", "    a_test.go:10: using namespace x"),
		out("TestA/slow", "    a_test.go:363: "),
		out("TestA/slow", "        failed within a check interval"),
		out("TestA/slow", "--- FAIL: TestA/slow (51.50s)"),
		{Action: "fail", Package: pkg, Test: "TestA/slow", Elapsed: 51.5},
		{Action: "fail", Package: pkg, Test: "TestA", Elapsed: 51.6},
		out("TestB", "    b_test.go:5: fine"),
		{Action: "pass", Package: pkg, Test: "TestB"},
		{Action: "fail", Package: pkg, Elapsed: 420},
		{Action: "output", Package: "example/test/harness", Output: "panic: test timed out after 16m0s\n"},
		{Action: "fail", Package: "example/test/harness", Elapsed: 960},
	})
	var w bytes.Buffer
	if err := run(&w, dir, 735); err != nil {
		t.Fatal(err)
	}
	got := w.String()
	for _, want := range []string{
		"unit             312 s  ok",
		"e2e              420 s  FAILED (exit 1)",
		"total            735 s",
		"FAIL example/test/e2e.TestA/slow (51.5 s)",
		"a_test.go:363:",
		"failed within a check interval",
		"FAIL example/test/harness (960.0 s)",
		"panic: test timed out after 16m0s",
		"=== chaos failed outside go test",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"TestA (", "TestB", "using namespace", "--- FAIL", "every layer passed"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("summary has %q:\n%s", unwanted, got)
		}
	}
}

func TestSummary_SaysEveryLayerPassed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "layers.tsv"), []byte("unit\t1\t0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if err := run(&w, dir, -1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "every layer passed") || strings.Contains(w.String(), "total") {
		t.Errorf("summary:\n%s", w.String())
	}
}
