// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/example/platform-operator/internal/certs"
	"github.com/example/platform-operator/internal/testutil/testenv"
	webhookv1 "github.com/example/platform-operator/internal/webhook/v1"
	"github.com/example/platform-operator/internal/yamldoc"
)

// manifests are the objects of one install, as rendered.
type manifests struct {
	source string
	objs   []map[string]any
}

// render runs one of the tools in bin/ (kubectl kustomize, helm template)
// from the repository's root and decodes what it prints.
func render(t *testing.T, tool string, args ...string) manifests {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "bin", tool), args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", tool, args, err, stderr.String())
	}
	objs, err := yamldoc.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return manifests{source: tool + " " + strings.Join(args, " "), objs: objs}
}

// readManifests decodes a file of the repository.
func readManifests(t *testing.T, path string) manifests {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := yamldoc.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return manifests{source: path, objs: objs}
}

// helmTemplate renders the chart into the namespace its CRDs point at.
func helmTemplate(t *testing.T, set ...string) manifests {
	t.Helper()
	args := []string{"template", "platform-operator", "charts/platform-operator", "-n", "platform-operator-system"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return render(t, "helm", args...)
}

// each decodes every object of kind into a T and calls fn with it.
func each[T any](t *testing.T, m manifests, kind string, fn func(name string, obj *T)) {
	t.Helper()
	for _, o := range m.objs {
		if yamldoc.Kind(o) != kind {
			continue
		}
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		obj := new(T)
		if err := json.Unmarshal(data, obj); err != nil {
			t.Fatalf("%s: decode %s: %v", m.source, kind, err)
		}
		name, _ := o["metadata"].(map[string]any)["name"].(string)
		fn(name, obj)
	}
}

// The certificate rotator's rights are limited to the objects it keeps, by
// name: the Secret with the certificate (and room for another named one),
// the two webhook configurations and the CRD whose conversion it injects
// the CA into. No rule of the manager's roles reaches any other Secret,
// webhook configuration or CRD (but get on the HTTPRoute CRD, which
// admission reads), and none can create or delete them.
func TestRBAC_ManagerReachesOnlyTheNamedSecretWebhooksAndCRD(t *testing.T) {
	named := map[string][]string{
		"secrets":                         {certs.SecretName},
		"validatingwebhookconfigurations": {certs.ValidatingWebhookName},
		"mutatingwebhookconfigurations":   {certs.MutatingWebhookName},
		"customresourcedefinitions":       {certs.ConversionCRDName},
	}
	allowed := []string{"get", "list", "watch", "update", "patch"}
	needed := []string{"get", "list", "watch", "update"}
	for _, m := range []manifests{
		readManifests(t, "config/rbac/role.yaml"),
		render(t, "kubectl", "kustomize", "config/default"),
		helmTemplate(t),
	} {
		t.Run(m.source, func(t *testing.T) {
			granted := map[string][]string{}
			check := func(kind, name string, rules []rbacv1.PolicyRule) {
				if !strings.HasSuffix(name, "manager-role") {
					return
				}
				for _, r := range rules {
					if slices.Contains(r.Resources, "*") || slices.Contains(r.Verbs, "*") || slices.Contains(r.APIGroups, "*") {
						t.Errorf("%s %s grants a wildcard: %+v", kind, name, r)
					}
					for _, res := range r.Resources {
						names, ok := named[res]
						if !ok {
							continue
						}
						if len(r.ResourceNames) == 0 {
							t.Errorf("%s %s grants %v on every %s; want only %v by resourceNames", kind, name, r.Verbs, res, names)
						}
						for _, n := range r.ResourceNames {
							// A Secret of the operator's own may join the
							// certificate's (a signing key, by name).
							ours := res == "secrets" && strings.HasPrefix(n, "platform-operator-")
							// Admission reads the HTTPRoute CRD's schema
							// (rule names), and only reads it.
							read := res == "customresourcedefinitions" && n == webhookv1.HTTPRouteCRD &&
								slices.Equal(r.Verbs, []string{"get"})
							if !slices.Contains(names, n) && !ours && !read {
								t.Errorf("%s %s grants %s/%s, which the operator does not keep", kind, name, res, n)
							}
						}
						for _, v := range r.Verbs {
							if !slices.Contains(allowed, v) {
								t.Errorf("%s %s grants %s on %s; want only %v", kind, name, v, res, allowed)
							}
						}
						if res == "secrets" && kind != "Role" {
							t.Errorf("%s %s grants Secrets cluster-wide; want a Role in the manager's namespace", kind, name)
						}
						if slices.Contains(r.ResourceNames, names[0]) {
							granted[res] = append(granted[res], r.Verbs...)
						}
					}
				}
			}
			each(t, m, "ClusterRole", func(name string, cr *rbacv1.ClusterRole) { check("ClusterRole", name, cr.Rules) })
			each(t, m, "Role", func(name string, r *rbacv1.Role) { check("Role", name, r.Rules) })
			// What the rotator needs is still there.
			for res, names := range named {
				for _, v := range needed {
					if !slices.Contains(granted[res], v) {
						t.Errorf("no rule grants %s on %s/%s; the certificate rotator needs it", v, res, names[0])
					}
				}
			}
		})
	}
}

// create cannot be limited by resourceNames, so the installs ship the
// certificate Secret (empty) for the rotator to fill in.
func TestRBAC_InstallsShipTheCertificateSecret(t *testing.T) {
	for _, m := range []manifests{render(t, "kubectl", "kustomize", "config/default"), helmTemplate(t)} {
		found := false
		for _, o := range m.objs {
			md, _ := o["metadata"].(map[string]any)
			if yamldoc.Kind(o) == "Secret" && md["name"] == certs.SecretName {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no Secret %s", m.source, certs.SecretName)
		}
	}
}
