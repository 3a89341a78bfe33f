// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTree_DrawsBranchesAndIndentsUnderThem(t *testing.T) {
	root := &Tree{Label: "root"}
	a := root.Add("a %d", 1)
	a.Add("a.1")
	a.Add("a.2").Add("a.2.i")
	root.Add("b").Add("b.1")
	var b strings.Builder
	root.Write(&b)
	want := `root
├── a 1
│   ├── a.1
│   └── a.2
│       └── a.2.i
└── b
    └── b.1
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

func TestTree_AddEscapesALabelToOneLine(t *testing.T) {
	root := &Tree{Label: "root"}
	root.Add("message: %s", "ok\r\nFORGED\x1b[2J")
	var b strings.Builder
	root.Write(&b)
	want := "root\n└── message: ok\\r\\nFORGED\\x1b[2J\n"
	if got := b.String(); got != want {
		t.Errorf("tree %q, want %q", got, want)
	}
}

func TestColumns_AlignsCellsTwoSpacesApart(t *testing.T) {
	got := Columns([][]string{{"a", "three", "x"}, {"longer", "1", "→y"}})
	want := []string{"a       three  x", "longer  1      →y"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Columns (-want +got):\n%s", diff)
	}
}

func TestColumns_MeasuresWhatIsPrinted(t *testing.T) {
	// "é" and "🚀" take one column each; the tab is printed as \t, two.
	got := Columns([][]string{{"héllo", "x"}, {"🚀", "y"}, {"a\tb", "z"}})
	want := []string{"héllo  x", "🚀      y", `a\tb   z`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Columns (-want +got):\n%s", diff)
	}
}
