// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command crdtrim removes from generated CustomResourceDefinitions the
// descriptions of the Kubernetes types a field embeds (an AppDeployment's
// pod template): they repeat the Kubernetes API reference, make up most of
// the CRD's size, and kubectl explain finds them there anyway. The field's
// own description stays.
//
//	go run ./hack/crdtrim -field spec.template config/crd/bases/x.yaml...
//
// Each file is rewritten in place when it has the field; files without it
// are left as they are.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	field := flag.String("field", "", "the dotted path of the field in the CRD's schema, e.g. spec.template")
	optional := flag.String("optional", "", "a dotted path below the field to make optional, e.g. spec.containers")
	flag.Parse()
	if *field == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: crdtrim -field spec.template FILE...")
		os.Exit(2)
	}
	for _, file := range flag.Args() {
		var opt []string
		if *optional != "" {
			opt = strings.Split(*optional, ".")
		}
		if err := trimFile(file, strings.Split(*field, "."), opt); err != nil {
			fmt.Fprintf(os.Stderr, "crdtrim: %s: %v\n", file, err)
			os.Exit(1)
		}
	}
}

// trimFile rewrites file with the descriptions below path removed, in
// every version's schema.
func trimFile(file string, path, optional []string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, changed, err := trim(data, path, optional)
	if err != nil || !changed {
		return err
	}
	return os.WriteFile(file, out, 0o644)
}

// trim returns the CRD of data with the descriptions below path removed
// and the field at optional below it no longer required, and nullable,
// and whether any version has the field. The YAML is read and written as
// controller-gen writes it: a document marker, then keys in order.
func trim(data []byte, path, optional []string) ([]byte, bool, error) {
	var crd map[string]any
	if err := yaml.Unmarshal(bytes.TrimPrefix(data, []byte("---\n")), &crd); err != nil {
		return nil, false, err
	}
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	changed := false
	for _, v := range versions {
		node := lookup(v, "schema", "openAPIV3Schema")
		for _, p := range path {
			node = lookup(node, "properties", p)
		}
		if m, ok := node.(map[string]any); ok {
			for _, child := range children(m) {
				dropDescriptions(child)
			}
			if len(optional) > 0 {
				if err := makeOptional(m, optional); err != nil {
					return nil, false, err
				}
			}
			changed = true
		}
	}
	if !changed {
		return data, false, nil
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, false, err
	}
	return append([]byte("---\n"), out...), true, nil
}

// lookup follows keys through nested maps; nil when one is missing.
func lookup(node any, keys ...string) any {
	for _, k := range keys {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[k]
	}
	return node
}

// children are the schemas directly below a schema: its properties, its
// items and its additional properties.
func children(m map[string]any) []any {
	var out []any
	if props, ok := m["properties"].(map[string]any); ok {
		for _, p := range props {
			out = append(out, p)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if c, ok := m[k]; ok {
			out = append(out, c)
		}
	}
	return out
}

// dropDescriptions removes the description of a schema and of every
// schema below it.
func dropDescriptions(node any) {
	m, ok := node.(map[string]any)
	if !ok {
		return
	}
	delete(m, "description")
	for _, c := range children(m) {
		dropDescriptions(c)
	}
}

// makeOptional removes the last element of path from the required list of
// the schema the rest of path leads to below m.
func makeOptional(m map[string]any, path []string) error {
	var node any = m
	for _, p := range path[:len(path)-1] {
		node = lookup(node, "properties", p)
	}
	parent, ok := node.(map[string]any)
	if !ok {
		return fmt.Errorf("no schema at %s", strings.Join(path[:len(path)-1], "."))
	}
	required, _ := parent["required"].([]any)
	name := path[len(path)-1]
	kept := make([]any, 0, len(required))
	for _, r := range required {
		if r != name {
			kept = append(kept, r)
		}
	}
	if len(kept) == len(required) {
		return fmt.Errorf("%s is not required", strings.Join(path, "."))
	}
	if len(kept) == 0 {
		delete(parent, "required")
	} else {
		parent["required"] = kept
	}
	// Go clients send an unset list of a typed value as null (a PodSpec's
	// containers has no omitempty), which a schema refuses unless it is
	// nullable.
	if field, ok := lookup(parent, "properties", name).(map[string]any); ok {
		field["nullable"] = true
	}
	return nil
}
