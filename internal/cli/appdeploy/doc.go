// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package appdeploy implements `kubectl appdeploy`, the kubectl plugin for
// AppDeployments: listing and describing them, gating CI on a release
// (status and its exit codes), asking the operator to promote, abort or
// retry a canary, pausing, undoing a release in the spec, and checking
// manifests offline. What every plugin of the project shares (the root
// command and connection flags, finding and listing objects, printers,
// tables and trees, waiting, errors) is in internal/cli/core; this package
// holds the AppDeployment commands and their columns only.
// cmd/kubectl-appdeploy runs Plugin.
package appdeploy
