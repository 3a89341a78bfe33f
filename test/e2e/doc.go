// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package e2e holds end-to-end tests that run against a real control plane
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) whose nodes
// and pods are simulated by kwok. No container runtime is involved: pods are
// "run" by the Stages in hack/kwok/config.yaml, which can make them succeed,
// fail with a chosen exit code, or run for a chosen time (see
// hack/kwok/README.md).
//
// The tests are behind the e2e build tag, so a plain `go test ./...` skips
// them. Build the binaries first, then run:
//
//	make tools
//	go test -tags e2e ./test/e2e/ -v -count=1
//
// TestMain creates one kwok cluster named e2e-<random> for the whole package
// with hack/kwok/cluster.sh, and deletes it when the tests end, including on
// test failure, panic, timeout and SIGINT/SIGTERM. Each test works in its own
// namespace.
package e2e
