// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command kubectl-appdeploy is the kubectl plugin for AppDeployments: on the
// PATH, it makes `kubectl appdeploy` work. It only wires the standard
// streams to the commands of internal/cli/appdeploy and turns their outcome
// into an exit code (internal/cli/core).
package main

import (
	"os"

	"github.com/example/platform-operator/internal/cli/appdeploy"
)

func main() { os.Exit(appdeploy.Plugin.Main()) }
