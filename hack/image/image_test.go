// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// moduleRoot is the operator's module, two levels up from hack/image.
const moduleRoot = "../.."

// What the test builds with, and so expects back.
var (
	testCreated = time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	testMeta    = metadata{Source: defaultSource, Version: "v9.8.7-test",
		Revision: strings.Repeat("0123456789", 4), Created: testCreated}
	wantLabels = map[string]string{
		"org.opencontainers.image.source":   "https://github.com/example/platform-operator",
		"org.opencontainers.image.version":  "v9.8.7-test",
		"org.opencontainers.image.revision": "0123456789012345678901234567890123456789",
		"org.opencontainers.image.created":  "2026-05-04T03:02:01Z",
		"org.opencontainers.image.title":    "platform-operator",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	bothPlatforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
	wantMachine   = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
)

// imagePlatforms are the platforms the image test builds. `make test`
// builds the machine's own only: a cross build of the manager for the other
// architecture costs minutes after every change (ten cold on two cores).
// `make test-image`, which `make verify` runs, passes
// -image-platforms=linux/amd64,linux/arm64 to build the image as released.
var imagePlatforms = flag.String("image-platforms", "linux/"+runtime.GOARCH,
	"the platforms TestImage_... builds, as the -platforms flag of hack/image")

// testPlatforms parses -image-platforms.
func testPlatforms(t *testing.T) []v1.Platform {
	t.Helper()
	ps, err := parsePlatforms(*imagePlatforms)
	if err != nil {
		t.Fatalf("-image-platforms: %v", err)
	}
	return ps
}

// wantTree is the whole layer: path, type, mode, owner. Nothing else, so no
// shell, no /bin, no package manager.
var wantTree = []string{
	"etc/ dir 755 0:0",
	"etc/group file 644 0:0",
	"etc/passwd file 644 0:0",
	"etc/ssl/ dir 755 0:0",
	"etc/ssl/certs/ dir 755 0:0",
	"etc/ssl/certs/ca-certificates.crt file 644 0:0",
	"home/ dir 755 0:0",
	"home/nonroot/ dir 700 65532:65532",
	"manager file 755 0:0",
	"tmp/ dir 1777 0:0",
	"usr/ dir 755 0:0",
	"usr/share/ dir 755 0:0",
	"usr/share/sbom/ dir 755 0:0",
	"usr/share/sbom/manager.spdx.json file 644 0:0",
}

// TestImage_PushedIndexHasNonRootShelllessManagerImagesWithSBOMReferrers
// builds the real manager for each of -image-platforms (amd64 and arm64 in
// make verify), pushes the index and the SBOMs to an in-process registry and
// checks what comes back from it; then pushes the layout it wrote, as make
// docker-push does without a container engine, and expects the same index.
func TestImage_PushedIndexHasNonRootShelllessManagerImagesWithSBOMReferrers(t *testing.T) {
	platforms := testPlatforms(t)
	b, err := build(t.Context(), buildOptions{
		Dir: moduleRoot, Package: "./cmd", Platforms: platforms, Meta: testMeta, WorkDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	layoutDir := filepath.Join(t.TempDir(), "image")
	if err := writeLayout(layoutDir, b); err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/platform-operator:v9.8.7-test")
	if err != nil {
		t.Fatal(err)
	}
	opts := []remote.Option{remote.WithContext(t.Context())}
	if _, err := push(ref, b, opts...); err != nil {
		t.Fatal(err)
	}
	if err := pushSBOMs(ref.Context(), b, opts...); err != nil {
		t.Fatal(err)
	}

	idx, err := remote.Index(ref, opts...)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Errorf("index media type %q, want the OCI image index", im.MediaType)
	}
	checkLabels(t, "index annotations", im.Annotations)
	var pushedPlatforms []v1.Platform
	for _, d := range im.Manifests {
		if d.Platform != nil {
			pushedPlatforms = append(pushedPlatforms, *d.Platform)
		}
	}
	if diff := cmp.Diff(platforms, pushedPlatforms); diff != "" {
		t.Fatalf("index platforms (-want +got):\n%s", diff)
	}

	modVersions, modSums := readGoModules(t)
	for _, d := range im.Manifests {
		t.Run(d.Platform.Architecture, func(t *testing.T) {
			digest := ref.Context().Digest(d.Digest.String())
			img, err := remote.Image(digest, opts...)
			if err != nil {
				t.Fatal(err)
			}
			files := checkImage(t, img, d.Platform.Architecture)
			sbom := pulledSBOM(t, digest, opts)
			if !bytes.Equal(sbom, files["usr/share/sbom/manager.spdx.json"]) {
				t.Error("the SBOM referrer differs from /usr/share/sbom/manager.spdx.json")
			}
			checkSBOM(t, sbom, d.Platform.Architecture, files["manager"], modVersions, modSums)
		})
	}

	checkLayout(t, layoutDir, idx)
	checkLayoutPush(t, layoutDir, srv.URL, idx, opts)
}

// checkLayoutPush pushes the layout in dir to another repository of the
// registry at url, as `make docker-push` does after `make docker-build`
// without a container engine, and expects the index pushed from the build
// and each image's SBOM referrer.
func checkLayoutPush(t *testing.T, dir, url string, want v1.ImageIndex, opts []remote.Option) {
	t.Helper()
	ref, err := name.ParseReference(strings.TrimPrefix(url, "http://") + "/from-layout:v9.8.7-test")
	if err != nil {
		t.Fatal(err)
	}
	b, err := readLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := push(ref, b, opts...); err != nil {
		t.Fatal(err)
	}
	if err := pushSBOMs(ref.Context(), b, opts...); err != nil {
		t.Fatal(err)
	}
	got, err := remote.Index(ref, opts...)
	if err != nil {
		t.Fatal(err)
	}
	gotDigest, err := got.Digest()
	if err != nil {
		t.Fatal(err)
	}
	wantDigest, err := want.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if gotDigest != wantDigest {
		t.Errorf("the layout pushed index %s, want the built index %s", gotDigest, wantDigest)
	}
	im, err := got.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if len(pulledSBOM(t, ref.Context().Digest(d.Digest.String()), opts)) == 0 {
			t.Errorf("the layout's push left image %s without its SBOM", d.Digest)
		}
	}
}

// checkImage checks the config and the layer of img, for arch, and returns
// the layer's regular files by path.
func checkImage(t *testing.T, img v1.Image, arch string) map[string][]byte {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != arch {
		t.Errorf("config platform %s/%s, want linux/%s", cf.OS, cf.Architecture, arch)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("User %q, want 65532:65532", cf.Config.User)
	}
	if diff := cmp.Diff([]string{"/manager"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("Entrypoint (-want +got):\n%s", diff)
	}
	if len(cf.Config.Cmd) != 0 || cf.Config.WorkingDir != "/" {
		t.Errorf("Cmd %q, WorkingDir %q: want no Cmd and /", cf.Config.Cmd, cf.Config.WorkingDir)
	}
	checkLabels(t, "config labels", cf.Config.Labels)
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	checkLabels(t, "manifest annotations", m.Annotations)

	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var tree []string
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kind := map[byte]string{tar.TypeDir: "dir", tar.TypeReg: "file"}[h.Typeflag]
		if kind == "" {
			kind = fmt.Sprintf("type-%c", h.Typeflag)
		}
		tree = append(tree, fmt.Sprintf("%s %s %o %d:%d", h.Name, kind, h.Mode, h.Uid, h.Gid))
		if !h.ModTime.Equal(testCreated) {
			t.Errorf("%s: mtime %s, want the commit time %s", h.Name, h.ModTime, testCreated)
		}
		switch base := path.Base(h.Name); base {
		case "sh", "bash", "ash", "dash", "busybox":
			t.Errorf("the image has a shell: %s", h.Name)
		}
		if h.Typeflag == tar.TypeReg {
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if diff := cmp.Diff(wantTree, tree); diff != "" {
		t.Errorf("layer content (-want +got):\n%s", diff)
	}

	checkManagerBinary(t, files["manager"], arch)
	checkCABundle(t, files["etc/ssl/certs/ca-certificates.crt"])
	if !hasLinePrefix(files["etc/passwd"], "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", files["etc/passwd"])
	}
	if !hasLinePrefix(files["etc/group"], "nonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot group 65532:\n%s", files["etc/group"])
	}
	return files
}

// checkManagerBinary checks that data is a static, stripped ELF executable
// for arch.
func checkManagerBinary(t *testing.T, data []byte, arch string) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("/manager is no ELF file: %v", err)
	}
	defer f.Close()
	if f.Machine != wantMachine[arch] {
		t.Errorf("/manager is for %s, want %s", f.Machine, wantMachine[arch])
	}
	if f.Type != elf.ET_EXEC {
		t.Errorf("/manager is ELF type %s, want an executable", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/manager asks for a dynamic loader; want a static binary (scratch has no libc)")
		}
	}
	if f.Section(".symtab") != nil {
		t.Error("/manager has a symbol table; want it stripped (-ldflags -s -w)")
	}
}

// checkCABundle checks that data is a PEM bundle of a trust store's size.
func checkCABundle(t *testing.T, data []byte) {
	t.Helper()
	n := 0
	for rest := data; ; n++ {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Fatalf("CA bundle certificate %d: %v", n, err)
		}
	}
	if n < 100 {
		t.Errorf("CA bundle holds %d certificates, want the 100 and more of a trust store", n)
	}
}

// checkLabels checks got against wantLabels, and that the description is
// there.
func checkLabels(t *testing.T, what string, got map[string]string) {
	t.Helper()
	got = maps.Clone(got)
	if got["org.opencontainers.image.description"] == "" {
		t.Errorf("%s: no org.opencontainers.image.description", what)
	}
	delete(got, "org.opencontainers.image.description")
	if diff := cmp.Diff(wantLabels, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// pulledSBOM finds among the registry's referrers of digest the one SPDX
// artifact and returns its blob. The artifact type is read from each
// referrer's manifest: go-containerregistry's registry lists referrers with
// the config's media type as their artifactType, where registries that
// follow OCI 1.1 report the manifest's artifactType.
func pulledSBOM(t *testing.T, digest name.Digest, opts []remote.Option) []byte {
	t.Helper()
	refs, err := remote.Referrers(digest, opts...)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := refs.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var sboms []*v1.Manifest
	for _, d := range rm.Manifests {
		desc, err := remote.Get(digest.Context().Digest(d.Digest.String()), opts...)
		if err != nil {
			t.Fatal(err)
		}
		m, err := v1.ParseManifest(bytes.NewReader(desc.Manifest))
		if err != nil {
			t.Fatal(err)
		}
		if m.ArtifactType == "application/spdx+json" {
			sboms = append(sboms, m)
		}
	}
	if len(sboms) != 1 {
		t.Fatalf("%d SPDX referrers of %s among %d, want 1", len(sboms), digest, len(rm.Manifests))
	}
	m := sboms[0]
	if m.Subject == nil || m.Subject.Digest.String() != digest.DigestStr() {
		t.Errorf("SBOM subject %v, want %s", m.Subject, digest.DigestStr())
	}
	if m.Config.MediaType != "application/vnd.oci.empty.v1+json" ||
		m.Config.Digest.String() != "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a" {
		t.Errorf("SBOM config %+v, want the OCI empty descriptor", m.Config)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != "application/spdx+json" {
		t.Fatalf("SBOM layers %+v, want one application/spdx+json", m.Layers)
	}
	blob, err := remote.Layer(digest.Context().Digest(m.Layers[0].Digest.String()), opts...)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := blob.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// pulledSPDX is the part of an SPDX 2.3 document the test reads.
type pulledSPDX struct {
	SPDXVersion string `json:"spdxVersion"`
	DataLicense string `json:"dataLicense"`
	Packages    []struct {
		SPDXID      string           `json:"SPDXID"`
		Name        string           `json:"name"`
		VersionInfo string           `json:"versionInfo"`
		Comment     string           `json:"comment"`
		Checksums   []pulledChecksum `json:"checksums"`
	} `json:"packages"`
	Files []struct {
		FileName  string           `json:"fileName"`
		Checksums []pulledChecksum `json:"checksums"`
	} `json:"files"`
	Relationships []struct {
		SPDXElementID      string `json:"spdxElementId"`
		RelationshipType   string `json:"relationshipType"`
		RelatedSPDXElement string `json:"relatedSpdxElement"`
	} `json:"relationships"`
}

// pulledChecksum is an SPDX checksum.
type pulledChecksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

// checkSBOM checks the SPDX document of the arch image against go.mod,
// go.sum, the toolchain and the pulled binary.
func checkSBOM(t *testing.T, data []byte, arch string, manager []byte,
	modVersions, modSums map[string]string) {
	t.Helper()
	var doc pulledSPDX
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("SBOM is no JSON: %v", err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || doc.DataLicense != "CC0-1.0" {
		t.Errorf("spdxVersion %q, dataLicense %q: want SPDX-2.3, CC0-1.0", doc.SPDXVersion, doc.DataLicense)
	}
	type pkg struct{ version, sha256, comment, id string }
	pkgs := map[string]pkg{}
	for _, p := range doc.Packages {
		got := pkg{version: p.VersionInfo, comment: p.Comment, id: p.SPDXID}
		for _, c := range p.Checksums {
			if c.Algorithm == "SHA256" {
				got.sha256 = c.ChecksumValue
			}
		}
		pkgs[p.Name] = got
	}
	mainPkg := pkgs["github.com/example/platform-operator"]
	if mainPkg.version != "v9.8.7-test" {
		t.Errorf("SBOM main module version %q, want v9.8.7-test", mainPkg.version)
	}
	if !strings.Contains(mainPkg.comment, "GOARCH="+arch) || !strings.Contains(mainPkg.comment, "CGO_ENABLED=0") {
		t.Errorf("SBOM main module comment %q: want the build settings GOARCH=%s CGO_ENABLED=0", mainPkg.comment, arch)
	}
	for _, mod := range []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", caBundleModulePath} {
		want := pkg{version: modVersions[mod], sha256: modSums[mod+" "+modVersions[mod]]}
		got := pkgs[mod]
		if got.version != want.version || got.sha256 != want.sha256 {
			t.Errorf("SBOM %s: version %q, SHA256 %q; want go.mod's %q and go.sum's %q",
				mod, got.version, got.sha256, want.version, want.sha256)
		}
	}
	if got := pkgs["stdlib"].version; got != runtime.Version() {
		t.Errorf("SBOM stdlib version %q, want the toolchain's %s", got, runtime.Version())
	}
	dependsOn := 0
	for _, r := range doc.Relationships {
		if r.SPDXElementID == mainPkg.id && r.RelationshipType == "DEPENDS_ON" {
			dependsOn++
		}
	}
	if dependsOn < 50 {
		t.Errorf("SBOM: the main module DEPENDS_ON %d packages; want every module linked in", dependsOn)
	}
	sum := sha256.Sum256(manager)
	if len(doc.Files) != 1 || doc.Files[0].FileName != "/manager" ||
		!slices.Contains(doc.Files[0].Checksums, pulledChecksum{"SHA256", hex.EncodeToString(sum[:])}) {
		t.Errorf("SBOM files %+v: want /manager with the pulled binary's SHA256 %x", doc.Files, sum)
	}
}

// checkLayout checks that the layout holds the index that was pushed, named
// by its version, and the two SBOM artifacts.
func checkLayout(t *testing.T, dir string, pushed v1.ImageIndex) {
	t.Helper()
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want, err := pushed.Digest()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, len(tm.Manifests))
	for _, d := range tm.Manifests {
		got = append(got, fmt.Sprintf("%s %s %s", d.MediaType, d.ArtifactType,
			d.Annotations["org.opencontainers.image.ref.name"]))
		if d.MediaType == "application/vnd.oci.image.index.v1+json" && d.Digest != want {
			t.Errorf("layout index %s, pushed %s: want the same", d.Digest, want)
		}
	}
	pm, err := pushed.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	// The index, then one SBOM per image.
	wantEntries := []string{"application/vnd.oci.image.index.v1+json  v9.8.7-test"}
	for range pm.Manifests {
		wantEntries = append(wantEntries, "application/vnd.oci.image.manifest.v1+json application/spdx+json ")
	}
	if diff := cmp.Diff(wantEntries, got); diff != "" {
		t.Errorf("layout index.json (-want +got):\n%s", diff)
	}
}

// readGoModules reads the module versions of go.mod's require blocks, and
// go.sum's hashes (as hexadecimal SHA-256) by "path version".
func readGoModules(t *testing.T) (versions, sums map[string]string) {
	t.Helper()
	versions, sums = map[string]string{}, map[string]string{}
	scan := func(file string, line func(fields []string)) {
		f, err := os.Open(filepath.Join(moduleRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			line(strings.Fields(s.Text()))
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	}
	scan("go.mod", func(f []string) {
		if len(f) >= 2 && strings.HasPrefix(f[1], "v") && strings.Contains(f[0], ".") {
			versions[f[0]] = f[1]
		}
	})
	scan("go.sum", func(f []string) {
		if len(f) == 3 && !strings.HasSuffix(f[1], "/go.mod") && strings.HasPrefix(f[2], "h1:") {
			raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(f[2], "h1:"))
			if err != nil {
				t.Fatalf("go.sum %s: %v", f[0], err)
			}
			sums[f[0]+" "+f[1]] = hex.EncodeToString(raw)
		}
	})
	return versions, sums
}

// hasLinePrefix reports whether a line of data starts with prefix.
func hasLinePrefix(data []byte, prefix string) bool {
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

// TestLayerOf_SameEntriesSameDigest protects reproducibility: the layer's
// digest depends on its entries and time stamp only.
func TestLayerOf_SameEntriesSameDigest(t *testing.T) {
	entries := rootfs([]byte("manager"), []byte("ca"), []byte("{}"))
	digest := func(mtime time.Time) v1.Hash {
		l, err := layerOf(entries, mtime)
		if err != nil {
			t.Fatal(err)
		}
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest(testCreated)
	time.Sleep(1100 * time.Millisecond) // a wall-clock time stamp would show
	if again := digest(testCreated); again != first {
		t.Errorf("same entries, digests %s and %s", first, again)
	}
	if other := digest(testCreated.Add(time.Hour)); other == first {
		t.Errorf("another time stamp, same digest %s: the time stamp is not used", first)
	}
}

// TestParsePlatforms_OnlyLinuxOnce covers the -platforms flag.
func TestParsePlatforms_OnlyLinuxOnce(t *testing.T) {
	tests := []struct {
		in      string
		want    []v1.Platform
		wantErr bool
	}{
		{in: "linux/amd64,linux/arm64", want: bothPlatforms},
		{in: " linux/arm64 ", want: []v1.Platform{{OS: "linux", Architecture: "arm64"}}},
		{in: "darwin/arm64", wantErr: true},
		{in: "linux", wantErr: true},
		{in: "linux/arm/v7", wantErr: true},
		{in: "linux/amd64,linux/amd64", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parsePlatforms(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parsePlatforms(%q) error %v, want error %t", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parsePlatforms(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
