//go:build tools

// Package tools pins the versions of the binaries that `make tools` builds
// from source: the Kubernetes control plane, etcd, kwok, controller-gen and
// helm. The operator's own module never imports this module.
package tools

import (
	_ "gotest.tools/gotestsum"
	_ "helm.sh/helm/v3/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
