// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestOptions_OpenReadsAFileOrStandardInputForDash(t *testing.T) {
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader("from stdin")}, nil)
	file := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(file, []byte("from the file"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"-": "from stdin", file: "from the file"} {
		in, err := o.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(in)
		if err != nil || string(got) != want {
			t.Errorf("Open(%q) read %q, %v; want %q", name, got, err, want)
		}
		if err := in.Close(); err != nil {
			t.Errorf("Close of %q: %v", name, err)
		}
	}
	if _, err := o.Open(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Open of a missing file: %v, want an error naming it", err)
	}
}
