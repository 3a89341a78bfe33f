// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package clitest

import (
	"fmt"
	"strings"
	"testing"
)

// HostileText is what a tenant can put in any free-text field of its own
// objects (status messages, versions, reasons) and in events: a screen
// clear and a colour, a backspace, a right-to-left override, a C1 control
// introducer and a bell, and a carriage return and newline that forge a
// line of their own. The controls come before the line break because
// cli-runtime's table printer cuts a cell at its first line break: after
// it, they would prove nothing about tables.
const HostileText = "\x1b[2J\x1b[31mOK\b\u202e\u009b\a\r\nFORGED: all good"

// UnsafeRunes lists the runes of out that a terminal acts on instead of
// drawing: C0 controls other than the newline that ends a line, DEL, C1
// controls and the bidi overrides and isolates. It is written from the
// terminal's side, independently of the escaping under test (core.Safe).
func UnsafeRunes(out string) []string {
	var found []string
	for i, r := range out {
		switch {
		case r == '\n':
		case r < 0x20, r >= 0x7f && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			found = append(found, fmt.Sprintf("%U at byte %d", r, i))
		}
	}
	return found
}

// CheckPrintedSafely fails t when out, what the command line what printed
// from objects holding HostileText, holds a rune a terminal would act on or
// a line that the hostile text's newline started, and when it does not show
// the hostile text at all, since then the check proves nothing.
func CheckPrintedSafely(t testing.TB, what, out string) {
	t.Helper()
	if !strings.Contains(out, "OK") {
		t.Errorf("%s: the hostile text is not shown at all, so this check proves nothing:\n%s", what, out)
	}
	if found := UnsafeRunes(out); len(found) > 0 {
		t.Errorf("%s printed raw control characters %v:\n%q", what, found, out)
	}
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "FORGED") {
			t.Errorf("%s printed a line the status text forged: %q", what, line)
		}
	}
}
