// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

func TestScheduleTask_AcceptsATaskAtEveryLimit(t *testing.T) {
	st := testutil.MaxSizeScheduleTask("ns", "biggest")
	if errs := ScheduleTask(st); len(errs) != 0 {
		t.Fatalf("a task at every limit was refused: %q", Format(errs))
	}
	total := 0
	for _, s := range append(append([]string{}, st.Spec.Command...), st.Spec.Args...) {
		total += utf8.RuneCountInString(s)
	}
	for _, e := range st.Spec.Env {
		total += utf8.RuneCountInString(e.Name + e.Value)
	}
	if total != platformv1.MaxCommandArgsEnvLength || len(st.Spec.Command) != platformv1.MaxCommandItems ||
		len(st.Spec.Args) != platformv1.MaxArgsItems || len(st.Spec.Env) != platformv1.MaxEnvItems {
		t.Errorf("MaxSizeScheduleTask holds %d characters in %d/%d/%d entries; want every limit reached",
			total, len(st.Spec.Command), len(st.Spec.Args), len(st.Spec.Env))
	}
	// The bound's purpose: one such task is a few tens of KiB.
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 64<<10 {
		t.Errorf("a task at the limits is %d bytes of JSON, more than 64 KiB", len(data))
	}
}

func TestScheduleTask_NamesEveryOverLimitField(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	many := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = long(size)
		}
		return out
	}
	envs := func(n int) []corev1.EnvVar {
		out := make([]corev1.EnvVar, n)
		for i := range out {
			out[i] = corev1.EnvVar{Name: fmt.Sprintf("V%d", i), Value: "v"}
		}
		return out
	}
	caps := func(n, size int) []corev1.Capability {
		out := make([]corev1.Capability, n)
		for i := range out {
			out[i] = corev1.Capability(long(size))
		}
		return out
	}
	resources := func(n int) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := range n {
			out[corev1.ResourceName(fmt.Sprintf("example.com/r%d", i))] = resource.MustParse("1")
		}
		return out
	}
	tests := []struct {
		name   string
		mutate func(*platformv1.ScheduleTask)
		want   string // one line of Format's output
	}{
		{"65 command entries", func(st *platformv1.ScheduleTask) { st.Spec.Command = many(65, 1) },
			"spec.command: must have at most 64 items (65)"},
		{"long command entry", func(st *platformv1.ScheduleTask) { st.Spec.Command = []string{"sh", long(16385)} },
			`spec.command[1]: must be at most 16384 characters ("16385 characters")`},
		{"257 args", func(st *platformv1.ScheduleTask) { st.Spec.Args = many(257, 1) },
			"spec.args: must have at most 256 items (257)"},
		{"long arg", func(st *platformv1.ScheduleTask) { st.Spec.Args = []string{long(16385)} },
			"spec.args[0]: must be at most 16384 characters"},
		{"129 env variables", func(st *platformv1.ScheduleTask) { st.Spec.Env = envs(129) },
			"spec.env: must have at most 128 items (129)"},
		{"long env name", func(st *platformv1.ScheduleTask) { st.Spec.Env = []corev1.EnvVar{{Name: long(257)}} },
			"spec.env[0].name: must be at most 256 characters"},
		{"long env value", func(st *platformv1.ScheduleTask) {
			st.Spec.Env = []corev1.EnvVar{{Name: "A"}, {Name: "B", Value: long(16385)}}
		}, "spec.env[1].value: must be at most 16384 characters"},
		{"long secret key", func(st *platformv1.ScheduleTask) {
			st.Spec.Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: long(254)}}}}
		}, "spec.env[0].valueFrom.secretKeyRef.key: must be at most 253 characters"},
		{"long file path", func(st *platformv1.ScheduleTask) {
			st.Spec.Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{
				VolumeName: "v", Path: long(4097), Key: "k"}}}}
		}, "spec.env[0].valueFrom.fileKeyRef.path: must be at most 4096 characters"},
		{"total over 32768", func(st *platformv1.ScheduleTask) {
			st.Spec.Command = nil
			st.Spec.Args = many(3, 11000)
		}, "spec: command, args and env (names, values and what valueFrom refers to) must hold at most 32768 characters together (\"33000 characters\")"},
		{"total counts valueFrom", func(st *platformv1.ScheduleTask) {
			st.Spec.Command = nil
			st.Spec.Args = many(2, 16200)
			st.Spec.Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: long(253)}, Key: long(253)}}}}
		}, "spec: command, args and env"},
		{"17 limits", func(st *platformv1.ScheduleTask) {
			st.Spec.Resources = &corev1.ResourceRequirements{Limits: resources(17)}
		}, "spec.resources.limits: must have at most 16 items (17)"},
		{"long claim name", func(st *platformv1.ScheduleTask) {
			st.Spec.Resources = &corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: long(64)}}}
		}, "spec.resources.claims[0].name: must be at most 63 characters"},
		{"65 added capabilities", func(st *platformv1.ScheduleTask) {
			st.Spec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: caps(65, 3)}}
		}, "spec.securityContext.capabilities.add: must have at most 64 items (65)"},
		{"long dropped capability", func(st *platformv1.ScheduleTask) {
			st.Spec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: caps(1, 65)}}
		}, "spec.securityContext.capabilities.drop[0]: must be at most 64 characters"},
		{"long SELinux level", func(st *platformv1.ScheduleTask) {
			st.Spec.SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: long(254)}}
		}, "spec.securityContext.seLinuxOptions.level: must be at most 253 characters"},
		{"long credential spec", func(st *platformv1.ScheduleTask) {
			st.Spec.SecurityContext = &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
				GMSACredentialSpec: ptr.To(long(4097))}}
		}, "spec.securityContext.windowsOptions.gmsaCredentialSpec: must be at most 4096 characters"},
		{"long seccomp profile", func(st *platformv1.ScheduleTask) {
			st.Spec.SecurityContext = &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{
				Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To(long(1025))}}
		}, "spec.securityContext.seccompProfile.localhostProfile: must be at most 1024 characters"},
		{"long service account", func(st *platformv1.ScheduleTask) { st.Spec.ServiceAccountName = ptr.To(long(254)) },
			"spec.serviceAccountName: must be at most 253 characters"},
		{"multi-byte characters count once", func(st *platformv1.ScheduleTask) {
			st.Spec.Args = []string{strings.Repeat("é", 16385)}
		}, "spec.args[0]: must be at most 16384 characters (\"16385 characters\")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := testutil.NewScheduleTask("ns", "ok")
			tt.mutate(st)
			lines := Format(ScheduleTask(st))
			if len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("got %q, want one line containing %q", lines, tt.want)
			}
		})
	}
}

// The limits are written twice: as constants in api/v1, which validation
// uses, and as markers, which make the CRD's schema. They must agree.
func TestBounds_AgreeWithTheGeneratedSchema(t *testing.T) {
	schema := specSchema(t)
	for _, tt := range []struct {
		field              string
		maxItems, itemsLen int64
	}{
		{"command", platformv1.MaxCommandItems, platformv1.MaxArgumentLength},
		{"args", platformv1.MaxArgsItems, platformv1.MaxArgumentLength},
		{"env", platformv1.MaxEnvItems, 0},
	} {
		p := schema[tt.field]
		if got := ptr.Deref(p.MaxItems, -1); got != tt.maxItems {
			t.Errorf("schema of spec.%s has maxItems %d, api/v1 says %d", tt.field, got, tt.maxItems)
		}
		if tt.itemsLen > 0 {
			if p.Items == nil || p.Items.Schema == nil || ptr.Deref(p.Items.Schema.MaxLength, -1) != tt.itemsLen {
				t.Errorf("schema of spec.%s's items lacks maxLength %d", tt.field, tt.itemsLen)
			}
		}
	}
	for _, tt := range []struct {
		field string
		max   int64
	}{
		{"schedule", maxScheduleLength},
		{"timeZone", maxTimeZoneLength},
		{"image", maxImageLength},
		{"serviceAccountName", maxServiceAccountLength},
	} {
		if got := ptr.Deref(schema[tt.field].MaxLength, -1); got != tt.max {
			t.Errorf("schema of spec.%s has maxLength %d, validation says %d", tt.field, got, tt.max)
		}
	}
	// The CEL rules carry their numbers in the rule text.
	rules := map[string]string{}
	for name, p := range schema {
		for _, r := range p.XValidations {
			rules[name] += r.Rule + "\n"
		}
		if p.Items != nil && p.Items.Schema != nil {
			for _, r := range p.Items.Schema.XValidations {
				rules[name] += r.Rule + "\n"
			}
		}
	}
	for _, tt := range []struct {
		field, want string
	}{
		{"env", fmt.Sprintf("size(self.name) <= %d", platformv1.MaxEnvNameLength)},
		{"env", fmt.Sprintf("size(self.value) <= %d", platformv1.MaxEnvValueLength)},
		{"resources", fmt.Sprintf("size(self.limits) <= %d", platformv1.MaxResourceEntries)},
		{"resources", fmt.Sprintf("size(self.claims) <= %d", platformv1.MaxResourceClaims)},
		{"securityContext", fmt.Sprintf("size(self.capabilities.add) <= %d", platformv1.MaxCapabilities)},
		{"securityContext", fmt.Sprintf("size(self.windowsOptions.gmsaCredentialSpec) <= %d", maxCredentialSpecLength)},
		{"securityContext", fmt.Sprintf("size(self.seccompProfile.localhostProfile) <= %d", maxProfileLength)},
	} {
		if !strings.Contains(rules[tt.field], tt.want) {
			t.Errorf("no CEL rule of spec.%s contains %q; rules:\n%s", tt.field, tt.want, rules[tt.field])
		}
	}
	total := specRules(t)
	if !strings.Contains(total, fmt.Sprintf("<= %d", platformv1.MaxCommandArgsEnvLength)) {
		t.Errorf("no CEL rule of spec bounds the total at %d; rules:\n%s", platformv1.MaxCommandArgsEnvLength, total)
	}
}

// specRules returns the CEL rules on spec itself in the generated CRD's v1
// schema, one a line.
func specRules(tb testing.TB) string {
	tb.Helper()
	data, err := os.ReadFile(crdPath)
	if err != nil {
		tb.Fatalf("read the generated CRD (run 'make manifests'): %v", err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		tb.Fatalf("parse %s: %v", crdPath, err)
	}
	var out strings.Builder
	for _, v := range crd.Spec.Versions {
		if v.Name == platformv1.GroupVersion.Version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			for _, r := range v.Schema.OpenAPIV3Schema.Properties["spec"].XValidations {
				out.WriteString(r.Rule + "\n")
			}
		}
	}
	return out.String()
}

func TestRunParameters_AreJudgedByTheTasksRules(t *testing.T) {
	task := &platformv1.ScheduleTaskSpec{
		ContainerFields: platformv1.ContainerFields{Command: []string{strings.Repeat("c", 10000)}, Env: []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("v", 10000)}}},
	}
	tests := []struct {
		name string
		run  platformv1.TaskRunSpec
		want []string // fields named, in order
	}{
		{"small parameters", platformv1.TaskRunSpec{Args: []string{"--dry-run"}, Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}, nil},
		{"an arg over its bound", platformv1.TaskRunSpec{Args: []string{strings.Repeat("a", platformv1.MaxArgumentLength+1)}},
			[]string{"spec.args[0]"}},
		{"too many variables", platformv1.TaskRunSpec{Env: make([]corev1.EnvVar, platformv1.MaxEnvItems+1)},
			[]string{"spec.env"}},
		{"a variable without a name", platformv1.TaskRunSpec{Env: []corev1.EnvVar{{Value: "x"}}}, []string{"spec.env[0].name"}},
		// Each within its bound, but with the task's command and env the
		// container holds more than a task may.
		{"the run's container over the total", platformv1.TaskRunSpec{Args: []string{strings.Repeat("a", 13000)}}, []string{"spec"}},
		// The run's BIG replaces the task's, so the total is the run's.
		{"a replaced variable counts once", platformv1.TaskRunSpec{Args: []string{strings.Repeat("a", 12000)},
			Env: []corev1.EnvVar{{Name: "BIG", Value: "small"}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "too many variables" {
				for i := range tt.run.Env {
					tt.run.Env[i].Name = fmt.Sprintf("V%d", i)
				}
			}
			var got []string
			for _, e := range RunParameters(&tt.run, task) {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("fields %v, want %v", got, tt.want)
			}
		})
	}
}
