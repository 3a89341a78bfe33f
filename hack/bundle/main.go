// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command bundle-tool writes, checks and supports the operator's OLM bundle
// (`make bundle`):
//
//	bundle-tool generate [-repo .] [-kubectl bin/kubectl] [-image IMG] [-out bundle]
//	bundle-tool validate [dir]
//	bundle-tool crds
//
// generate renders config/default and config/samples with kubectl
// kustomize, the same install `make deploy` applies, and writes the
// registry+v1 bundle: bundle/manifests (the ClusterServiceVersion, the
// CRDs, and the other objects of the install that a bundle carries),
// bundle/metadata/annotations.yaml and bundle/bundle.Dockerfile. What no
// kustomize source says (display names, descriptions, descriptors, install
// modes, links) comes from config/manifests/bases; see that file for what
// is merged from where. The output depends on nothing but its inputs, so
// `make verify` can regenerate it and fail on a diff.
//
// validate loads a bundle directory as OLM's registry does and runs the
// Operator Framework's validators on it: the default bundle set (bundle,
// CSV, CRD) and the OperatorHub, capabilities, categories, good-practices,
// object and deprecated-API ones. It prints every warning and fails on
// errors.
//
// crds prints OLM's own CustomResourceDefinitions (ClusterServiceVersion,
// Subscription, ...) as the Operator Framework API module carries them, so
// a test can install them and dry-run the bundle against a real API server.
//
// It is a module of its own, like hack/tools: the Operator Framework API's
// dependency graph must not constrain the operator's.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "generate":
		err = runGenerate(args)
	case "validate":
		err = runValidate(args)
	case "crds":
		err = printOLMCRDs(os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bundle-tool: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: bundle-tool generate [flags] | validate [dir] | crds")
	os.Exit(2)
}

// runGenerate reads the sources from the repository and writes the bundle.
func runGenerate(args []string) error {
	fs := flag.NewFlagSet("generate", flag.ExitOnError)
	repo := fs.String("repo", ".", "The repository root.")
	kubectl := fs.String("kubectl", "bin/kubectl", "The kubectl that renders the kustomize sources.")
	image := fs.String("image", "", "The manager image; empty: the one config/default names.")
	out := fs.String("out", "bundle", "The bundle directory, relative to -repo.")
	channels := fs.String("channels", "alpha", "Comma-separated channels of the bundle.")
	defaultChannel := fs.String("default-channel", "alpha", "The package's default channel.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	src, opts, err := readSources(*repo, *kubectl)
	if err != nil {
		return err
	}
	opts.Image = *image
	opts.Channels = *channels
	opts.DefaultChannel = *defaultChannel
	files, err := generate(src, opts)
	if err != nil {
		return err
	}
	return writeBundle(*repo, *out, files)
}

// runValidate validates the bundle in the directory given (bundle when
// none) and prints what the validators found.
func runValidate(args []string) error {
	dir := "bundle"
	if len(args) > 0 {
		dir = args[0]
	}
	findings, err := validateBundle(dir)
	if err != nil {
		return err
	}
	errs := 0
	for _, f := range findings {
		fmt.Println(f)
		if f.isError {
			errs++
		}
	}
	if errs > 0 {
		return fmt.Errorf("bundle %s: %d validation errors", dir, errs)
	}
	fmt.Printf("bundle %s: valid (%d warnings)\n", dir, len(findings))
	return nil
}
