// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Relative renders t against now for a table: "in 3m", "2h ago", "now";
// "-" for the zero time. The amounts are kubectl's AGE column's
// (duration.HumanDuration), so a plugin's times read like kubectl's; a time
// to come gets the same amount, of the absolute difference, after "in".
func Relative(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := t.Sub(now)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d > 0:
		return "in " + duration.HumanDuration(d)
	default:
		return duration.HumanDuration(-d) + " ago"
	}
}

// OrDash is s, or "-" when s is empty, so a table's empty cells still read
// as cells.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ANSI colours for Palette values: green for what went well, red for what
// failed.
const (
	Green = "\x1b[32m"
	Red   = "\x1b[31m"
	reset = "\x1b[0m"
)

// Palette maps the words of a table's cells to colours, for example the
// phase "Failed" to Red.
type Palette map[string]string

// UseColor decides whether human output is coloured: only on a terminal,
// where the escape codes are drawn rather than stored in a file or a CI log,
// and never when NO_COLOR is set to a non-empty value (https://no-color.org),
// so a user can always turn it off. getenv is os.Getenv outside tests.
func UseColor(isTTY bool, getenv func(string) string) bool {
	return isTTY && getenv("NO_COLOR") == ""
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// Colorize paints the cells of an already aligned table that are exactly a
// word of palette. It works on the printed text because cli-runtime's table
// printer escapes control characters in cells, and because codes added after
// alignment cannot upset the column widths.
func Colorize(table string, palette Palette) string {
	if len(palette) == 0 {
		return table
	}
	pairs := make([]string, 0, 2*len(palette))
	// Sorted, so that the result does not depend on map order when one word
	// contains another.
	for _, word := range slices.Sorted(maps.Keys(palette)) {
		pairs = append(pairs, " "+word+" ", " "+palette[word]+word+reset+" ")
	}
	r := strings.NewReplacer(pairs...)
	lines := strings.Split(table, "\n")
	for i, l := range lines {
		// A cell is a word between spaces; the added space lets the last
		// column match too.
		lines[i] = strings.TrimSuffix(r.Replace(l+" "), " ")
	}
	return strings.Join(lines, "\n")
}
