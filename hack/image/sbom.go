// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"bytes"
	"crypto/sha1" // SPDX 2.3 requires a SHA1 checksum of a file; SHA256 is given too.
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Media types of the SBOM artifact, after the OCI image spec 1.1's
// "Guidelines for artifact usage": the artifactType names the content, the
// config is the empty descriptor.
const (
	spdxMediaType  = "application/spdx+json"
	emptyMediaType = "application/vnd.oci.empty.v1+json"
)

// emptyJSON is the content of the empty descriptor.
var emptyJSON = []byte("{}")

// The SPDX 2.3 JSON document, the fields this SBOM uses
// (https://spdx.github.io/spdx-spec/v2.3/).
type (
	spdxDocument struct {
		SPDXVersion       string             `json:"spdxVersion"`
		DataLicense       string             `json:"dataLicense"`
		SPDXID            string             `json:"SPDXID"`
		Name              string             `json:"name"`
		DocumentNamespace string             `json:"documentNamespace"`
		CreationInfo      spdxCreationInfo   `json:"creationInfo"`
		Packages          []spdxPackage      `json:"packages"`
		Files             []spdxFile         `json:"files"`
		Relationships     []spdxRelationship `json:"relationships"`
	}
	spdxCreationInfo struct {
		Created  string   `json:"created"`
		Creators []string `json:"creators"`
	}
	spdxPackage struct {
		SPDXID                string            `json:"SPDXID"`
		Name                  string            `json:"name"`
		VersionInfo           string            `json:"versionInfo,omitempty"`
		PrimaryPackagePurpose string            `json:"primaryPackagePurpose,omitempty"`
		DownloadLocation      string            `json:"downloadLocation"`
		FilesAnalyzed         bool              `json:"filesAnalyzed"`
		Checksums             []spdxChecksum    `json:"checksums,omitempty"`
		LicenseConcluded      string            `json:"licenseConcluded"`
		LicenseDeclared       string            `json:"licenseDeclared"`
		CopyrightText         string            `json:"copyrightText"`
		Comment               string            `json:"comment,omitempty"`
		ExternalRefs          []spdxExternalRef `json:"externalRefs,omitempty"`
	}
	spdxFile struct {
		SPDXID           string         `json:"SPDXID"`
		FileName         string         `json:"fileName"`
		Checksums        []spdxChecksum `json:"checksums"`
		LicenseConcluded string         `json:"licenseConcluded"`
		CopyrightText    string         `json:"copyrightText"`
	}
	spdxChecksum struct {
		Algorithm     string `json:"algorithm"`
		ChecksumValue string `json:"checksumValue"`
	}
	spdxExternalRef struct {
		ReferenceCategory string `json:"referenceCategory"`
		ReferenceType     string `json:"referenceType"`
		ReferenceLocator  string `json:"referenceLocator"`
	}
	spdxRelationship struct {
		SPDXElementID      string `json:"spdxElementId"`
		RelationshipType   string `json:"relationshipType"`
		RelatedSPDXElement string `json:"relatedSpdxElement"`
	}
)

// noAssertion is SPDX's "not looked at".
const noAssertion = "NOASSERTION"

// spdxFromBinary is the SPDX 2.3 JSON SBOM of the manager binary for p,
// made from its Go build information: the main module (with the binary's
// checksum), the Go standard library at the toolchain's version, every
// module linked in with its version and go.sum hash, and ca, the module
// of the CA bundle beside it (nil: left out). Every field depends only on
// the binary, p, meta and ca, so a rebuild gives the same document.
func spdxFromBinary(binary []byte, p v1.Platform, meta metadata, ca *debug.Module) ([]byte, error) {
	bi, err := buildinfo.Read(bytes.NewReader(binary))
	if err != nil {
		return nil, err
	}
	sum256 := sha256.Sum256(binary)
	sum1 := sha1.Sum(binary)
	platform := p.OS + "/" + p.Architecture

	ids := spdxIDs{}
	version := bi.Main.Version
	if version == "" || version == "(devel)" {
		version = meta.Version
	}
	download := noAssertion
	if strings.HasPrefix(meta.Source, "https://") && meta.Revision != "" {
		download = "git+" + meta.Source + "@" + meta.Revision
	}
	mainPkg := spdxPackage{
		SPDXID:                ids.next("Package-" + bi.Main.Path),
		Name:                  bi.Main.Path,
		VersionInfo:           version,
		PrimaryPackagePurpose: "APPLICATION",
		DownloadLocation:      download,
		LicenseConcluded:      noAssertion,
		LicenseDeclared:       "Apache-2.0",
		CopyrightText:         noAssertion,
		Comment:               fmt.Sprintf("%s, the manager, built for %s: %s", bi.Path, platform, settings(bi)),
		ExternalRefs:          []spdxExternalRef{purl(bi.Main.Path, version)},
	}
	stdlib := spdxPackage{
		SPDXID:                ids.next("Package-stdlib"),
		Name:                  "stdlib",
		VersionInfo:           bi.GoVersion,
		PrimaryPackagePurpose: "LIBRARY",
		DownloadLocation:      noAssertion,
		LicenseConcluded:      noAssertion,
		LicenseDeclared:       "BSD-3-Clause",
		CopyrightText:         noAssertion,
		Comment:               "the Go standard library and runtime of the toolchain that built the manager",
		ExternalRefs:          []spdxExternalRef{purl("stdlib", strings.TrimPrefix(bi.GoVersion, "go"))},
	}
	file := spdxFile{
		SPDXID:   ids.next("File-manager"),
		FileName: entrypoint,
		Checksums: []spdxChecksum{
			{Algorithm: "SHA1", ChecksumValue: hex.EncodeToString(sum1[:])},
			{Algorithm: "SHA256", ChecksumValue: hex.EncodeToString(sum256[:])},
		},
		LicenseConcluded: noAssertion,
		CopyrightText:    noAssertion,
	}
	doc := spdxDocument{
		SPDXVersion: "SPDX-2.3",
		DataLicense: "CC0-1.0",
		SPDXID:      "SPDXRef-DOCUMENT",
		Name:        fmt.Sprintf("platform-operator manager %s %s", meta.Version, platform),
		DocumentNamespace: fmt.Sprintf("%s/spdx/manager/%s/%s-%s/%x", meta.Source, url.PathEscape(meta.Version),
			p.OS, p.Architecture, sum256),
		CreationInfo: spdxCreationInfo{
			Created:  meta.Created.UTC().Truncate(time.Second).Format(time.RFC3339),
			Creators: []string{"Tool: platform-operator-hack-image", "Organization: The platform-operator Authors"},
		},
		Packages: []spdxPackage{mainPkg, stdlib},
		Files:    []spdxFile{file},
		Relationships: []spdxRelationship{
			{"SPDXRef-DOCUMENT", "DESCRIBES", mainPkg.SPDXID},
			{mainPkg.SPDXID, "CONTAINS", file.SPDXID},
			{file.SPDXID, "GENERATED_FROM", mainPkg.SPDXID},
			{mainPkg.SPDXID, "DEPENDS_ON", stdlib.SPDXID},
		},
	}
	for _, m := range bi.Deps {
		pkg := modulePackage(ids.next("Package-"+m.Path), m)
		doc.Packages = append(doc.Packages, pkg)
		doc.Relationships = append(doc.Relationships, spdxRelationship{mainPkg.SPDXID, "DEPENDS_ON", pkg.SPDXID})
	}
	if ca != nil {
		pkg := modulePackage(ids.next("Package-"+ca.Path), ca)
		pkg.Comment = "/" + caBundlePath + ": the roots of this module's bundle (the Mozilla NSS trust store) " +
			"that carry no distrust-after constraint"
		doc.Packages = append(doc.Packages, pkg)
		doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", pkg.SPDXID})
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// modulePackage is the SPDX package of a Go module: its version and, as a
// SHA256 checksum, the go.sum hash (h1: is the SHA-256 of the module's file
// list, as syft reports it too). A replaced module is reported as what was
// built: the replacement's version and hash.
func modulePackage(id string, m *debug.Module) spdxPackage {
	built, comment := m, ""
	if m.Replace != nil {
		built = m.Replace
		comment = fmt.Sprintf("replaced by %s %s", m.Replace.Path, m.Replace.Version)
	}
	pkg := spdxPackage{
		SPDXID:                id,
		Name:                  m.Path,
		VersionInfo:           built.Version,
		PrimaryPackagePurpose: "LIBRARY",
		DownloadLocation:      noAssertion,
		LicenseConcluded:      noAssertion,
		LicenseDeclared:       noAssertion,
		CopyrightText:         noAssertion,
		Comment:               comment,
		ExternalRefs:          []spdxExternalRef{purl(m.Path, built.Version)},
	}
	if sum, ok := h1Hex(built.Sum); ok {
		pkg.Checksums = []spdxChecksum{{Algorithm: "SHA256", ChecksumValue: sum}}
	}
	return pkg
}

// h1Hex is the hexadecimal SHA-256 of a go.sum "h1:" hash.
func h1Hex(sum string) (string, bool) {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != sha256.Size {
		return "", false
	}
	return hex.EncodeToString(raw), true
}

// settings are the build settings that say how the binary was made.
func settings(bi *debug.BuildInfo) string {
	var s []string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "-trimpath", "-ldflags", "CGO_ENABLED", "GOOS", "GOARCH", "GOAMD64", "GOARM64",
			"vcs.revision", "vcs.time", "vcs.modified":
			s = append(s, kv.Key+"="+kv.Value)
		}
	}
	return bi.GoVersion + " " + strings.Join(s, " ")
}

// purl is the package URL of a Go module (or of stdlib).
func purl(path, version string) spdxExternalRef {
	return spdxExternalRef{
		ReferenceCategory: "PACKAGE-MANAGER",
		ReferenceType:     "purl",
		ReferenceLocator:  "pkg:golang/" + path + "@" + version,
	}
}

// spdxIDs hands out SPDX identifiers (SPDXRef- and letters, digits, "." and
// "-"), unique within one document.
type spdxIDs map[string]bool

// spdxIDUnsafe are the characters an SPDX identifier may not hold.
var spdxIDUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// next is the identifier for name, suffixed with a number when another
// name mapped to it first.
func (ids spdxIDs) next(name string) string {
	base := "SPDXRef-" + spdxIDUnsafe.ReplaceAllString(name, "-")
	id := base
	for n := 2; ids[id]; n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	ids[id] = true
	return id
}

// sbomArtifact is sbom as an OCI 1.1 artifact manifest whose subject is
// subject: artifactType application/spdx+json, the empty config, one layer.
// A registry with the Referrers API lists it among subject's referrers.
func sbomArtifact(subject v1.Image, sbom []byte, created time.Time) (v1.Image, error) {
	sd, err := subject.Digest()
	if err != nil {
		return nil, err
	}
	ss, err := subject.Size()
	if err != nil {
		return nil, err
	}
	smt, err := subject.MediaType()
	if err != nil {
		return nil, err
	}
	blob := static.NewLayer(sbom, spdxMediaType)
	bd, err := blob.Digest()
	if err != nil {
		return nil, err
	}
	ed, _, err := v1.SHA256(bytes.NewReader(emptyJSON))
	if err != nil {
		return nil, err
	}
	manifest, err := json.Marshal(v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  spdxMediaType,
		Config: v1.Descriptor{
			MediaType: emptyMediaType, Digest: ed, Size: int64(len(emptyJSON)), Data: emptyJSON,
		},
		Layers: []v1.Descriptor{{
			MediaType: spdxMediaType, Digest: bd, Size: int64(len(sbom)),
			Annotations: map[string]string{annotationTitle: "manager.spdx.json"},
		}},
		Subject:     &v1.Descriptor{MediaType: smt, Digest: sd, Size: ss},
		Annotations: map[string]string{annotationCreated: created.UTC().Format(time.RFC3339)},
	})
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&artifact{manifest: manifest, blob: blob})
}

// artifact is the core of an OCI artifact image of one blob: go-containerregistry's
// mutate makes image configs, not the empty config an artifact has.
type artifact struct {
	manifest []byte
	blob     v1.Layer
}

// RawConfigFile is the empty config's content.
func (a *artifact) RawConfigFile() ([]byte, error) { return emptyJSON, nil }

// MediaType is the OCI manifest's.
func (a *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

// RawManifest is the artifact manifest.
func (a *artifact) RawManifest() ([]byte, error) { return a.manifest, nil }

// LayerByDigest returns the blob.
func (a *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if d, err := a.blob.Digest(); err != nil || d != h {
		return nil, fmt.Errorf("artifact has no blob %s", h)
	}
	return a.blob, nil
}
