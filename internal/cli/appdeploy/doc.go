/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package appdeploy implements `kubectl appdeploy`, the kubectl plugin for
// AppDeployments: listing and describing them, gating CI on a release
// (status and its exit codes), asking the operator to promote, abort or
// retry a canary, pausing, undoing a release in the spec, and checking
// manifests offline. What every plugin of the project shares (connection
// flags, printers, waiting, errors) is in internal/cli/core; this package
// holds the AppDeployment commands and their columns only.
// cmd/kubectl-appdeploy calls NewRootCommand.
package appdeploy
