//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/example/platform-operator/internal/yamldoc"
	"github.com/example/platform-operator/test/harness"
)

// olmCertDir is where OLM mounts the webhook certificate it issues.
const olmCertDir = "/tmp/k8s-webhook-server/serving-certs"

// csvFile is the bundle's ClusterServiceVersion, relative to the repository.
const csvFile = "bundle/manifests/platform-operator.clusterserviceversion.yaml"

// olmCSV is the part of a ClusterServiceVersion these tests read: the
// operator's module does not depend on the Operator Framework API (only
// hack/bundle does).
type olmCSV struct {
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		InstallModes []struct {
			Type      string `json:"type"`
			Supported bool   `json:"supported"`
		} `json:"installModes"`
		CustomResourceDefinitions struct {
			Owned []ownedCRD `json:"owned"`
		} `json:"customresourcedefinitions"`
		WebhookDefinitions []olmWebhook `json:"webhookdefinitions"`
		Install            struct {
			Spec struct {
				Deployments []struct {
					Name string                `json:"name"`
					Spec appsv1.DeploymentSpec `json:"spec"`
				} `json:"deployments"`
				ClusterPermissions []struct {
					ServiceAccountName string `json:"serviceAccountName"`
				} `json:"clusterPermissions"`
				Permissions []struct {
					ServiceAccountName string `json:"serviceAccountName"`
				} `json:"permissions"`
			} `json:"spec"`
		} `json:"install"`
	} `json:"spec"`
}

// ownedCRD is an owned-CRD entry of a CSV, as far as the tests compare it.
type ownedCRD struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// olmWebhook is a CSV webhook definition, as far as the tests compare it.
type olmWebhook struct {
	Type           string   `json:"type"`
	GenerateName   string   `json:"generateName"`
	WebhookPath    string   `json:"webhookPath"`
	DeploymentName string   `json:"deploymentName"`
	TargetPort     int      `json:"targetPort"`
	ConversionCRDs []string `json:"conversionCRDs,omitempty"`
}

// readCSV reads the committed bundle's CSV.
func readCSV(t *testing.T) olmCSV {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cluster.Repo, csvFile))
	if err != nil {
		t.Fatal(err)
	}
	var csv olmCSV
	if err := yaml.Unmarshal(data, &csv); err != nil {
		t.Fatalf("%s: %v", csvFile, err)
	}
	return csv
}

// The bundle as OLM would create it: OLM's own CRDs installed, every
// manifest of the bundle (the CSV among them) goes through the API server's
// validation and admission in a dry run, in an operator namespace, and the
// alm-examples are created as a console user would create them; the
// Operator Framework's validators accept the bundle too.
func TestOLM_BundleIsAdmittedByTheAPIServer(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()

	// make tools builds it from hack/bundle.
	tool := cluster.Bin("bundle-tool")
	out, err := exec.CommandContext(ctx, tool, "validate", filepath.Join(cluster.Repo, "bundle")).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "the Operator Framework's validators: %s", out)
	t.Logf("bundle-tool validate:\n%s", out)

	// OLM's CRDs are cluster-scoped, in a group (operators.coreos.com) no
	// other test uses; they go when the test ends. Only those of kinds the
	// bundle holds (the ClusterServiceVersion) are installed: all eight are
	// megabytes of schema, and on a busy machine the API server took more
	// than a minute to serve them all while every other test ran.
	manifests := filepath.Join(cluster.Repo, "bundle", "manifests")
	olmCRDs := bundleOLMCRDs(t, tool, manifests)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cluster.Kubectl(ctx, olmCRDs, "delete", "--ignore-not-found", "--wait=false", "-f", "-"); err != nil {
			t.Errorf("deleting OLM's CRDs: %v", err)
		}
	})
	g.Expect(cluster.Kubectl(ctx, olmCRDs, "apply", "--server-side", "-f", "-")).To(Succeed())
	g.Expect(harness.WaitEstablished(ctx, cluster.Client, "operators.coreos.com", 2*time.Minute)).To(Succeed())

	ns := newNamespace(t)
	// --force-conflicts: the e2e install owns the CRDs' and ClusterRoles'
	// fields already; a dry run replaces nothing.
	g.Expect(cluster.Kubectl(ctx, nil, "apply", "--server-side", "--dry-run=server", "--force-conflicts",
		"-n", ns, "-f", manifests)).To(Succeed())

	var examples []map[string]any
	g.Expect(json.Unmarshal([]byte(readCSV(t).Metadata.Annotations["alm-examples"]), &examples)).To(Succeed())
	stream, err := yamldoc.Encode(toAny(examples)...)
	g.Expect(err).NotTo(HaveOccurred())
	// Created for real, in order: the example TaskRun is a manual run of an
	// example ScheduleTask, which the webhook looks up.
	g.Expect(cluster.Kubectl(ctx, stream, "apply", "--server-side", "-n", ns, "-f", "-")).
		To(Succeed(), "the running operator's webhooks and the CRDs admit every alm-example")
}

// The CSV owns the three kinds at their stored version, installs in
// AllNamespaces mode only (OLM refuses a conversion webhook in any other),
// declares every webhook of config/webhook and the ScheduleTask conversion,
// runs the manager of config/default with OLM's certificate and target
// namespaces, and offers an example of every kind it owns.
func TestOLM_CSVDescribesTheInstall(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	csv := readCSV(t)

	var wantOwned []ownedCRD
	crdFiles, err := filepath.Glob(filepath.Join(cluster.Repo, "config", "crd", "bases", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range crdFiles {
		objs, err := yamldoc.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			spec := o["spec"].(map[string]any)
			for _, v := range spec["versions"].([]any) {
				if v := v.(map[string]any); v["storage"] == true {
					kind := spec["names"].(map[string]any)["kind"].(string)
					wantOwned = append(wantOwned, ownedCRD{Name: yamldoc.Name(o), Version: v["name"].(string), Kind: kind})
				}
			}
		}
	}
	g.Expect(wantOwned).To(HaveLen(3))
	g.Expect(csv.Spec.CustomResourceDefinitions.Owned).To(ConsistOf(wantOwned))

	modes := map[string]bool{}
	for _, m := range csv.Spec.InstallModes {
		modes[m.Type] = m.Supported
	}
	g.Expect(modes).To(Equal(map[string]bool{
		"AllNamespaces": true, "OwnNamespace": false, "SingleNamespace": false, "MultiNamespace": false,
	}))

	g.Expect(csv.Spec.Install.Spec.Deployments).To(HaveLen(1))
	dep := csv.Spec.Install.Spec.Deployments[0]
	manager := dep.Spec.Template.Spec.Containers[0]
	g.Expect(manager.Name).To(Equal("manager"))
	webhookPort := 0
	for _, p := range manager.Ports {
		if p.Name == "webhook-server" {
			webhookPort = int(p.ContainerPort)
		}
	}
	g.Expect(webhookPort).NotTo(BeZero())

	webhooks, err := yamldoc.ReadFile(filepath.Join(cluster.Repo, "config", "webhook", "manifests.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	types := map[string]string{
		"MutatingWebhookConfiguration":   "MutatingAdmissionWebhook",
		"ValidatingWebhookConfiguration": "ValidatingAdmissionWebhook",
	}
	var wantWebhooks []olmWebhook
	for _, cfg := range webhooks {
		for _, w := range cfg["webhooks"].([]any) {
			w := w.(map[string]any)
			path := w["clientConfig"].(map[string]any)["service"].(map[string]any)["path"].(string)
			wantWebhooks = append(wantWebhooks, olmWebhook{Type: types[yamldoc.Kind(cfg)], GenerateName: w["name"].(string),
				WebhookPath: path, DeploymentName: dep.Name, TargetPort: webhookPort})
		}
	}
	g.Expect(wantWebhooks).To(HaveLen(6))
	var conversion []olmWebhook
	var admission []olmWebhook
	for _, w := range csv.Spec.WebhookDefinitions {
		if w.Type == "ConversionWebhook" {
			conversion = append(conversion, w)
		} else {
			admission = append(admission, w)
		}
	}
	g.Expect(admission).To(ConsistOf(wantWebhooks))
	g.Expect(conversion).To(ConsistOf(olmWebhook{Type: "ConversionWebhook",
		GenerateName: "cscheduletasks.platform.example.com", WebhookPath: "/convert", DeploymentName: dep.Name,
		TargetPort: webhookPort, ConversionCRDs: []string{"scheduletasks.platform.example.com"}}))

	// The Deployment is config/default's, as OLM must run it.
	rendered, err := exec.CommandContext(t.Context(), cluster.Bin("kubectl"), "kustomize",
		filepath.Join(cluster.Repo, "config", "default")).Output()
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := yamldoc.Decode(bytes.NewReader(rendered))
	g.Expect(err).NotTo(HaveOccurred())
	var installed appsv1.Deployment
	for _, o := range objs {
		if yamldoc.Kind(o) == "Deployment" {
			data, err := json.Marshal(o)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(json.Unmarshal(data, &installed)).To(Succeed())
		}
	}
	g.Expect(dep.Name).To(Equal(installed.Name))
	want := installed.Spec.Template.Spec.Containers[0]
	g.Expect(manager.Image).To(Equal(want.Image))
	g.Expect(manager.SecurityContext).To(Equal(want.SecurityContext))
	g.Expect(dep.Spec.Template.Spec.SecurityContext).To(Equal(installed.Spec.Template.Spec.SecurityContext))
	g.Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal(installed.Spec.Template.Spec.ServiceAccountName))
	g.Expect(manager.Args).To(Equal(append(slices.Clone(want.Args), "--cert-rotation=false")),
		"OLM issues and rotates the webhook certificate")
	g.Expect(manager.Env).To(ContainElement(corev1.EnvVar{Name: "WATCH_NAMESPACES", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['olm.targetNamespaces']"}}}))
	for _, m := range manager.VolumeMounts {
		g.Expect(m.MountPath).NotTo(Equal(olmCertDir), "OLM mounts its own certificate there")
	}
	for _, p := range [][]struct {
		ServiceAccountName string `json:"serviceAccountName"`
	}{csv.Spec.Install.Spec.ClusterPermissions, csv.Spec.Install.Spec.Permissions} {
		g.Expect(p).To(HaveLen(1))
		g.Expect(p[0].ServiceAccountName).To(Equal(installed.Spec.Template.Spec.ServiceAccountName))
	}

	var examples []map[string]any
	g.Expect(json.Unmarshal([]byte(csv.Metadata.Annotations["alm-examples"]), &examples)).To(Succeed())
	exampleKinds := map[ownedCRD]bool{}
	for _, e := range examples {
		gv := strings.Split(e["apiVersion"].(string), "/")
		g.Expect(gv).To(HaveLen(2))
		key := ownedCRD{Version: gv[1], Kind: yamldoc.Kind(e)}
		for _, o := range wantOwned {
			if o.Kind == key.Kind && strings.HasSuffix(o.Name, "."+gv[0]) {
				key.Name = o.Name
			}
		}
		g.Expect(wantOwned).To(ContainElement(key), "example %s %s is of a kind the CSV owns", key.Kind, yamldoc.Name(e))
		exampleKinds[key] = true
	}
	g.Expect(exampleKinds).To(HaveLen(len(wantOwned)), "an example of every owned kind")
}

// toAny converts a slice of objects to the arguments of yamldoc.Encode.
func toAny(objs []map[string]any) []any {
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// bundleOLMCRDs returns those of OLM's CRDs (as `bundle-tool crds` prints
// them) whose kinds the bundle's manifests hold.
func bundleOLMCRDs(t *testing.T, tool, manifests string) []byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifests, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, f := range files {
		objs, err := yamldoc.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			kinds[yamldoc.Kind(o)] = true
		}
	}
	out, err := exec.CommandContext(t.Context(), tool, "crds").Output()
	if err != nil {
		t.Fatalf("%s crds: %v", tool, err)
	}
	all, err := yamldoc.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("%s crds: %v", tool, err)
	}
	var used []any
	for _, crd := range all {
		names, _ := crd["spec"].(map[string]any)["names"].(map[string]any)
		if kind, _ := names["kind"].(string); kinds[kind] {
			used = append(used, crd)
		}
	}
	if len(used) == 0 {
		t.Fatalf("none of OLM's %d CRDs is of a kind in %s", len(all), manifests)
	}
	stream, err := yamldoc.Encode(used...)
	if err != nil {
		t.Fatal(err)
	}
	return stream
}
