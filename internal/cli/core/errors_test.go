// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestExplainer_SaysWhatToDo(t *testing.T) {
	gr := schema.GroupResource{Group: "platform.example.com", Resource: "scheduletasks"}
	e := Explainer{Install: "install the CRDs first"}
	plain := errors.New("connection refused")
	for _, tt := range []struct {
		name      string
		err       error
		obj       string
		want      string
		wantCause bool
	}{
		{"no such kind", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: gr.Group, Kind: "ScheduleTask"}}, "x",
			"the ScheduleTask API is not installed in this cluster: install the CRDs first", false},
		{"list not found", apierrors.NewNotFound(gr, ""), "",
			"the ScheduleTask API is not installed in this cluster: install the CRDs first", false},
		{"object not found", apierrors.NewNotFound(gr, "ghost"), "ghost",
			`scheduletask "ghost" not found in namespace "team"`, false},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("no RBAC")), "x",
			"ask a cluster admin for a Role that grants it (`kubectl auth can-i --list -n team`", true},
		{"unauthorized", apierrors.NewUnauthorized("bad token"), "x",
			"the cluster did not accept your credentials", true},
		{"anything else", plain, "x", "connection refused", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := e.Explain(tt.err, "ScheduleTask", tt.obj, "team")
			if !strings.Contains(got.Error(), tt.want) {
				t.Errorf("Explain = %q, want it to contain %q", got, tt.want)
			}
			if errors.Is(got, tt.err) != tt.wantCause {
				t.Errorf("errors.Is(Explain(err), err) = %t, want %t", !tt.wantCause, tt.wantCause)
			}
		})
	}
	if e.Explain(nil, "ScheduleTask", "x", "team") != nil {
		t.Error("Explain(nil) is not nil")
	}
}

func TestExecute_ExitCodes(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, 0, ""},
		{"plain error", errors.New("boom"), 1, "error: boom\n"},
		{"exit error", &ExitError{Code: 2, Err: errors.New("still Running after 3s")}, 2, "error: still Running after 3s\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			root := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true,
				RunE: func(*cobra.Command, []string) error { return tt.err }}
			root.SetErr(&stderr)
			root.SetArgs(nil)
			if code := Execute(root); code != tt.code || stderr.String() != tt.stderr {
				t.Errorf("Execute = %d with stderr %q, want %d with %q", code, stderr.String(), tt.code, tt.stderr)
			}
		})
	}
}
