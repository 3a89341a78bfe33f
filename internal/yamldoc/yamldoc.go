// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package yamldoc reads and writes multi-document YAML streams, the form
// kustomize renders and kubectl applies. The chart generator, the local
// webhook set-up and the test harness all take such streams apart and put
// them back together; they do it here, once, so that they agree on what a
// document is (a "---" line, JSON accepted, empty documents skipped).
package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Decode returns the documents of a YAML or JSON stream, in order, as generic
// objects. Empty documents (a lone "---", comments only) are skipped, as
// kubectl skips them.
func Decode(r io.Reader) ([]map[string]any, error) {
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	var objs []map[string]any
	for n := 1; ; n++ {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if obj != nil {
			objs = append(objs, obj)
		}
	}
}

// ReadFile is Decode of the file at path.
func ReadFile(path string) ([]map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	objs, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return objs, nil
}

// Encode returns objs as one YAML stream, each document led by "---", which
// kubectl apply -f - reads back as separate objects.
func Encode(objs ...any) ([]byte, error) {
	var out bytes.Buffer
	for _, obj := range objs {
		y, err := sigsyaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	return out.Bytes(), nil
}

// Kind returns the kind of a decoded object, or "" when it has none.
func Kind(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	return kind
}

// Name returns the metadata.name of a decoded object, or "" when it has none.
func Name(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}
