// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"strings"
	"testing"
)

const crd = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        properties:
          spec:
            description: the spec
            properties:
              template:
                description: the template
                properties:
                  spec:
                    description: PodSpec is long
                    properties:
                      containers:
                        description: List of containers
                        items:
                          description: A container
                          type: object
                        type: array
                    required:
                    - containers
                    type: object
                type: object
            type: object
        type: object
`

func TestTrim_DropsDescriptionsBelowTheFieldAndKeepsItsOwn(t *testing.T) {
	out, changed, err := trim([]byte(crd), []string{"spec", "template"}, []string{"spec", "containers"})
	if err != nil || !changed {
		t.Fatalf("trim: changed %t, %v", changed, err)
	}
	got := string(out)
	for _, gone := range []string{"PodSpec is long", "List of containers", "A container", "required"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q is still there:\n%s", gone, got)
		}
	}
	for _, kept := range []string{"description: the template", "description: the spec", "type: array", "nullable: true"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q is gone:\n%s", kept, got)
		}
	}
	if !strings.HasPrefix(got, "---\napiVersion:") {
		t.Errorf("the document marker is gone:\n%s", got)
	}
}

func TestTrim_LeavesACRDWithoutTheFieldAsItIs(t *testing.T) {
	out, changed, err := trim([]byte(crd), []string{"spec", "other"}, nil)
	if err != nil || changed || string(out) != crd {
		t.Errorf("changed %t, err %v, output differs: %t", changed, err, string(out) != crd)
	}
}

func TestTrim_RefusesToMakeOptionalWhatIsNotRequired(t *testing.T) {
	if _, _, err := trim([]byte(crd), []string{"spec", "template"}, []string{"spec", "volumes"}); err == nil {
		t.Error("want an error for a field that is not required")
	}
}
