// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// The -o values that PrintFlags adds to cli-runtime's: kubectl has them
// from k8s.io/kubectl, which a plugin should not import for two printers.
const (
	wideFormat          = "wide"
	customColumnsFormat = "custom-columns"
)

// PrintFlags are -o and --no-headers for commands that show objects. With no
// -o, or -o wide, the command prints its own table or description (Human);
// any other -o prints the objects themselves through cli-runtime's printers:
// json, yaml, kyaml, name, go-template, jsonpath and their -file forms, and
// custom-columns.
type PrintFlags struct {
	// Objects are cli-runtime's flags for printing objects (-o, --template,
	// --allow-missing-template-keys, --show-managed-fields).
	Objects *genericclioptions.PrintFlags
	// NoHeaders leaves the header out of tables, the human ones and
	// custom-columns.
	NoHeaders bool
}

// NewPrintFlags returns PrintFlags with the human output as the default.
func NewPrintFlags() *PrintFlags {
	return &PrintFlags{Objects: genericclioptions.NewPrintFlags("")}
}

// NewActionPrintFlags is -o for a command that changes one object, as
// kubectl create and patch have it: by default the line
// "kind.group/name <operation>", or the changed object in any -o format.
func NewActionPrintFlags(operation string, scheme *runtime.Scheme) *genericclioptions.PrintFlags {
	return genericclioptions.NewPrintFlags(operation).WithTypeSetter(scheme)
}

// AddFlags adds the flags to cmd.
func (f *PrintFlags) AddFlags(cmd *cobra.Command) {
	f.Objects.AddFlags(cmd)
	cmd.Flags().Lookup("output").Usage = fmt.Sprintf("Output format. One of: (%s).", strings.Join(f.AllowedFormats(), ", "))
	cmd.Flags().BoolVar(&f.NoHeaders, "no-headers", false, "When using the default, wide or custom-columns output format, don't print headers.")
}

// AllowedFormats are the values -o takes.
func (f *PrintFlags) AllowedFormats() []string {
	return append(f.Objects.AllowedFormats(), wideFormat, customColumnsFormat)
}

func (f *PrintFlags) format() string { return strings.TrimSpace(*f.Objects.OutputFormat) }

// Human reports whether the command prints its own table or description:
// no -o (and no --template, which implies -o go-template), or -o wide.
func (f *PrintFlags) Human() bool {
	switch f.format() {
	case "":
		t := f.Objects.TemplatePrinterFlags.TemplateArgument
		return t == nil || *t == ""
	case wideFormat:
		return true
	}
	return false
}

// Wide reports whether -o wide asks for the wide columns.
func (f *PrintFlags) Wide() bool { return f.format() == wideFormat }

// Validate fails on an -o no printer takes, before a command goes to the
// cluster.
func (f *PrintFlags) Validate() error {
	if f.Human() {
		return nil
	}
	_, err := f.ToPrinter()
	return err
}

// ToPrinter returns the printer of a non-human -o.
func (f *PrintFlags) ToPrinter() (printers.ResourcePrinter, error) {
	if spec, ok := strings.CutPrefix(f.format(), customColumnsFormat+"="); ok {
		return NewCustomColumnsPrinter(spec, f.NoHeaders)
	}
	p, err := f.Objects.ToPrinter()
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return nil, fmt.Errorf("unknown output format %q: use one of %s (custom-columns=HEADER:JSONPATH,...)",
			f.format(), strings.Join(f.AllowedFormats(), ", "))
	}
	return p, err
}

// Print prints obj, one object or a typed list, with the printer of a
// non-human -o. Like kubectl get, it prints a list as a v1 List whose items
// carry their apiVersion and kind, so that every printer, name and jsonpath
// too, sees what it would see from kubectl.
func (f *PrintFlags) Print(w io.Writer, scheme *runtime.Scheme, obj runtime.Object) error {
	p, err := f.ToPrinter()
	if err != nil {
		return err
	}
	var out runtime.Object
	if meta.IsListType(obj) {
		out, err = ToList(scheme, obj)
	} else {
		out, err = ToUnstructured(scheme, obj)
	}
	if err != nil {
		return err
	}
	return p.PrintObj(out, w)
}

// ToList returns the items of a typed list as a v1 List, the form kubectl
// prints lists in.
func ToList(scheme *runtime.Scheme, list runtime.Object) (*unstructured.UnstructuredList, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""},
	}}
	for _, item := range items {
		u, err := ToUnstructured(scheme, item)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *u)
	}
	return out, nil
}

// ToUnstructured returns obj as the API server would send it: with its
// apiVersion and kind, which typed objects read through a client lack, and
// with the field names of its JSON, which jsonpath expressions use.
func ToUnstructured(scheme *runtime.Scheme, obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, err
	}
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(data)
}
