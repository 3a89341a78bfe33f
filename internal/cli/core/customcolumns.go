// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// customColumn is one HEADER:JSONPATH of -o custom-columns.
type customColumn struct {
	header string
	path   *jsonpath.JSONPath
}

// CustomColumnsPrinter prints -o custom-columns=HEADER:JSONPATH,...: a
// table with a row for each object and a column for each expression, as
// kubectl's does. It takes unstructured objects and lists, as Print hands
// them over.
type CustomColumnsPrinter struct {
	columns   []customColumn
	noHeaders bool
}

// NewCustomColumnsPrinter parses spec, e.g. "NAME:.metadata.name,PHASE:.status.phase".
// As in kubectl, an expression may leave out the braces and the leading dot.
func NewCustomColumnsPrinter(spec string, noHeaders bool) (*CustomColumnsPrinter, error) {
	if spec == "" {
		return nil, fmt.Errorf("custom-columns needs HEADER:JSONPATH pairs, e.g. custom-columns=NAME:.metadata.name")
	}
	p := &CustomColumnsPrinter{noHeaders: noHeaders}
	for part := range strings.SplitSeq(spec, ",") {
		header, expr, ok := strings.Cut(part, ":")
		if !ok || header == "" || expr == "" {
			return nil, fmt.Errorf("custom-columns: %q is not HEADER:JSONPATH", part)
		}
		path := jsonpath.New(header).AllowMissingKeys(true)
		if err := path.Parse(relaxed(expr)); err != nil {
			return nil, fmt.Errorf("custom-columns: %s: %w", header, err)
		}
		p.columns = append(p.columns, customColumn{header: header, path: path})
	}
	return p, nil
}

// relaxed turns "metadata.name" and ".metadata.name" into "{.metadata.name}".
func relaxed(expr string) string {
	if strings.HasPrefix(expr, "{") {
		return expr
	}
	return "{." + strings.TrimPrefix(expr, ".") + "}"
}

// PrintObj prints obj, one object or a list, as rows.
func (p *CustomColumnsPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	tw := printers.GetNewTabWriter(w)
	if !p.noHeaders {
		headers := make([]string, len(p.columns))
		for i, c := range p.columns {
			headers[i] = c.header
		}
		fmt.Fprintln(tw, strings.Join(headers, "\t"))
	}
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return err
		}
	}
	for _, item := range items {
		u, ok := item.(runtime.Unstructured)
		if !ok {
			return fmt.Errorf("custom-columns prints unstructured objects, not %T", item)
		}
		cells := make([]string, len(p.columns))
		for i, c := range p.columns {
			cell, err := c.cell(u.UnstructuredContent())
			if err != nil {
				return err
			}
			// A cell is one field of a line: escaped, a tab or a newline
			// in it cannot move the columns or forge a row.
			cells[i] = Safe(cell)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// cell is the column's values in content, joined by commas; "<none>" when
// there are none, as kubectl prints it.
func (c customColumn) cell(content map[string]any) (string, error) {
	results, err := c.path.FindResults(content)
	if err != nil {
		return "", fmt.Errorf("custom-columns: %s: %w", c.header, err)
	}
	var values []string
	for _, r := range results {
		for _, v := range r {
			if v.IsValid() && (v.Kind() != reflect.Interface || !v.IsNil()) {
				values = append(values, fmt.Sprint(v.Interface()))
			}
		}
	}
	if len(values) == 0 {
		return "<none>", nil
	}
	return strings.Join(values, ","), nil
}
