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

// Command kubectl-appdeploy is the kubectl plugin for AppDeployments: on the
// PATH, it makes `kubectl appdeploy` work. It only wires the standard
// streams to the commands of internal/cli/appdeploy and turns their outcome
// into an exit code (internal/cli/core).
package main

import (
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/example/platform-operator/internal/cli/appdeploy"
	"github.com/example/platform-operator/internal/cli/core"
)

func main() {
	root, err := appdeploy.NewRootCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	os.Exit(core.Execute(root))
}
