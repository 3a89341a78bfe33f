/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package appdeploy

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/example/platform-operator/internal/cli/core"
)

// node is one line of a tree that get draws, and the lines below it. It is
// not in core because only this plugin draws trees so far; it could move
// there as it stands.
type node struct {
	label    string
	children []*node
}

// add appends a child labelled by format and returns it, so that a branch
// can be filled in place. The label is escaped with core.Safe, since the
// arguments are status text, and a label is one line of the tree.
func (n *node) add(format string, args ...any) *node {
	child := &node{label: core.Safe(fmt.Sprintf(format, args...))}
	n.children = append(n.children, child)
	return child
}

// write draws the tree the way terminal tree views do: the root
// alone, then each child after ├── or └──, its own children indented under
// │ where more siblings follow.
func (n *node) write(w io.Writer) {
	fmt.Fprintln(w, n.label)
	n.writeChildren(w, "")
}

func (n *node) writeChildren(w io.Writer, indent string) {
	for i, child := range n.children {
		branch, below := "├── ", "│   "
		if i == len(n.children)-1 {
			branch, below = "└── ", "    "
		}
		fmt.Fprintf(w, "%s%s%s\n", indent, branch, child.label)
		child.writeChildren(w, indent+below)
	}
}

// columns lays rows out as aligned columns, two spaces apart, for the
// children of a node that read as a table (get's revisions). Cells are
// escaped with core.Safe before they are measured, so that the widths are
// those of what is printed.
func columns(rows [][]string) []string {
	var widths []int
	rows = slices.Clone(rows)
	for r, row := range rows {
		row = slices.Clone(row)
		for i, cell := range row {
			row[i] = core.Safe(cell)
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
