// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command noopwebhook is the admission figure's floor in a process of its
// own (package noop): it listens on a free port of 127.0.0.1, prints the
// port on a line of its own, and serves until killed.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/example/platform-operator/test/harness/noop"
)

func main() {
	certDir := flag.String("cert-dir", "", "the folder of tls.crt and tls.key")
	flag.Parse()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
	if err := noop.Serve(l, *certDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
