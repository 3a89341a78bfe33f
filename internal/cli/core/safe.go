// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Safe returns s, text read from the cluster, fit to be printed as one line
// of human output: every character a terminal would act on instead of
// drawing is replaced by a visible escape. Any tenant writes the messages,
// versions, reasons and event notes the plugins show, and whoever runs the
// plugin may be someone else: without this, "\x1b[2J" clears their screen,
// "\r" or "\b" overwrite what was printed before it, U+202E reverses what
// follows, and a newline forges a line that seems to come from the plugin.
//
// Escaped are the C0 controls (newline and tab too: a field is one line and
// one cell), DEL, the C1 controls, the Unicode line and paragraph
// separators, the bidirectional overrides, embeddings, isolates and marks,
// and bytes that are not UTF-8 (a terminal in an 8-bit mode reads 0x9b as a
// control sequence introducer). Like cli-runtime's EscapeTerminal, which
// only covers ESC and "\r", the result is for reading, not for parsing
// back: a backslash already in s is left as it is. Output through
// cli-runtime's object printers (-o json, yaml) is quoted by those formats
// and needs no such care.
func Safe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeFormatting(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether Safe has anything to replace in s; the
// printable ASCII that nearly every field is made of takes no allocation.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return strings.ContainsFunc(s, func(r rune) bool {
				return r == utf8.RuneError || r < 0x100 && unicode.IsControl(r) || unsafeFormatting(r)
			})
		}
	}
	return false
}

// unsafeFormatting reports whether r, above the Latin-1 controls, moves or
// reorders text instead of being drawn: the line and paragraph separators
// and the bidirectional formatting characters (the "Trojan Source" ones,
// CVE-2021-42574).
func unsafeFormatting(r rune) bool {
	switch {
	case r == '\u061c', r == '\u200e', r == '\u200f',
		r == '\u2028', r == '\u2029',
		r >= '\u202a' && r <= '\u202e',
		r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// SafeLines is Safe for text of several lines, such as an error from the
// API server: each line is escaped, and the line breaks between them are
// kept.
func SafeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Safe(l)
	}
	return strings.Join(lines, "\n")
}
