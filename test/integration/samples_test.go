// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestSamples_AllOfThemFitInOneNamespace creates every sample `make run`
// applies (config/samples and config/samples/gateway-api, the resources
// their kustomizations list) in one namespace, as make run does in
// default: the API server and the admission webhooks accept each, and no
// two share a kind and a name (one would silently overwrite the other).
func TestSamples_AllOfThemFitInOneNamespace(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	seen := map[string]string{}
	for _, dir := range []string{"samples", filepath.Join("samples", "gateway-api")} {
		for _, obj := range sampleObjects(t, filepath.Join("..", "..", "config", dir)) {
			key := obj.GetKind() + "/" + obj.GetName()
			where := filepath.Join("config", dir)
			if first, ok := seen[key]; ok {
				t.Errorf("%s is a sample twice: in %s and %s; applied together, the second replaces the first", key, first, where)
				continue
			}
			seen[key] = where
			if obj.GetNamespace() == "" && obj.GetKind() == "GatewayClass" {
				// Cluster-scoped, and made by other tests too.
				err := k8sClient.Create(ctx, obj)
				if client.IgnoreAlreadyExists(err) != nil {
					t.Errorf("%s refused: %v", key, err)
				}
				continue
			}
			obj.SetNamespace(ns)
			if err := k8sClient.Create(ctx, obj); err != nil {
				t.Errorf("%s refused: %v", key, err)
			}
		}
	}
	if len(seen) < 10 {
		t.Errorf("read %d samples, want every one of both kustomizations", len(seen))
	}
}

// sampleObjects reads the objects of the files dir's kustomization.yaml
// lists as resources.
func sampleObjects(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, file := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s/%s: %v", dir, file, err)
			}
			if len(obj.Object) > 0 {
				out = append(out, obj)
			}
		}
	}
	return out
}
