// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package clitest

import (
	"fmt"
	"testing"

	"github.com/example/platform-operator/internal/cli/core"
)

func TestUnsafeRunes_FindsWhatATerminalActsOn(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"plain text, héllo 🚀\n", 0},
		// ESC twice, backspace, U+202E, U+009B, bell, carriage return.
		{HostileText, 7},
		{"tab\there", 1},
		{"\u2066isolate\u2069", 2},
		{core.Safe(HostileText), 0},
	} {
		if got := UnsafeRunes(tt.in); len(got) != tt.want {
			t.Errorf("UnsafeRunes(%q) = %v, want %d", tt.in, got, tt.want)
		}
	}
}

// recorder is a testing.TB that keeps the failures it is told of.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func TestCheckPrintedSafely_FailsOnRawControlsForgedLinesAndNothingShown(t *testing.T) {
	for _, tt := range []struct {
		name     string
		out      string
		failures int
	}{
		{"escaped", "message: " + core.Safe(HostileText) + "\n", 0},
		// Raw controls, and the line the newline forged.
		{"raw", "message: " + HostileText + "\n", 2},
		{"not shown", "message: -\n", 1},
	} {
		r := &recorder{TB: t}
		CheckPrintedSafely(r, tt.name, tt.out)
		if len(r.failures) != tt.failures {
			t.Errorf("%s: %d failures %q, want %d", tt.name, len(r.failures), r.failures, tt.failures)
		}
	}
}
