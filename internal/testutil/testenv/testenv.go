// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package testenv starts envtest, a real kube-apiserver and etcd, from the
// binaries `make tools` builds into bin/, with the project's CRDs installed.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	platformv1alpha1 "github.com/example/platform-operator/api/v1alpha1"
)

// RepoRoot returns the repository's root directory: the nearest parent of the
// working directory that holds the operator's go.mod. Tests run in their
// package's directory, so this is how they find bin/ and config/.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "tools", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root not found above the working directory")
		}
		dir = parent
	}
}

// Scheme returns a scheme with the Kubernetes built-in types, CRDs (which
// the install tests read back) and every version of the project's API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := platformv1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := platformv1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := gatewayv1.Install(s); err != nil {
		panic(err)
	}
	return s
}

// GatewayAPICRDs returns the files of the Gateway API's standard-channel
// CRDs that weighted canaries use (GatewayClass, Gateway, HTTPRoute,
// ReferenceGrant), from the module go.mod pins: the tests run against the
// very version the operator is built with.
func GatewayAPICRDs(root string) ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("find the Gateway API module: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	kinds := []string{"gatewayclasses", "gateways", "httproutes", "referencegrants"}
	files := make([]string, 0, len(kinds))
	for _, kind := range kinds {
		f := filepath.Join(dir, "gateway.networking.k8s.io_"+kind+".yaml")
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// New returns an envtest environment that installs the CRDs of
// config/crd/bases and the Gateway API's (GatewayAPICRDs), and runs the control plane from KUBEBUILDER_ASSETS, or from bin/ when that
// is unset. It fails early, with the fix, when the binaries are missing,
// instead of letting envtest try to download them.
func New() (*envtest.Environment, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin")
	}
	for _, bin := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run 'make tools' to build the control plane from source", bin, assets)
		}
	}
	gatewayCRDs, err := GatewayAPICRDs(root)
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{
		Scheme:                Scheme(),
		CRDDirectoryPaths:     append([]string{filepath.Join(root, "config", "crd", "bases")}, gatewayCRDs...),
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		// The webhook configurations are installed pointing at a local
		// serving address with a generated CA; the manager under test serves
		// there (see WebhookServer).
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(root, "config", "webhook", "manifests.yaml")},
		},
	}, nil
}

// WebhookServer returns a webhook server that serves where env installed the
// webhook configurations, with the certificates it generated.
func WebhookServer(env *envtest.Environment) webhook.Server {
	o := &env.WebhookInstallOptions
	return webhook.NewServer(webhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir})
}
