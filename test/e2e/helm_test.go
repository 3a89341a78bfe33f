//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/internal/yamldoc"
)

// TestHelm_InstallUpgradeAndUninstallInAnyNamespaceLeaveOnlyTheCRDs installs
// the chart for real on a cluster of its own (Helm must own the CRDs, and
// the shared cluster's webhook configurations are the harness's), into a
// namespace of no particular name: the manager's pods are scheduled and run
// under kwok. A bad value is refused before anything is made; an upgrade
// with other values and a changed CRD changes both and keeps the
// certificate the manager wrote; uninstall removes every object of the
// release but the CRDs.
func TestHelm_InstallUpgradeAndUninstallInAnyNamespaceLeaveOnlyTheCRDs(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	own := ownCluster(t)
	helm := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(own.Repo, "bin", "helm"),
			append(args, "--kubeconfig", own.Kubeconfig)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// A copy of the chart, so that the upgrade can change a CRD.
	chart := filepath.Join(t.TempDir(), "platform-operator")
	g.Expect(os.CopyFS(chart, os.DirFS(filepath.Join(own.Repo, "charts", "platform-operator")))).To(Succeed())
	const release = "po"
	ns := fmt.Sprintf("ops-%06x", rand.Uint32()&0xffffff)
	manager := client.ObjectKey{Namespace: ns, Name: "platform-operator-controller-manager"}
	getDeployment := func(g Gomega) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		g.Expect(own.Client.Get(ctx, manager, d)).To(Succeed())
		return d
	}

	out, err := helm("install", release, chart, "-n", ns, "--create-namespace", "--set", "replicaCount=0")
	g.Expect(err).To(HaveOccurred(), "values.schema.json refuses replicaCount 0")
	g.Expect(out).To(ContainSubstring("replicaCount"))
	g.Expect(own.Client.Get(ctx, manager, &appsv1.Deployment{})).To(Satisfy(apierrors.IsNotFound),
		"a refused install makes nothing")

	out, err = helm("install", release, chart, "-n", ns, "--create-namespace", "--set", "replicaCount=1",
		"--wait", "--timeout", "3m")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Eventually(func(g Gomega) {
		g.Expect(getDeployment(g).Status.AvailableReplicas).To(Equal(int32(1)))
	}).WithTimeout(time.Minute).Should(Succeed())
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	g.Expect(own.Client.List(ctx, crds)).To(Succeed())
	owned := 0
	for _, crd := range crds.Items {
		if crd.Spec.Group != "platform.example.com" {
			continue
		}
		owned++
		g.Expect(crd.Annotations).To(HaveKeyWithValue("meta.helm.sh/release-namespace", ns), "Helm owns CRD %s", crd.Name)
		if c := crd.Spec.Conversion; c != nil && c.Webhook != nil {
			g.Expect(c.Webhook.ClientConfig.Service.Namespace).To(Equal(ns),
				"CRD %s converts in the release's namespace", crd.Name)
		}
	}
	g.Expect(owned).To(Equal(3))

	// The manager fills its certificate Secret; an upgrade must keep it.
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: ns, Name: "platform-operator-webhook-server-cert"}
	g.Expect(own.Client.Get(ctx, key, secret)).To(Succeed())
	secret.Data = map[string][]byte{
		corev1.TLSCertKey: []byte("manager's cert"), corev1.TLSPrivateKeyKey: []byte("manager's key")}
	g.Expect(own.Client.Update(ctx, secret)).To(Succeed())

	// Upgrade: other values, and a CRD with one more short name.
	crdFile := filepath.Join(chart, "templates", "crds", "taskruns.platform.example.com.yaml")
	text, err := os.ReadFile(crdFile)
	g.Expect(err).NotTo(HaveOccurred())
	changed := strings.Replace(string(text), "    - trun\n", "    - trun\n    - taskrecord\n", 1)
	g.Expect(changed).NotTo(Equal(string(text)), "the TaskRun CRD template lists the short name trun")
	g.Expect(os.WriteFile(crdFile, []byte(changed), 0o644)).To(Succeed())
	out, err = helm("upgrade", release, chart, "-n", ns, "--set", "replicaCount=2",
		"--set", "extraArgs={--kube-api-qps=50}", "--wait", "--timeout", "3m")
	g.Expect(err).NotTo(HaveOccurred(), out)
	taskRuns := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(own.Client.Get(ctx, client.ObjectKey{Name: "taskruns.platform.example.com"}, taskRuns)).To(Succeed())
	g.Expect(taskRuns.Spec.Names.ShortNames).To(ContainElement("taskrecord"), "helm upgrade upgrades the CRDs")
	g.Eventually(func(g Gomega) {
		d := getDeployment(g)
		g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--kube-api-qps=50"))
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
	}).WithTimeout(time.Minute).Should(Succeed())
	g.Expect(own.Client.Get(ctx, key, secret)).To(Succeed())
	g.Expect(string(secret.Data[corev1.TLSCertKey])).To(Equal("manager's cert"),
		"the upgrade kept the manager's certificate")

	// What the release is made of, before it goes.
	manifest, err := helm("get", "manifest", release, "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), manifest)
	objs, err := yamldoc.Decode(bytes.NewReader([]byte(manifest)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(objs)).To(BeNumerically(">", 10))

	out, err = helm("uninstall", release, "-n", ns, "--wait", "--timeout", "2m")
	g.Expect(err).NotTo(HaveOccurred(), out)
	for _, obj := range objs {
		u := &unstructured.Unstructured{Object: obj}
		if u.GetNamespace() == "" && u.GetKind() != "ClusterRole" && u.GetKind() != "ClusterRoleBinding" &&
			!strings.HasSuffix(u.GetKind(), "WebhookConfiguration") && u.GetKind() != "CustomResourceDefinition" {
			u.SetNamespace(ns)
		}
		err := own.Client.Get(ctx, client.ObjectKeyFromObject(u), u)
		if u.GetKind() == "CustomResourceDefinition" {
			g.Expect(err).NotTo(HaveOccurred(), "CRD %s survives helm uninstall", u.GetName())
			continue
		}
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s %s/%s is left after helm uninstall (%v)",
			u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
}
