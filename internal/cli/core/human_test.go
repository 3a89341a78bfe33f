// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRelative_ReadsLikeKubectlAgesBothWays(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now, "now"},
		{now.Add(500 * time.Millisecond), "now"},
		{now.Add(45 * time.Second), "in 45s"},
		{now.Add(3 * time.Minute), "in 3m"},
		{now.Add(3*time.Minute + 12*time.Second), "in 3m12s"},
		{now.Add(10*time.Minute + 30*time.Second), "in 10m"},
		{now.Add(-2 * time.Hour), "120m ago"},
		{now.Add(-(5*time.Hour + 5*time.Minute)), "5h5m ago"},
		{now.Add(-(3*24*time.Hour + 4*time.Hour)), "3d4h ago"},
	} {
		if got := Relative(tt.t, now); got != tt.want {
			t.Errorf("Relative(now%+v) = %q, want %q", tt.t.Sub(now), got, tt.want)
		}
	}
}

func TestUseColor_OnlyOnATerminalAndNeverWithNoColor(t *testing.T) {
	for _, tt := range []struct {
		name    string
		tty     bool
		noColor string
		want    bool
	}{
		{"terminal", true, "", true},
		{"terminal with NO_COLOR", true, "1", false},
		{"pipe", false, "", false},
		{"pipe with NO_COLOR", false, "1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(key string) string {
				if key == "NO_COLOR" {
					return tt.noColor
				}
				return ""
			}
			if got := UseColor(tt.tty, getenv); got != tt.want {
				t.Errorf("UseColor(tty=%t, NO_COLOR=%q) = %t, want %t", tt.tty, tt.noColor, got, tt.want)
			}
		})
	}
}

func TestIsTerminal_BufferIsNot(t *testing.T) {
	if IsTerminal(&strings.Builder{}) {
		t.Error("a strings.Builder is a terminal")
	}
}

func TestColorize_PaintsWholeCellsWithoutMovingColumns(t *testing.T) {
	table := "RUN   PHASE       REASON\n" +
		"a     Succeeded   Completed\n" +
		"b     Failed      FailedToStart\n" +
		"c     Running     Failed\n"
	want := "RUN   PHASE       REASON\n" +
		"a     " + Green + "Succeeded" + reset + "   Completed\n" +
		"b     " + Red + "Failed" + reset + "      FailedToStart\n" +
		"c     Running     " + Red + "Failed" + reset + "\n"
	got := Colorize(table, Palette{"Succeeded": Green, "Failed": Red})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Colorize (-want +got):\n%s", diff)
	}
	if got := Colorize(table, nil); got != table {
		t.Errorf("an empty palette changed the table: %q", got)
	}
}
