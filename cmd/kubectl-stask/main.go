// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command kubectl-stask is the kubectl plugin for ScheduleTasks: on the PATH,
// it makes `kubectl stask` work. It only wires the standard streams to the
// commands of internal/cli/stask and turns their outcome into an exit code
// (internal/cli/core).
package main

import (
	"os"

	"github.com/example/platform-operator/internal/cli/stask"
)

func main() { os.Exit(stask.Plugin.Main()) }
