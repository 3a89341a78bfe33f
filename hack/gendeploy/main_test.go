// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/example/platform-operator/internal/yamldoc"
)

// stream is a rendered install of two objects: a CRD whose description is
// padding bytes long, and the manager's Deployment.
func stream(padding int) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.platform.example.com
spec:
  description: "` + strings.Repeat("x", padding) + `"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: platform-operator-controller-manager
spec:
  template:
    spec:
      initContainers:
      - name: other
        image: busybox:1.36
      containers:
      - name: manager
        image: controller:latest
`
}

// generate runs gendeploy on in and returns what it wrote.
func generate(t *testing.T, in, image string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	src, out := filepath.Join(dir, "rendered.yaml"), filepath.Join(dir, "install.yaml")
	if err := os.WriteFile(src, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(src, out, image); err != nil {
		return "", err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}

// deploymentImages returns the images of the Deployments of a YAML stream.
func deploymentImages(t *testing.T, text string) []string {
	t.Helper()
	objs, err := yamldoc.Decode(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, obj := range objs {
		if yamldoc.Kind(obj) != "Deployment" {
			continue
		}
		podSpec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		for _, field := range []string{"initContainers", "containers"} {
			containers, _ := podSpec[field].([]any)
			for _, c := range containers {
				images = append(images, c.(map[string]any)["image"].(string))
			}
		}
	}
	return images
}

func TestRun_SetsTheManagersImageOnly(t *testing.T) {
	got, err := generate(t, stream(10), "registry.example.com/platform-operator:v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"busybox:1.36", "registry.example.com/platform-operator:v1.2.3"}
	if diff := cmp.Diff(want, deploymentImages(t, got)); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	objs, err := yamldoc.Decode(strings.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Errorf("%d objects written, want the 2 rendered", len(objs))
	}
}

func TestRun_RefusesAnInstallWithoutTheManagersPlaceholderImage(t *testing.T) {
	in := strings.ReplaceAll(stream(10), "controller:latest", "somewhere.example.com/else:v1")
	if _, err := generate(t, in, "registry.example.com/platform-operator:v1"); err == nil {
		t.Error("an install whose Deployment lacks controller:latest was written; want an error")
	}
}

func TestRun_HeaderSaysWhichApplyWorks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		padding    int
		clientSide bool
	}{
		{name: "small objects", padding: 10, clientSide: true},
		{name: "a CRD just under the limit", padding: annotationLimit - 1024, clientSide: true},
		{name: "a CRD beyond the limit", padding: annotationLimit + 1, clientSide: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := generate(t, stream(tc.padding), placeholderImage)
			if err != nil {
				t.Fatal(err)
			}
			header, _, _ := strings.Cut(got, "---\n")
			says := strings.Contains(header, "kubectl apply -f config/deploy/")
			if says != tc.clientSide {
				t.Errorf("header offers client-side apply: %v, want %v:\n%s", says, tc.clientSide, header)
			}
			if !strings.Contains(header, "kubectl apply --server-side -f config/deploy/") {
				t.Errorf("header does not offer server-side apply:\n%s", header)
			}
		})
	}
}

// TestCommittedInstall_FitsClientSideApply guards the README's
// `kubectl apply -f config/deploy/`: when a CRD outgrows client-side
// apply's annotation, the README must give `--server-side` alone.
func TestCommittedInstall_FitsClientSideApply(t *testing.T) {
	text, err := os.ReadFile("../../config/deploy/install.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := yamldoc.Decode(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	largest, err := largestObject(objs)
	if err != nil {
		t.Fatal(err)
	}
	if largest.size > annotationLimit {
		t.Errorf("%s is %d KiB as JSON, beyond client-side apply's %d KiB: make the README and docs say "+
			"`kubectl apply --server-side -f config/deploy/` only", largest.name, largest.size/1024, annotationLimit/1024)
	}
	if images := deploymentImages(t, string(text)); !cmp.Equal(images, []string{placeholderImage}) {
		t.Errorf("the committed install runs %v, want %s (make manifests with the default IMG)", images, placeholderImage)
	}
}
