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

// Command localwebhook prepares the admission webhooks for a manager running
// on this machine (`make run`): it makes or reuses a serving certificate for
// 127.0.0.1 in -cert-dir and prints the webhook configurations (or, with
// -crds, the CRDs with their conversion webhook), rewritten to call
// https://127.0.0.1:<port>, for kubectl apply.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/example/platform-operator/internal/testutil/localwebhook"
)

func main() {
	certDir := flag.String("cert-dir", "", "directory for tls.crt and tls.key")
	port := flag.Int("port", 9443, "port the manager serves webhooks on")
	manifests := flag.String("manifests", "config/webhook/manifests.yaml", "generated webhook configurations")
	crds := flag.String("crds", "",
		"print the CRDs of this directory, converting through the local manager, instead of the webhook configurations")
	flag.Parse()
	if *certDir == "" {
		fmt.Fprintln(os.Stderr, "localwebhook: -cert-dir is required")
		os.Exit(2)
	}
	ca, err := localwebhook.EnsureCerts(*certDir)
	if err == nil {
		var out []byte
		if *crds != "" {
			out, err = localwebhook.RenderCRDs(*crds, *port, ca)
		} else {
			out, err = localwebhook.Render(*manifests, *port, ca)
		}
		if err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localwebhook:", err)
		os.Exit(1)
	}
}
