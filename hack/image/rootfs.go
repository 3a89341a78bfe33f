// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"io"
	"runtime/debug"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Paths in the image, without the leading slash as in a layer's tar.
const (
	caBundlePath = "etc/ssl/certs/ca-certificates.crt"
	sbomPath     = "usr/share/sbom/manager.spdx.json"
)

// nonroot is the uid and gid of user.
const nonroot = 65532

// passwd and group name the users, as distroless' do: root, nobody and
// nonroot, none with a login shell (there is no shell).
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\n" +
		"nobody:x:65534:\n" +
		"nonroot:x:65532:\n"
)

// entry is one file or directory of the image's layer.
type entry struct {
	// Path is relative to /, as in a tar.
	Path string
	// Mode is the permission bits (and the sticky bit).
	Mode int64
	// Owner is the uid and gid: 0 or nonroot.
	Owner int
	// Dir is true for a directory, which has no Data.
	Dir bool
	// Data is a regular file's content.
	Data []byte
}

// rootfs is the whole file system of the image, parents before children.
// Everything is root's and read-only to the manager except its home
// (nonroot's, as in distroless) and /tmp.
func rootfs(manager, caBundle, sbom []byte) []entry {
	dir := func(p string) entry { return entry{Path: p, Mode: 0o755, Dir: true} }
	file := func(p string, mode int64, data []byte) entry { return entry{Path: p, Mode: mode, Data: data} }
	return []entry{
		dir("etc"),
		file("etc/group", 0o644, []byte(group)),
		file("etc/passwd", 0o644, []byte(passwd)),
		dir("etc/ssl"),
		dir("etc/ssl/certs"),
		file(caBundlePath, 0o644, caBundle),
		dir("home"),
		{Path: "home/nonroot", Mode: 0o700, Owner: nonroot, Dir: true},
		file(entrypoint[1:], 0o755, manager),
		{Path: "tmp", Mode: 0o1777, Dir: true},
		dir("usr"),
		dir("usr/share"),
		dir("usr/share/sbom"),
		file(sbomPath, 0o644, sbom),
	}
}

// layerOf is the OCI layer (gzip) of entries, every time stamp mtime, so
// the same entries make the same digest.
func layerOf(entries []entry, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.Path,
			Mode:    e.Mode,
			Uid:     e.Owner,
			Gid:     e.Owner,
			Uname:   "root",
			Gname:   "root",
			ModTime: mtime.Truncate(time.Second),
			Format:  tar.FormatUSTAR,
		}
		if e.Owner == nonroot {
			h.Uname, h.Gname = "nonroot", "nonroot"
		}
		if e.Dir {
			h.Typeflag, h.Name = tar.TypeDir, e.Path+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// caBundleModulePath holds the CA bundle. The roots come from
// golang.org/x/crypto/x509roots/fallback/bundle, the Go team's copy of the
// Mozilla NSS trust store, versioned in go.mod and checked by go.sum, rather
// than from the build machine's /etc/ssl/certs: the same commit then gives
// the same bundle everywhere, and updating it is a `go get`.
const caBundleModulePath = "golang.org/x/crypto/x509roots/fallback"

// caBundle is the PEM bundle of the module's roots that carry no extra
// constraint. The one or two roots NSS trusts only for certificates issued
// before a distrust-after date are left out: a PEM file cannot say that, and
// trusting them without it would trust more than NSS does.
func caBundle() ([]byte, error) {
	var buf bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// caBundleModule is the module the CA bundle came from, as this program was
// built with it, for the SBOM; nil when the build information is missing.
func caBundleModule() *debug.Module {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	for _, m := range bi.Deps {
		if m.Path == caBundleModulePath {
			if m.Replace != nil {
				return m.Replace
			}
			return m
		}
	}
	return nil
}
