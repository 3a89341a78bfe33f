// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	olmcrds "github.com/operator-framework/api/crds"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// selectDescriptor, bare, stands for one select:<value> x-descriptor per
// value of the field's enum.
const selectDescriptor = "urn:alm:descriptor:com.tectonic.ui:select"

// ownedCRDs completes the base CSV's owned CRDs from the rendered CRDs:
// every CRD needs an entry, every entry a CRD version that is served; the
// kind, a missing description and the descriptors' missing descriptions
// come from the schema, and every descriptor path must name a field of it.
func ownedCRDs(base []v1alpha1.CRDDescription, objs []*unstructured.Unstructured) ([]v1alpha1.CRDDescription, error) {
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	names := make([]string, 0, len(objs))
	for _, o := range objs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decodeStrict(o, crd); err != nil {
			return nil, err
		}
		crds[crd.Name] = crd
		names = append(names, crd.Name)
	}
	owned := make([]v1alpha1.CRDDescription, 0, len(base))
	for _, b := range base {
		crd := crds[b.Name]
		if crd == nil {
			return nil, fmt.Errorf("%s: owned CRD %s is not rendered by %s", baseCSV, b.Name, installDir)
		}
		d, err := describeCRD(b, crd)
		if err != nil {
			return nil, fmt.Errorf("%s: owned CRD %s %s: %w", baseCSV, b.Name, b.Version, err)
		}
		owned = append(owned, d)
	}
	for _, name := range names {
		if !slices.ContainsFunc(owned, func(d v1alpha1.CRDDescription) bool { return d.Name == name }) {
			return nil, fmt.Errorf("%s: CRD %s has no entry in spec.customresourcedefinitions.owned", baseCSV, name)
		}
	}
	return owned, nil
}

// describeCRD completes one owned-CRD entry from its CRD.
func describeCRD(
	d v1alpha1.CRDDescription, crd *apiextensionsv1.CustomResourceDefinition,
) (v1alpha1.CRDDescription, error) {
	i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
		return v.Name == d.Version && v.Served
	})
	if i < 0 {
		return d, fmt.Errorf("the CRD serves no version %q", d.Version)
	}
	if d.Kind == "" {
		d.Kind = crd.Spec.Names.Kind
	} else if d.Kind != crd.Spec.Names.Kind {
		return d, fmt.Errorf("kind %s, but the CRD's is %s", d.Kind, crd.Spec.Names.Kind)
	}
	v := crd.Spec.Versions[i]
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return d, fmt.Errorf("the CRD has no schema for %s", d.Version)
	}
	root := v.Schema.OpenAPIV3Schema
	if d.Description == "" {
		d.Description = firstSentence(root.Description)
	}
	var err error
	if d.SpecDescriptors, err = describeFields(d.SpecDescriptors, root, "spec"); err != nil {
		return d, err
	}
	if d.StatusDescriptors, err = describeFields(d.StatusDescriptors, root, "status"); err != nil {
		return d, err
	}
	return d, nil
}

// describer is what spec and status descriptors have in common.
type describer interface {
	v1alpha1.SpecDescriptor | v1alpha1.StatusDescriptor
}

// describeFields completes the descriptors of one part (spec or status) of
// a schema. Spec and status descriptors are distinct types of the same
// shape, hence the round trip through a StatusDescriptor.
func describeFields[D describer](ds []D, root *apiextensionsv1.JSONSchemaProps, part string) ([]D, error) {
	out := make([]D, 0, len(ds))
	for _, d := range ds {
		s := v1alpha1.StatusDescriptor(d)
		field, err := schemaAt(root, part+"."+s.Path)
		if err != nil {
			return nil, err
		}
		if s.Description == "" {
			s.Description = firstSentence(field.Description)
		}
		var xs []string
		for _, x := range s.XDescriptors {
			if x != selectDescriptor {
				xs = append(xs, x)
				continue
			}
			if len(field.Enum) == 0 {
				return nil, fmt.Errorf("%s.%s: a select descriptor needs an enum", part, s.Path)
			}
			for _, e := range field.Enum {
				xs = append(xs, selectDescriptor+":"+strings.Trim(string(e.Raw), `"`))
			}
		}
		s.XDescriptors = xs
		out = append(out, D(s))
	}
	return out, nil
}

// indexSuffix is a descriptor path segment's list index, e.g. steps[0].
var indexSuffix = regexp.MustCompile(`\[\d+\]$`)

// schemaAt returns the schema of a dotted field path, a segment with a list
// index (steps[0]) stepping into the list's items.
func schemaAt(root *apiextensionsv1.JSONSchemaProps, path string) (*apiextensionsv1.JSONSchemaProps, error) {
	s := root
	for seg := range strings.SplitSeq(path, ".") {
		name := indexSuffix.ReplaceAllString(seg, "")
		p, ok := s.Properties[name]
		if !ok {
			return nil, fmt.Errorf("descriptor path %s: the schema has no field %s", path, name)
		}
		s = &p
		if name != seg {
			if s.Items == nil || s.Items.Schema == nil {
				return nil, fmt.Errorf("descriptor path %s: %s is not a list", path, name)
			}
			s = s.Items.Schema
		}
	}
	return s, nil
}

// firstSentence is the first sentence of a schema description, which
// controller-gen takes from the Go doc comment: up to the first period that
// ends a sentence (not one of "e.g." or "i.e."), with the line breaks
// joined.
func firstSentence(desc string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(desc), "\n\n")
	text := strings.Join(strings.Fields(para), " ")
	for i := 0; i < len(text); i++ {
		if text[i] != '.' || (i+1 < len(text) && text[i+1] != ' ') {
			continue
		}
		if before := text[:i+1]; strings.HasSuffix(before, "e.g.") || strings.HasSuffix(before, "i.e.") {
			continue
		}
		return text[:i+1]
	}
	return text
}

// printOLMCRDs writes OLM's CRDs, as the operator-framework/api module
// embeds them, as one YAML stream.
func printOLMCRDs(w io.Writer) error {
	names := olmcrds.AssetNames()
	slices.Sort(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		data, err := olmcrds.Asset(name)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s\n", strings.TrimRight(string(data), "\n")); err != nil {
			return err
		}
	}
	return nil
}
