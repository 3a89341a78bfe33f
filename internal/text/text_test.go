// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package text

import (
	"testing"
	"unicode/utf8"
)

func TestTruncate_CutsCharactersNeverBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{in: "hello", n: 5, want: "hello"},
		{in: "hello", n: 10, want: "hello"},
		{in: "hello", n: 4, want: "hel…"},
		{in: "héllo wörld", n: 4, want: "hél…"},
		{in: "日本語のテキスト", n: 3, want: "日本…"},
		{in: "🚀🚀🚀🚀", n: 2, want: "🚀…"},
		{in: "ab", n: 1, want: "…"},
		{in: "ab", n: 0, want: ""},
		{in: "", n: 0, want: ""},
	} {
		got := Truncate(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q is not valid UTF-8", tc.in, tc.n, got)
		}
		if n := utf8.RuneCountInString(got); n > max(tc.n, 0) {
			t.Errorf("Truncate(%q, %d) has %d characters", tc.in, tc.n, n)
		}
	}
}

func TestTruncateBytes_CutsBetweenCharacters(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{in: "hello", n: 5, want: "hello"},
		{in: "hello", n: 4, want: "h…"},
		// "é" is two bytes: a cut after "h" and one byte of it would leave
		// half a character.
		{in: "héllo", n: 5, want: "h…"},
		{in: "héllo!", n: 6, want: "hé…"},
		{in: "日本語", n: 8, want: "日…"},
		{in: "ab", n: 2, want: "ab"},
		{in: "abcd", n: 2, want: ""},
	} {
		got := TruncateBytes(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("TruncateBytes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) || len(got) > tc.n {
			t.Errorf("TruncateBytes(%q, %d) = %q: %d bytes, valid UTF-8 %t", tc.in, tc.n, got, len(got), utf8.ValidString(got))
		}
	}
}
