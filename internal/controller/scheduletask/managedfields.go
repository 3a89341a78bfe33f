// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// implant is what one other field manager added to a CronJob's job template.
type implant struct {
	// manager is the field manager's name, as managedFields give it.
	manager string
	// fields are the outermost fields it owns that the operator does not,
	// as paths from the CronJob's root.
	fields []string
}

// fieldsTree is a managedFields entry's FieldsV1 as a tree of maps: keys
// "f:<field>", "k:<list key>", "v:<set value>", "i:<index>", and "." for a
// node owned as a whole.
type fieldsTree = map[string]any

// parseFields decodes an entry's FieldsV1.
func parseFields(e metav1.ManagedFieldsEntry) (fieldsTree, error) {
	t := fieldsTree{}
	if e.FieldsV1 == nil {
		return t, nil
	}
	if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &t); err != nil {
		return nil, fmt.Errorf("fields of manager %s: %w", e.Manager, err)
	}
	return t, nil
}

// child returns t's subtree at key, nil when absent.
func child(t fieldsTree, key string) fieldsTree {
	c, _ := t[key].(map[string]any)
	return c
}

// dropForeignTemplateFields splits a CronJob's managedFields: it returns what
// each other manager owns under spec.jobTemplate that the operator does not,
// and the entries with those managers' claims on the job template removed
// (an entry left with nothing is dropped).
func dropForeignTemplateFields(entries []metav1.ManagedFieldsEntry) ([]implant, []metav1.ManagedFieldsEntry, error) {
	ours := fieldsTree{}
	for _, e := range entries {
		if e.Manager != FieldManager || e.Subresource != "" {
			continue
		}
		t, err := parseFields(e)
		if err != nil {
			return nil, nil, err
		}
		mergeFields(ours, child(child(t, "f:spec"), "f:jobTemplate"))
	}
	var implants []implant
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for _, e := range entries {
		if !foreignTemplateEntry(e) {
			out = append(out, e)
			continue
		}
		t, err := parseFields(e)
		if err != nil {
			return nil, nil, err
		}
		spec := child(t, "f:spec")
		var fields []string
		implantedPaths(child(spec, "f:jobTemplate"), ours, "spec.jobTemplate", &fields)
		if len(fields) > 0 {
			slices.Sort(fields)
			implants = append(implants, implant{manager: e.Manager, fields: fields})
		}
		delete(spec, "f:jobTemplate")
		if len(spec) == 0 || len(spec) == 1 && spec["."] != nil {
			delete(t, "f:spec")
		}
		if len(t) == 0 {
			continue
		}
		raw, err := json.Marshal(t)
		if err != nil {
			return nil, nil, err
		}
		e.FieldsV1 = metav1.NewFieldsV1(string(raw))
		out = append(out, e)
	}
	return implants, out, nil
}

// mergeFields adds the nodes of src to dst.
func mergeFields(dst, src fieldsTree) {
	for k, v := range src {
		sv, ok := v.(map[string]any)
		if !ok {
			continue
		}
		dv, ok := dst[k].(map[string]any)
		if !ok {
			dv = fieldsTree{}
			dst[k] = dv
		}
		mergeFields(dv, sv)
	}
}

// implantedPaths appends to out the path of each outermost node of theirs
// that ours does not hold. Every node of a FieldsV1 tree is there because it
// or something below it is owned, so a node ours lacks is a field only they
// own; a node both hold is looked into.
func implantedPaths(theirs, ours fieldsTree, prefix string, out *[]string) {
	for k, v := range theirs {
		if k == "." {
			continue
		}
		p := prefix + pathElement(k)
		if _, held := ours[k]; !held {
			*out = append(*out, p)
			continue
		}
		sub, _ := v.(map[string]any)
		implantedPaths(sub, child(ours, k), p, out)
	}
}

// pathElement renders a FieldsV1 key as a path step.
func pathElement(k string) string {
	switch {
	case strings.HasPrefix(k, "f:"):
		return "." + k[2:]
	case strings.HasPrefix(k, "k:"), strings.HasPrefix(k, "i:"):
		return "[" + k[2:] + "]"
	case strings.HasPrefix(k, "v:"):
		return "[=" + k[2:] + "]"
	}
	return "." + k
}

// implantsString names each manager and its fields, for an event and a log.
func implantsString(implants []implant) string {
	parts := make([]string, 0, len(implants))
	for _, im := range implants {
		parts = append(parts, fmt.Sprintf("%s (%s)", im.manager, strings.Join(im.fields, ", ")))
	}
	return strings.Join(parts, "; ")
}
