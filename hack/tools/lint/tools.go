//go:build tools

// Package tools pins golangci-lint with the Kubernetes API conventions linter
// (kube-api-linter) compiled in as a module plugin, so `make lint` needs no
// `golangci-lint custom` step. It is a module of its own because its
// dependencies would otherwise have to agree with the Kubernetes control
// plane's in hack/tools/go.mod.
//
// go.mod raises golangci-lint above the v2.5.0 kube-api-linter asks for, to
// v2.6.2: .golangci.yml enables modernize, which golangci-lint has since
// v2.6.0. `go get github.com/golangci/golangci-lint/v2@<version>` here moves it.
package tools

import (
	_ "sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter"
)
