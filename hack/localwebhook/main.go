// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

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
