// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package text holds the one way this project shortens a text to a length
// limit: by characters, never splitting a UTF-8 sequence, marking the cut.
// A status message, an event note and a CLI cell all go through it, so a
// limit counted by the API server's schema (maxLength counts characters)
// and one counted on a terminal are met the same way.
package text

import "unicode/utf8"

// Truncate shortens s to at most n characters (the unit of a schema's
// maxLength), the last of them an ellipsis that marks the cut. A string of
// n characters or fewer is returned as it is; n below 1 gives "".
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + ellipsis
}

// ellipsis marks a cut: one character, three bytes in UTF-8.
const ellipsis = "…"

// TruncateBytes shortens s to at most n bytes, for limits counted in bytes
// (an Event's note): it cuts between characters, never inside one, and
// ends with the ellipsis that marks the cut. A string of n bytes or fewer
// is returned as it is; n below len(ellipsis) gives "".
func TruncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len(ellipsis) {
		return ""
	}
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
