// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scope is where a listing looks, as kubectl get takes it: the namespace
// of -n (or the context's), or every namespace with -A, and the objects
// that the label selector of -l matches.
type Scope struct {
	// Namespace is the namespace to list in unless AllNamespaces.
	Namespace string
	// AllNamespaces is -A.
	AllNamespaces bool
	// Selector is -l, in kubectl's syntax; empty selects everything.
	Selector string
}

// Namespaces are the list options of the namespaces alone, without the
// selector: for the objects that belong to the listed ones (a task's
// runs), whose labels the selector was not written for.
func (s Scope) Namespaces() []client.ListOption {
	if s.AllNamespaces {
		return nil
	}
	return []client.ListOption{client.InNamespace(s.Namespace)}
}

// ListOptions are the list options of the whole scope. A selector that does
// not parse is an error that quotes it, before any request.
func (s Scope) ListOptions() ([]client.ListOption, error) {
	opts := s.Namespaces()
	if s.Selector != "" {
		sel, err := labels.Parse(s.Selector)
		if err != nil {
			return nil, fmt.Errorf("invalid selector %q: %w", s.Selector, err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	return opts, nil
}
