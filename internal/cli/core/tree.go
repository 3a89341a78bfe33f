// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Tree is one line of a tree that a command draws to describe an object
// (what runs under it, say), and the lines below it. Add escapes each
// label with Safe, since what a tree shows is status text a tenant wrote.
type Tree struct {
	// Label is the line itself. The root's is the plugin's own text and is
	// printed as it is.
	Label string
	// Children are the lines below, in order.
	Children []*Tree
}

// Add appends a child labelled by format and returns it, so that a branch
// can be filled in place. The label is escaped with Safe, since the
// arguments are status text, and a label is one line of the tree.
func (t *Tree) Add(format string, args ...any) *Tree {
	child := &Tree{Label: Safe(fmt.Sprintf(format, args...))}
	t.Children = append(t.Children, child)
	return child
}

// Write draws the tree the way terminal tree views do: the root alone,
// then each child after ├── or └──, its own children indented under │
// where more siblings follow.
func (t *Tree) Write(w io.Writer) {
	fmt.Fprintln(w, t.Label)
	t.writeChildren(w, "")
}

func (t *Tree) writeChildren(w io.Writer, indent string) {
	for i, child := range t.Children {
		branch, below := "├── ", "│   "
		if i == len(t.Children)-1 {
			branch, below = "└── ", "    "
		}
		fmt.Fprintf(w, "%s%s%s\n", indent, branch, child.Label)
		child.writeChildren(w, indent+below)
	}
}

// Columns lays rows out as aligned columns, two spaces apart, for the
// children of a node that read as a table (the revisions of a release).
// Cells are escaped with Safe before they are measured, so that the widths
// are those of what is printed, and measured in characters, so that a
// multi-byte one takes one column.
func Columns(rows [][]string) []string {
	var widths []int
	rows = slices.Clone(rows)
	for r, row := range rows {
		row = slices.Clone(row)
		for i, cell := range row {
			row[i] = Safe(cell)
		}
		rows[r] = row
	}
	for _, row := range rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	lines := make([]string, len(rows))
	for r, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		lines[r] = b.String()
	}
	return lines
}
