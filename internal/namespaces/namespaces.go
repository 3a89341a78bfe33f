// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package namespaces holds the namespaces a manager serves
// (--watch-namespaces): its cache lists and watches only those, and its
// webhooks judge only objects in them, so that an install with Roles in a
// few namespaces, instead of a ClusterRole, neither needs nor uses rights
// elsewhere.
package namespaces

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// Set is the namespaces a manager serves; the zero Set serves every one.
type Set struct {
	names []string
}

// Parse reads a comma-separated list of namespace names, as
// --watch-namespaces and OLM's olm.targetNamespaces annotation give it.
// Spaces around names and empty items are ignored, so "" is every
// namespace; a name that is not a valid namespace name is an error that
// names it.
func Parse(list string) (Set, error) {
	var s Set
	for item := range strings.SplitSeq(list, ",") {
		name := strings.TrimSpace(item)
		if name == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return Set{}, fmt.Errorf("namespace %q: %s", name, strings.Join(errs, "; "))
		}
		s.names = append(s.names, name)
	}
	slices.Sort(s.names)
	s.names = slices.Compact(s.names)
	return s, nil
}

// All reports whether the set serves every namespace.
func (s Set) All() bool { return len(s.names) == 0 }

// Serves reports whether an object in namespace ns is the manager's to
// reconcile and judge.
func (s Set) Serves(ns string) bool {
	return s.All() || slices.Contains(s.names, ns)
}

// Names returns the namespaces served, sorted; nil for every namespace.
func (s Set) Names() []string { return slices.Clone(s.names) }

// String is the set as --watch-namespaces takes it.
func (s Set) String() string { return strings.Join(s.names, ",") }

// CacheNamespaces is cache.Options.DefaultNamespaces for the set: nil (the
// whole cluster) for every namespace, else one entry per namespace, so
// every informer lists and watches only those.
func (s Set) CacheNamespaces() map[string]cache.Config {
	if s.All() {
		return nil
	}
	m := make(map[string]cache.Config, len(s.names))
	for _, n := range s.names {
		m[n] = cache.Config{}
	}
	return m
}
