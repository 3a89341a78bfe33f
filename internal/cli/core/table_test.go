// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// phaseTable is a small table with a wide-only column, over pods.
func phaseTable() *metav1.Table {
	pod := func(ns, name string) runtime.RawExtension {
		return runtime.RawExtension{Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}
	}
	return &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name"},
			{Name: "Phase", Type: "string"},
			{Name: "Exit Code", Type: "integer"},
			{Name: "Node", Type: "string", Priority: 1},
		},
		Rows: []metav1.TableRow{
			{Cells: []any{"first-run", "Succeeded", 0, "kwok-node-0"}, Object: pod("team-a", "first-run")},
			{Cells: []any{"second", "Failed", 3, "kwok-node-1"}, Object: pod("team-b", "second")},
		},
	}
}

func TestPrintTable_LaysOutLikeKubectl(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts TableOptions
		want string
	}{
		{"default", TableOptions{}, `
NAME        PHASE       EXIT CODE
first-run   Succeeded   0
second      Failed      3
`},
		{"wide", TableOptions{Wide: true}, `
NAME        PHASE       EXIT CODE   NODE
first-run   Succeeded   0           kwok-node-0
second      Failed      3           kwok-node-1
`},
		{"all namespaces", TableOptions{WithNamespace: true}, `
NAMESPACE   NAME        PHASE       EXIT CODE
team-a      first-run   Succeeded   0
team-b      second      Failed      3
`},
		{"no headers", TableOptions{NoHeaders: true}, `
first-run   Succeeded   0
second      Failed      3
`},
		{"colour", TableOptions{Color: true, Palette: Palette{"Failed": Red}}, `
NAME        PHASE       EXIT CODE
first-run   Succeeded   0
second      ` + Red + `Failed` + reset + `      3
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := PrintTable(&b, phaseTable(), tt.opts); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.TrimPrefix(tt.want, "\n"), b.String()); diff != "" {
				t.Errorf("PrintTable (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoResources_SaysWhereNothingWasFound(t *testing.T) {
	var b strings.Builder
	NoResources(&b, "team", false)
	NoResources(&b, "", true)
	if diff := cmp.Diff("No resources found in team namespace.\nNo resources found\n", b.String()); diff != "" {
		t.Errorf("NoResources (-want +got):\n%s", diff)
	}
}

func TestObjectTable_ARowPerObjectCarryingIt(t *testing.T) {
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "first"}, Spec: corev1.PodSpec{NodeName: "node-0"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "second"}, Spec: corev1.PodSpec{NodeName: "node-1"}},
	}
	columns := []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Node", Type: "string"}}
	table := ObjectTable(columns, pods, func(p *corev1.Pod) []any { return []any{p.Name, p.Spec.NodeName} })
	var b strings.Builder
	if err := PrintTable(&b, table, TableOptions{WithNamespace: true}); err != nil {
		t.Fatal(err)
	}
	want := "NAMESPACE   NAME     NODE\nteam-a      first    node-0\nteam-b      second   node-1\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if table.Rows[1].Object.Object != &pods[1] {
		t.Errorf("row 1 carries %v, want the second pod itself", table.Rows[1].Object.Object)
	}
}
