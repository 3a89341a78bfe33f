// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHelp_ReadsAPageIntoTheCommandsHelp(t *testing.T) {
	h := Help{Dir: "help", Pages: fstest.MapFS{
		"help/root.md": {Data: []byte("# kubectl stask\n\nScheduled tasks\nand their runs\n")},
		"help/get.md": {Data: []byte("# kubectl stask get NAME\n\nShow a task.\n\n" +
			"What get shows.\n\n  Indented, as written.\n\n## Examples\n\n```\n  kubectl stask get a\n  kubectl stask get b\n```\n")},
	}}
	root := h.Command("root")
	if root.Use != "kubectl-stask" || root.Short != "Scheduled tasks and their runs" || root.Long != "" || root.Example != "" {
		t.Errorf("root: %q %q %q %q", root.Use, root.Short, root.Long, root.Example)
	}
	get := h.Command("get")
	if get.Use != "get NAME" || get.Short != "Show a task." {
		t.Errorf("get: Use %q, Short %q", get.Use, get.Short)
	}
	if want := "What get shows.\n\n  Indented, as written."; get.Long != want {
		t.Errorf("get: Long %q, want %q", get.Long, want)
	}
	if want := "  kubectl stask get a\n  kubectl stask get b"; get.Example != want {
		t.Errorf("get: Example %q, want %q", get.Example, want)
	}
}

func TestHelp_AMissingOrMalformedPageSaysWhichAndWhy(t *testing.T) {
	h := Help{Pages: fstest.MapFS{
		"untitled.md": {Data: []byte("Show a task.\n")},
		"empty.md":    {Data: []byte("# kubectl stask get NAME\n\n")},
		"nocode.md":   {Data: []byte("# kubectl stask get NAME\n\nShow.\n\n## Examples\n\n  kubectl stask get a\n")},
	}}
	for name, want := range map[string]string{
		"missing":  "help page missing.md: open missing.md",
		"untitled": `want a title "# kubectl PLUGIN [USAGE]"`,
		"empty":    "no short description",
		"nocode":   "no ``` code block",
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				got, _ := recover().(string)
				if !strings.Contains(got, want) || !strings.Contains(got, name+".md") {
					t.Errorf("panic %q, want one naming %s.md with %q", got, name, want)
				}
			}()
			h.Command(name)
		})
	}
}

func TestHelp_ColumnsAreThePagesTable(t *testing.T) {
	h := Help{Pages: fstest.MapFS{
		"list.md": {Data: []byte("# kubectl stask list\n\nList tasks.\n\n## Columns\n\n" +
			"| Column | Type | Wide | Description |\n|---|---|---|---|\n" +
			"| Name | | | The task. |\n| Active | integer | | Runs in progress. |\n| Image | | yes | Its image. |\n" +
			"\n## Examples\n\n```\n  kubectl stask list\n```\n")},
		"bad.md": {Data: []byte("# kubectl stask list\n\nList tasks.\n\n## Columns\n\n| Name | string |\n")},
	}}
	got := h.Columns("list")
	want := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "The task."},
		{Name: "Active", Type: "integer", Description: "Runs in progress."},
		{Name: "Image", Type: "string", Priority: 1, Description: "Its image."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns %+v, want %+v", got, want)
	}
	defer func() {
		if got, _ := recover().(string); !strings.Contains(got, "bad.md") || !strings.Contains(got, "want 4") {
			t.Errorf("panic %q, want one naming bad.md and the cells it wants", got)
		}
	}()
	h.Columns("bad")
}
