// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command image builds the manager's container image with nothing but Go
// (`make image`, `make image-push`): no container engine, no base image.
//
// For each platform (linux/amd64 and linux/arm64 by default) it builds the
// manager with `go build` (static, -trimpath, stripped) and puts it in an
// image of one layer made from scratch: /manager, a CA bundle, /etc/passwd
// and /etc/group naming the nonroot user 65532, an empty /tmp and the
// user's home, and an SPDX 2.3 SBOM of the binary made from its Go build
// information. The images run as 65532:65532 and contain no shell. They go
// into an OCI image index, written to an OCI image layout directory; with
// -push the index is also pushed to a registry, followed by each image's
// SBOM as an OCI 1.1 artifact whose subject is that image, so that
// `oras discover` and `crane` find it through the Referrers API (or its tag
// fallback).
//
// With -from-layout it builds nothing and pushes the index and SBOMs that an
// earlier run wrote to -layout (`make docker-push` where no container engine
// exists, after `make docker-build`).
//
// The OCI annotations (source, version, revision, created, title,
// description, licenses) are set as config labels and as manifest
// annotations. Every time stamp is -created, the commit's time, so that two
// builds of one commit are byte for byte the same image.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	dir := flag.String("dir", ".", "root of the module that holds the manager")
	pkg := flag.String("package", "./cmd", "the manager's main package, relative to -dir")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list to build")
	layoutDir := flag.String("layout", "dist/image", "OCI image layout directory to write (replaced when it holds one)")
	pushTo := flag.String("push", "",
		"also push the index, then the SBOM referrers, to this reference (registry/repository:tag); "+
			"credentials come from the default keychain (docker config, credential helpers)")
	version := flag.String("version", "dev", "org.opencontainers.image.version")
	revision := flag.String("revision", "", "org.opencontainers.image.revision: the commit built")
	created := flag.String("created", os.Getenv("SOURCE_DATE_EPOCH"),
		"org.opencontainers.image.created and every time stamp in the image, as Unix seconds "+
			"(the commit's time, for a reproducible image; default $SOURCE_DATE_EPOCH, else 0)")
	source := flag.String("source", defaultSource, "org.opencontainers.image.source")
	fromLayout := flag.Bool("from-layout", false,
		"build nothing: push the image index and SBOMs already in -layout (needs -push)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *fromLayout {
		err = pushLayout(ctx, *layoutDir, *pushTo)
	} else {
		err = run(ctx, *dir, *pkg, *platforms, *layoutDir, *pushTo, metadata{
			Source: *source, Version: *version, Revision: *revision,
		}, *created)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// run builds the images, writes the layout and pushes when asked; meta
// lacks Created, which comes as the -created string.
func run(ctx context.Context, dir, pkg, platformList, layoutDir, pushTo string, meta metadata, created string) error {
	ps, err := parsePlatforms(platformList)
	if err != nil {
		return err
	}
	if meta.Created, err = parseCreated(created); err != nil {
		return err
	}
	var ref name.Reference
	if pushTo != "" {
		// Parsed before the build, so that a typo fails in a second.
		if ref, err = name.ParseReference(pushTo); err != nil {
			return fmt.Errorf("-push %q: %w", pushTo, err)
		}
	}
	work, err := os.MkdirTemp("", "platform-operator-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	b, err := build(ctx, buildOptions{Dir: dir, Package: pkg, Platforms: ps, Meta: meta, WorkDir: work})
	if err != nil {
		return err
	}
	if err := writeLayout(layoutDir, b); err != nil {
		return err
	}
	if err := printBuilt(layoutDir, b); err != nil {
		return err
	}
	if ref == nil {
		return nil
	}
	return pushBuilt(ctx, ref, b)
}

// pushLayout pushes the index and SBOMs of the OCI image layout dir to
// pushTo, building nothing.
func pushLayout(ctx context.Context, dir, pushTo string) error {
	if pushTo == "" {
		return errors.New("-from-layout needs -push <registry>/<repository>:<tag>")
	}
	ref, err := name.ParseReference(pushTo)
	if err != nil {
		return fmt.Errorf("-push %q: %w", pushTo, err)
	}
	b, err := readLayout(dir)
	if err != nil {
		return err
	}
	return pushBuilt(ctx, ref, b)
}

// pushBuilt pushes the index to ref, then the SBOM referrers beside it,
// with the default keychain's credentials.
func pushBuilt(ctx context.Context, ref name.Reference, b *built) error {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	digest, err := push(ref, b, opts...)
	if err != nil {
		return err
	}
	fmt.Printf("Pushed %s@%s\n", ref.Context(), digest)
	if err := pushSBOMs(ref.Context(), b, opts...); err != nil {
		// The SBOM is inside each image too; a registry that takes neither
		// the Referrers API nor OCI artifacts under the fallback tag only
		// loses the copy beside it.
		fmt.Fprintf(os.Stderr, "image: warning: SBOM referrers not pushed (each image keeps its SBOM at /%s): %v\n",
			sbomPath, err)
		return nil
	}
	fmt.Printf("Pushed %d SBOM referrers (%s) to %s\n", len(b.SBOMs), spdxMediaType, ref.Context())
	return nil
}

// printBuilt says where the layout is and the digests it holds, the index's
// first: that is the digest to deploy.
func printBuilt(layoutDir string, b *built) error {
	digest, err := b.Index.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("Wrote the OCI image layout %s\n", layoutDir)
	fmt.Printf("  index        %s\n", digest)
	for i, p := range b.Platforms {
		img, err := b.Images[i].Digest()
		if err != nil {
			return err
		}
		sbom, err := b.SBOMs[i].Digest()
		if err != nil {
			return err
		}
		fmt.Printf("  %-12s %s (SBOM %s)\n", p.OS+"/"+p.Architecture, img, sbom)
	}
	return nil
}

// parseCreated reads Unix seconds; empty is the epoch, as with an unset
// SOURCE_DATE_EPOCH.
func parseCreated(s string) (time.Time, error) {
	if strings.TrimSpace(s) == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("-created %q: want Unix seconds: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}
