// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed properties, which the chart and config/manager expect.
const (
	// defaultSource is org.opencontainers.image.source: the module's
	// repository.
	defaultSource = "https://github.com/example/platform-operator"
	// user runs the manager: distroless' nonroot, numeric so that the
	// kubelet can check runAsNonRoot without reading /etc/passwd.
	user = "65532:65532"
	// entrypoint is the manager binary's path in the image.
	entrypoint = "/manager"
)

// OCI annotation keys (image-spec annotations.md), set on the config as
// labels and on the manifests.
const (
	annotationSource      = "org.opencontainers.image.source"
	annotationVersion     = "org.opencontainers.image.version"
	annotationRevision    = "org.opencontainers.image.revision"
	annotationCreated     = "org.opencontainers.image.created"
	annotationTitle       = "org.opencontainers.image.title"
	annotationDescription = "org.opencontainers.image.description"
	annotationLicenses    = "org.opencontainers.image.licenses"
	annotationRefName     = "org.opencontainers.image.ref.name"
)

// metadata is what the image says about where it comes from.
type metadata struct {
	// Source is the repository's URL.
	Source string
	// Version is the released version, or what `git describe` says.
	Version string
	// Revision is the commit built; empty leaves the annotation out.
	Revision string
	// Created is the commit's time: every time stamp in the image is this,
	// so that a rebuild of a commit is the same image.
	Created time.Time
}

// annotations are the OCI annotations for meta, title, description and
// licence included.
func (m metadata) annotations() map[string]string {
	a := map[string]string{
		annotationSource:  m.Source,
		annotationVersion: m.Version,
		annotationCreated: m.Created.UTC().Format(time.RFC3339),
		annotationTitle:   "platform-operator",
		annotationDescription: "The platform-operator manager: controllers and webhooks for " +
			"ScheduleTask, TaskRun and AppDeployment",
		annotationLicenses: "Apache-2.0",
	}
	if m.Revision != "" {
		a[annotationRevision] = m.Revision
	}
	return a
}

// parsePlatforms reads "linux/amd64,linux/arm64"; the images are Linux ones
// (the binary is linked for a scratch image, no libc), so another OS is
// refused.
func parsePlatforms(list string) ([]v1.Platform, error) {
	ps := make([]v1.Platform, 0, 2)
	seen := map[string]bool{}
	for s := range strings.SplitSeq(list, ",") {
		s = strings.TrimSpace(s)
		osName, arch, ok := strings.Cut(s, "/")
		if !ok || osName != "linux" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("platform %q: want linux/<GOARCH>, such as linux/arm64", s)
		}
		if seen[s] {
			return nil, fmt.Errorf("platform %q listed twice", s)
		}
		seen[s] = true
		ps = append(ps, v1.Platform{OS: osName, Architecture: arch})
	}
	return ps, nil
}

// buildOptions says what build builds.
type buildOptions struct {
	// Dir is the module root that go build runs in.
	Dir string
	// Package is the manager's main package, relative to Dir.
	Package string
	// Platforms are the images of the index, in order.
	Platforms []v1.Platform
	// Meta goes into the labels, the annotations and the SBOMs.
	Meta metadata
	// WorkDir receives the binaries.
	WorkDir string
}

// built is an image index and what it was made of: Images[i] is the image
// for Platforms[i] and SBOMs[i] its SBOM as an OCI artifact whose subject is
// Images[i].
type built struct {
	Index     v1.ImageIndex
	Platforms []v1.Platform
	Images    []v1.Image
	SBOMs     []v1.Image
}

// build builds the manager for each platform and makes the index, its
// images and their SBOM artifacts.
func build(ctx context.Context, o buildOptions) (*built, error) {
	ca, err := caBundle()
	if err != nil {
		return nil, err
	}
	b := &built{Platforms: o.Platforms}
	adds := make([]mutate.IndexAddendum, 0, len(o.Platforms))
	for _, p := range o.Platforms {
		bin := filepath.Join(o.WorkDir, "manager-"+p.OS+"-"+p.Architecture)
		if err := goBuild(ctx, o.Dir, o.Package, p, bin); err != nil {
			return nil, err
		}
		manager, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		sbom, err := spdxFromBinary(manager, p, o.Meta, caBundleModule())
		if err != nil {
			return nil, fmt.Errorf("SBOM of the %s/%s manager: %w", p.OS, p.Architecture, err)
		}
		layer, err := layerOf(rootfs(manager, ca, sbom), o.Meta.Created)
		if err != nil {
			return nil, err
		}
		img, err := managerImage(p, layer, o.Meta)
		if err != nil {
			return nil, fmt.Errorf("%s/%s image: %w", p.OS, p.Architecture, err)
		}
		art, err := sbomArtifact(img, sbom, o.Meta.Created)
		if err != nil {
			return nil, err
		}
		b.Images = append(b.Images, img)
		b.SBOMs = append(b.SBOMs, art)
		platform := p
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	b.Index = mutate.Annotations(idx, o.Meta.annotations()).(v1.ImageIndex)
	return b, nil
}

// goBuildFlags make the binary small and the same on every machine: no file
// system paths, no symbol table or DWARF. cmd/main.go has no version
// variable to stamp with -X; the version is in the labels and the SBOM.
var goBuildFlags = []string{"-trimpath", "-ldflags=-s -w"}

// goBuild builds pkg for p into out. CGO_ENABLED=0: a scratch image has no
// libc to link against.
func goBuild(ctx context.Context, dir, pkg string, p v1.Platform, out string) error {
	args := append(append([]string{"build"}, goBuildFlags...), "-o", out, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("GOOS=%s GOARCH=%s go %s: %w\n%s", p.OS, p.Architecture, strings.Join(args, " "), err, output)
	}
	return nil
}

// managerImage is the image of one platform: layer, and a config that runs
// /manager as 65532:65532 from /.
func managerImage(p v1.Platform, layer v1.Layer, m metadata) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: m.Created},
			CreatedBy: "hack/image: /manager, CA bundle, passwd and group, SBOM",
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: m.Created}
	cf.Config = v1.Config{
		User:       user,
		Entrypoint: []string{entrypoint},
		WorkingDir: "/",
		// Go finds the bundle there by itself; other TLS stacks look here.
		Env:    []string{"SSL_CERT_FILE=/" + caBundlePath},
		Labels: m.annotations(),
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	return mutate.Annotations(img, m.annotations()).(v1.Image), nil
}

// writeLayout writes b to dir as an OCI image layout: index.json lists the
// image index (ref.name the version) and each SBOM artifact, which carries
// its subject as in a registry. A dir that holds a layout is replaced; one
// that holds anything else is refused rather than deleted.
func writeLayout(dir string, b *built) error {
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err == nil {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty and holds no OCI image layout: not replacing it", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	anns, err := b.Index.IndexManifest()
	if err != nil {
		return err
	}
	refName := map[string]string{annotationRefName: anns.Annotations[annotationVersion]}
	if err := p.AppendIndex(b.Index, layout.WithAnnotations(refName)); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	for _, s := range b.SBOMs {
		if err := p.WriteImage(s); err != nil {
			return fmt.Errorf("write the SBOM to %s: %w", dir, err)
		}
		d, err := s.Digest()
		if err != nil {
			return err
		}
		size, err := s.Size()
		if err != nil {
			return err
		}
		if err := p.AppendDescriptor(v1.Descriptor{
			MediaType: types.OCIManifestSchema1, Digest: d, Size: size, ArtifactType: spdxMediaType,
		}); err != nil {
			return err
		}
	}
	return nil
}

// push pushes the index and its images to ref and returns the index's
// digest.
func push(ref name.Reference, b *built, opts ...remote.Option) (v1.Hash, error) {
	if err := remote.WriteIndex(ref, b.Index, opts...); err != nil {
		return v1.Hash{}, fmt.Errorf("push %s: %w", ref, err)
	}
	return b.Index.Digest()
}

// pushSBOMs pushes each SBOM artifact by digest to repo, after the images
// they refer to. remote.Write keeps the referrers tag fallback up to date
// on a registry without the Referrers API.
func pushSBOMs(repo name.Repository, b *built, opts ...remote.Option) error {
	for _, s := range b.SBOMs {
		d, err := s.Digest()
		if err != nil {
			return err
		}
		if err := remote.Write(repo.Digest(d.String()), s, opts...); err != nil {
			return fmt.Errorf("push SBOM %s: %w", d, err)
		}
	}
	return nil
}

// readLayout reads back what writeLayout wrote to dir: the image index,
// its images and platforms, and the SBOM artifacts beside it, so that an
// image built once (make image, make docker-build without a container
// engine) can be pushed later without building it again.
func readLayout(dir string) (*built, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%s holds no OCI image layout (make image or make docker-build writes one): %w", dir, err)
	}
	root, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	rm, err := root.IndexManifest()
	if err != nil {
		return nil, err
	}
	b := &built{}
	for _, d := range rm.Manifests {
		switch {
		case d.MediaType == types.OCIImageIndex:
			if b.Index != nil {
				return nil, fmt.Errorf("%s holds more than one image index", dir)
			}
			if b.Index, err = root.ImageIndex(d.Digest); err != nil {
				return nil, err
			}
		case d.ArtifactType == spdxMediaType:
			sbom, err := root.Image(d.Digest)
			if err != nil {
				return nil, err
			}
			b.SBOMs = append(b.SBOMs, sbom)
		}
	}
	if b.Index == nil {
		return nil, fmt.Errorf("%s holds no image index", dir)
	}
	im, err := b.Index.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range im.Manifests {
		img, err := b.Index.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		if d.Platform == nil {
			return nil, fmt.Errorf("image %s of the index has no platform", d.Digest)
		}
		b.Images, b.Platforms = append(b.Images, img), append(b.Platforms, *d.Platform)
	}
	return b, nil
}
