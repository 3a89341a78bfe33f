// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
)

// TableOptions say how PrintTable lays a table out.
type TableOptions struct {
	// Wide shows the columns of priority 1 and more too, as -o wide does.
	Wide bool
	// WithNamespace adds a NAMESPACE column first, as -A does; it is read
	// from each row's Object.
	WithNamespace bool
	// NoHeaders leaves the header line out.
	NoHeaders bool
	// Color paints the cells that are words of Palette. The caller decides
	// it, normally with UseColor, so that tests can ask for either.
	Color bool
	// Palette is what Color paints.
	Palette Palette
}

// ObjectTable is a table of columns with a row for each of objects, whose
// cells are cells(object). Each row carries its object, from which the
// table printer reads the namespace that -A shows and which -o wide may
// need; a plugin's tables differ only in their cells.
func ObjectTable[T any, P interface {
	*T
	runtime.Object
}](columns []metav1.TableColumnDefinition, objects []T, cells func(P) []any) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: columns}
	for i := range objects {
		obj := P(&objects[i])
		t.Rows = append(t.Rows, metav1.TableRow{Cells: cells(obj), Object: runtime.RawExtension{Object: obj}})
	}
	return t
}

// PrintTable prints table as kubectl prints its tables, through
// cli-runtime's table printer. A table without rows prints nothing, as in
// kubectl; see NoResources. Every text cell is escaped with Safe first:
// the printer itself escapes only ESC and cuts a cell at its first line
// break, which leaves backspaces, C1 controls and bidi overrides raw.
func PrintTable(w io.Writer, table *metav1.Table, opts TableOptions) error {
	var b strings.Builder
	p := printers.NewTablePrinter(printers.PrintOptions{Wide: opts.Wide, WithNamespace: opts.WithNamespace, NoHeaders: opts.NoHeaders})
	if err := p.PrintObj(safeTable(table), &b); err != nil {
		return err
	}
	text := b.String()
	if opts.Color {
		text = Colorize(text, opts.Palette)
	}
	_, err := io.WriteString(w, text)
	return err
}

// safeTable is table with Safe applied to its text cells; table itself is
// left as the caller built it.
func safeTable(table *metav1.Table) *metav1.Table {
	out := *table
	out.Rows = make([]metav1.TableRow, len(table.Rows))
	for i, row := range table.Rows {
		row.Cells = slices.Clone(row.Cells)
		for j, cell := range row.Cells {
			if s, ok := cell.(string); ok {
				row.Cells[j] = Safe(s)
			}
		}
		out.Rows[i] = row
	}
	return &out
}

// PrintTable prints a command's human table to Out as pf asks (-o wide,
// --no-headers), painted with palette when UseColor allows it for Out and
// the environment.
func (o *Options) PrintTable(table *metav1.Table, pf *PrintFlags, withNamespace bool, palette Palette) error {
	return PrintTable(o.Out(), table, TableOptions{
		Wide:          pf.Wide(),
		WithNamespace: withNamespace,
		NoHeaders:     pf.NoHeaders,
		Color:         UseColor(o.OutIsTerminal(), os.Getenv),
		Palette:       palette,
	})
}

// NoResources tells errOut that a listing found nothing, in kubectl's words,
// so that the output stream stays empty for scripts.
func NoResources(errOut io.Writer, ns string, allNamespaces bool) {
	if allNamespaces {
		fmt.Fprintln(errOut, "No resources found")
		return
	}
	fmt.Fprintf(errOut, "No resources found in %s namespace.\n", ns)
}
