// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Where the sources are, relative to the repository root.
const (
	installDir = "config/default"
	samplesDir = "config/samples"
	baseCSV    = "config/manifests/bases/platform-operator.clusterserviceversion.yaml"
	chartFile  = "charts/platform-operator/Chart.yaml"
)

// readSources renders the kustomize sources with kubectl and reads the base
// CSV and the chart's name (the package) and appVersion (the version).
func readSources(repo, kubectl string) (source, options, error) {
	if !filepath.IsAbs(kubectl) && filepath.Dir(kubectl) != "." {
		kubectl = filepath.Join(repo, kubectl)
	}
	var src source
	var err error
	if src.Install, err = kustomize(kubectl, filepath.Join(repo, installDir)); err != nil {
		return source{}, options{}, err
	}
	if src.Samples, err = kustomize(kubectl, filepath.Join(repo, samplesDir)); err != nil {
		return source{}, options{}, err
	}
	data, err := os.ReadFile(filepath.Join(repo, baseCSV))
	if err != nil {
		return source{}, options{}, err
	}
	src.Base = &v1alpha1.ClusterServiceVersion{}
	if err := sigsyaml.UnmarshalStrict(data, src.Base); err != nil {
		return source{}, options{}, fmt.Errorf("%s: %w", baseCSV, err)
	}
	data, err = os.ReadFile(filepath.Join(repo, chartFile))
	if err != nil {
		return source{}, options{}, err
	}
	var chart struct {
		Name       string `json:"name"`
		AppVersion string `json:"appVersion"`
	}
	if err := sigsyaml.Unmarshal(data, &chart); err != nil {
		return source{}, options{}, fmt.Errorf("%s: %w", chartFile, err)
	}
	if chart.Name == "" || chart.AppVersion == "" {
		return source{}, options{}, fmt.Errorf("%s: name and appVersion must be set", chartFile)
	}
	return src, options{Package: chart.Name, Version: chart.AppVersion}, nil
}

// kustomize renders a kustomization with `kubectl kustomize`, the renderer
// `make deploy` uses, so that the bundle holds what that install applies.
func kustomize(kubectl, dir string) ([]*unstructured.Unstructured, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %w\n%s", dir, err, stderr.Bytes())
	}
	return decodeObjects(&stdout)
}

// decodeObjects returns the objects of a multi-document YAML stream in
// order, skipping empty documents.
func decodeObjects(r io.Reader) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	var objs []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if obj != nil {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}

// writeBundle replaces the generated parts of the bundle directory with
// files, so that a file the generator no longer writes does not linger.
func writeBundle(repo, out string, files []file) error {
	dir := filepath.Join(repo, out)
	for _, stale := range []string{manifestsDir, metadataDir, dockerfile} {
		if err := os.RemoveAll(filepath.Join(dir, stale)); err != nil {
			return err
		}
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %d files to %s\n", len(files), dir)
	return nil
}
