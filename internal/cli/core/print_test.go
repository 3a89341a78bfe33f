// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// parsePrintFlags returns PrintFlags as a command would have them after args.
func parsePrintFlags(t *testing.T, args ...string) *PrintFlags {
	t.Helper()
	f := NewPrintFlags()
	cmd := &cobra.Command{}
	f.AddFlags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// configMaps are typed objects as a client returns them: without apiVersion
// and kind.
func configMaps() *corev1.ConfigMapList {
	return &corev1.ConfigMapList{Items: []corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "alpha"}, Data: map[string]string{"phase": "Succeeded"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "beta"}},
	}}
}

func TestPrintFlags_HumanOnlyWithoutOutputOrWide(t *testing.T) {
	for _, tt := range []struct {
		args        []string
		human, wide bool
	}{
		{nil, true, false},
		{[]string{"-o", "wide"}, true, true},
		{[]string{"-o", "json"}, false, false},
		{[]string{"--template", "{{.kind}}"}, false, false},
		{[]string{"-o", "custom-columns=NAME:.metadata.name"}, false, false},
	} {
		f := parsePrintFlags(t, tt.args...)
		if f.Human() != tt.human || f.Wide() != tt.wide {
			t.Errorf("%v: Human() = %t, Wide() = %t; want %t, %t", tt.args, f.Human(), f.Wide(), tt.human, tt.wide)
		}
		if err := f.Validate(); err != nil {
			t.Errorf("%v: %v", tt.args, err)
		}
	}
	err := parsePrintFlags(t, "-o", "xml").Validate()
	if err == nil || !strings.Contains(err.Error(), `unknown output format "xml"`) || !strings.Contains(err.Error(), "custom-columns") {
		t.Errorf("-o xml gave %v", err)
	}
}

func TestPrintFlags_PrintsAListAsKubectlDoes(t *testing.T) {
	scheme := testScheme(t)
	for _, tt := range []struct {
		output string
		want   string
	}{
		{"name", "configmap/alpha\nconfigmap/beta\n"},
		{"jsonpath={.items[*].metadata.name}", "alpha beta"},
		{"jsonpath={.items[0].apiVersion}/{.items[0].kind}", "v1/ConfigMap"},
		{`go-template={{range .items}}{{.metadata.name}} {{.kind}}{{"\n"}}{{end}}`, "alpha ConfigMap\nbeta ConfigMap\n"},
		{"custom-columns=NAME:.metadata.name,PHASE:data.phase", "NAME    PHASE\nalpha   Succeeded\nbeta    <none>\n"},
	} {
		t.Run(tt.output, func(t *testing.T) {
			var b strings.Builder
			if err := parsePrintFlags(t, "-o", tt.output).Print(&b, scheme, configMaps()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("-o %s (-want +got):\n%s", tt.output, diff)
			}
		})
	}
}

// list is what -o json and -o yaml of a list decode to.
type list struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Items      []corev1.ConfigMap `json:"items"`
}

func TestPrintFlags_JSONAndYAMLAreAV1ListOfTypedObjects(t *testing.T) {
	scheme := testScheme(t)
	want := list{APIVersion: "v1", Kind: "List", Items: configMaps().Items}
	for i := range want.Items {
		want.Items[i].APIVersion, want.Items[i].Kind = "v1", "ConfigMap"
	}
	for _, output := range []string{"json", "yaml"} {
		var b strings.Builder
		if err := parsePrintFlags(t, "-o", output).Print(&b, scheme, configMaps()); err != nil {
			t.Fatal(err)
		}
		var got list
		if err := yaml.Unmarshal([]byte(b.String()), &got); err != nil {
			t.Fatalf("-o %s: %v\n%s", output, err, b.String())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-o %s (-want +got):\n%s", output, diff)
		}
	}
	if !json.Valid([]byte(printed(t, scheme, "json", &configMaps().Items[0]))) {
		t.Error("-o json of one object is not JSON")
	}
}

func TestPrintFlags_PrintsOneObjectByItself(t *testing.T) {
	scheme := testScheme(t)
	one := &configMaps().Items[0]
	for _, tt := range []struct{ output, want string }{
		{"name", "configmap/alpha\n"},
		{"jsonpath={.kind} {.metadata.name}", "ConfigMap alpha"},
		{"custom-columns=NAME:.metadata.name", "NAME\nalpha\n"},
	} {
		if diff := cmp.Diff(tt.want, printed(t, scheme, tt.output, one)); diff != "" {
			t.Errorf("-o %s (-want +got):\n%s", tt.output, diff)
		}
	}
	if one.Kind != "" {
		t.Errorf("printing set the kind on the caller's object")
	}
}

func printed(t *testing.T, scheme *runtime.Scheme, output string, obj runtime.Object) string {
	t.Helper()
	var b strings.Builder
	if err := parsePrintFlags(t, "-o", output).Print(&b, scheme, obj); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCustomColumns_NoHeadersAndBadSpecs(t *testing.T) {
	scheme := testScheme(t)
	var b strings.Builder
	if err := parsePrintFlags(t, "-o", "custom-columns=N:{.metadata.name}", "--no-headers").Print(&b, scheme, configMaps()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("alpha\nbeta\n", b.String()); diff != "" {
		t.Errorf("--no-headers (-want +got):\n%s", diff)
	}
	for _, spec := range []string{"", "NAME", "NAME:", "NAME:{.metadata.name"} {
		if err := parsePrintFlags(t, "-o", "custom-columns="+spec).Validate(); err == nil {
			t.Errorf("custom-columns=%s was accepted", spec)
		}
	}
}
