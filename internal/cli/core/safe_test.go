// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSafe_EscapesWhatATerminalWouldActOn(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"plain text unchanged":        {"canary v1.2.4: 1/4 pods (25%)", "canary v1.2.4: 1/4 pods (25%)"},
		"letters beyond ASCII kept":   {"Größe → 50% ✓ 日本", "Größe → 50% ✓ 日本"},
		"screen clear and colour":     {"\x1b[2J\x1b[31mOK", `\x1b[2J\x1b[31mOK`},
		"carriage return, backspace":  {"fine\r\bbad", `fine\r\x08bad`},
		"newline of a one-line field": {"a\nb", `a\nb`},
		"tab of a cell":               {"a\tb", `a\tb`},
		"bell and DEL":                {"\a\x7f", `\x07\x7f`},
		"C1 control introducer":       {"\u009b31m", `\x9b31m`},
		"right-to-left override":      {"txt.\u202eexe", `txt.\u202eexe`},
		"isolates and marks":          {"\u2066\u2069\u200f\u061c", `\u2066\u2069\u200f\u061c`},
		"line separator":              {"a\u2028b", `a\u2028b`},
		"byte that is not UTF-8":      {"a\x9bb", `a\x9bb`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Safe(tt.in); got != tt.want {
				t.Errorf("Safe(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSafeLines_KeepsLineBreaksAndEscapesTheRest(t *testing.T) {
	got := SafeLines("first \x1b[2J\nsecond\r")
	if want := "first \\x1b[2J\nsecond\\r"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestExecute_EscapesControlCharactersOfTheError(t *testing.T) {
	root := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true, RunE: func(*cobra.Command, []string) error {
		return errors.New("denied: \x1b]0;owned\a\x1b[2J")
	}}
	var errOut bytes.Buffer
	root.SetErr(&errOut)
	root.SetArgs(nil)
	Execute(root)
	if strings.ContainsAny(errOut.String(), "\x1b\a") {
		t.Errorf("the error was printed with its control characters: %q", errOut.String())
	}
}

func TestPrintTable_EscapesControlCharactersTheTablePrinterLeaves(t *testing.T) {
	table := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name", Type: "string"}, {Name: "Message", Type: "string"}},
		Rows:              []metav1.TableRow{{Cells: []any{"a", "bad\b\u202eword"}}},
	}
	var b strings.Builder
	if err := PrintTable(&b, table, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\b\u202e") {
		t.Errorf("printed %q", b.String())
	}
	if table.Rows[0].Cells[1] != "bad\b\u202eword" {
		t.Errorf("the caller's table was changed: %q", table.Rows[0].Cells[1])
	}
}
