// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestHistory_TableAndLastOutcome(t *testing.T) {
	checkOutputs(t, map[string]string{
		"history order-service": `
REVISION    VERSION   IMAGE                                     PROMOTED   CHANGED
5d8f7c9b4   v1.2.3    harbor.example.com/order-service:v1.2.3   120m ago   -
66c4d8f5b   v1.2.2    harbor.example.com/order-service:v1.2.2   3d ago     -
1a2b3c4d5   v1.2.1    harbor.example.com/order-service:v1.2.1   10d ago    -

Last outcome: Promoted v1.2.3 (5d8f7c9b4) 120m ago: Canary v1.2.3 (5d8f7c9b4) promoted: 4 stable pods run it
`,
		"history checkout --no-headers": `
3c4d5e6f7   v3.0.0   harbor.example.com/checkout:v3.0.0   2d ago   -

Last outcome: RolledBack v3.1.0 (9e8d7c6b5) 10m ago: CrashLoopBackOff: Canary v3.1.0 (9e8d7c6b5) rolled back: CrashLoopBackOff
`,
	})
}

func TestHistory_NoRevisionsSaysSoOnStandardError(t *testing.T) {
	r := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", "history", "web")
	if r.err != nil || r.out != "" || r.errOut != "No promoted revisions of appdeployment \"web\" in namespace \"team\" yet.\n" {
		t.Errorf("got %q, %q, %v", r.out, r.errOut, r.err)
	}
}

// manifest writes content to a file of the test and returns its path.
func manifest(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// lint runs lint with stdin and its output's file names made relative.
func lint(t *testing.T, stdin string, files ...string) run {
	t.Helper()
	r := execute(t, newClient(t, interceptor.Funcs{}), stdin, append([]string{"lint"}, files...)...)
	for _, f := range files {
		r.out = strings.ReplaceAll(r.out, f+": ", filepath.Base(f)+": ")
	}
	return r
}

func TestLint_WarnsAndSkipsWithoutFailing(t *testing.T) {
	good := manifest(t, "good.yaml", `apiVersion: platform.example.com/v1
kind: AppDeployment
metadata:
  name: order-service
spec:
  image: harbor.example.com/order-service:v1.2.3
  replicas: 3
  strategy:
    type: canary
    canaryPercent: 30
---
apiVersion: platform.example.com/v1
kind: ScheduleTask
metadata:
  name: nightly
spec:
  schedule: "@daily"
  image: busybox:1.36
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
---
resources:
- order-service.yaml
---
apiVersion: apps.example.org/v2
kind: AppDeployment
metadata:
  name: lookalike
`)
	r := lint(t, "", good)
	want := `good.yaml: order-service: warning: spec.strategy.canaryPercent: 30% of 3 replicas is 1 canary pod(s), 33% of the traffic
good.yaml: skipped: ScheduleTask nightly (not an AppDeployment; use kubectl stask lint)
good.yaml: skipped: ConfigMap settings (not an AppDeployment)
good.yaml: skipped: document 4 (no kind: not a Kubernetes object)
good.yaml: skipped: AppDeployment lookalike (apiVersion "apps.example.org/v2", not platform.example.com/v1)
1 file(s) OK: 1 AppDeployment(s) checked, 1 warning(s), 4 document(s) skipped
`
	if r.err != nil {
		t.Fatal(r.err)
	}
	if diff := cmp.Diff(want, r.out); diff != "" {
		t.Errorf("lint (-want +got):\n%s", diff)
	}
}

func TestLint_ReportsEveryProblemByFieldAndExitsOne(t *testing.T) {
	bad := manifest(t, "bad.yaml", `apiVersion: platform.example.com/v1
kind: AppDeployment
metadata:
  name: web-canary
spec:
  image: nginx:1.27
  version: "1.2"
  replicas: 101
  strategy:
    type: rolling
    canaryPercent: 20
---
apiVersion: platform.example.com/v1
kind: AppDeployment
metadata:
  name: typo
spec:
  image: nginx:1.27
  replica: 3
---
apiVersion: platform.example.com/v1
kind: AppDeployment
metadata:
  name: wrong-type
spec:
  image: nginx:1.27
  replicas: three
`)
	r := lint(t, "", bad)
	if r.code() != 1 || r.err.Error() != "6 problem(s) found" {
		t.Errorf("exit code %d with %v, want 1 with 6 problems", r.code(), r.err)
	}
	for _, want := range []string{
		"bad.yaml: web-canary: metadata.name: must not end with -canary",
		`bad.yaml: web-canary: spec.version: must be v and three numbers, such as v1.2.3 or v1.10.0 ("1.2")`,
		"bad.yaml: web-canary: spec.replicas: must be at most 100 (101)",
		"bad.yaml: web-canary: spec.strategy.canaryPercent: applies only to type canary",
		// Strict decoding names the field's path.
		`bad.yaml: typo: unknown field "spec.replica"`,
		`bad.yaml: wrong-type: json: cannot unmarshal string into Go struct field AppDeploymentSpec.spec.replicas of type int32`,
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, "OK") {
		t.Errorf("lint said OK with problems:\n%s", r.out)
	}
}

func TestLint_ReadsStandardInputAndNamesUnreadableFiles(t *testing.T) {
	r := lint(t, "kind: AppDeployment\napiVersion: platform.example.com/v1\nmetadata: {name: x}\nspec: {}\n", "-")
	if r.code() != 1 || !strings.Contains(r.out, "-: x: spec.image: is required: the container image to run, or else workloadRef") {
		t.Errorf("lint - = %q, %v", r.out, r.err)
	}
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	r = lint(t, "", missing)
	if r.err == nil || !strings.Contains(r.err.Error(), "missing.yaml") {
		t.Errorf("lint of a missing file: %v", r.err)
	}
	r = lint(t, "", manifest(t, "broken.yaml", "kind: [\n"))
	if r.err == nil || !strings.Contains(r.err.Error(), "broken.yaml") {
		t.Errorf("lint of a file that is not YAML: %v", r.err)
	}
}

// TestLint_RefusesAQueryOfAnotherNamespaceAsAdmissionDoes: lint applies the
// analysis scope offline, for the manifest's namespace.
func TestLint_RefusesAQueryOfAnotherNamespaceAsAdmissionDoes(t *testing.T) {
	peek := manifest(t, "peek.yaml", `apiVersion: platform.example.com/v1
kind: AppDeployment
metadata:
  name: peek
  namespace: attacker
spec:
  image: nginx:1.27
  strategy:
    type: canary
    canaryPercent: 30
    canaryCriteria:
    - name: peek
      query: sum(rate(http_requests_total{namespace="default"}[1m]))
      successCondition: result >= 0.0
`)
	r := lint(t, "", peek)
	want := `peek.yaml: peek: spec.strategy.canaryCriteria[0].query: may only read series of namespace "attacker"`
	if r.code() != 1 || !strings.Contains(r.out, want) {
		t.Errorf("exit code %d, output:\n%s\nwant 1 and %q", r.code(), r.out, want)
	}
}
