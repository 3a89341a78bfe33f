// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package namespaces

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

func TestParse_ListsAreTrimmedSortedAndDeduplicated(t *testing.T) {
	for _, tc := range []struct {
		in        string
		wantNames []string
		serves    map[string]bool
	}{
		{"", nil, map[string]bool{"team-a": true, "": true}},
		{" , ,", nil, map[string]bool{"anything": true}},
		{"team-b, team-a,team-b", []string{"team-a", "team-b"},
			map[string]bool{"team-a": true, "team-b": true, "team-c": false, "": false}},
	} {
		s, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if diff := cmp.Diff(tc.wantNames, s.Names()); diff != "" {
			t.Errorf("Parse(%q) names (-want +got):\n%s", tc.in, diff)
		}
		for ns, want := range tc.serves {
			if got := s.Serves(ns); got != want {
				t.Errorf("Parse(%q).Serves(%q) = %v, want %v", tc.in, ns, got, want)
			}
		}
	}
}

func TestParse_AnInvalidNameIsRefusedByName(t *testing.T) {
	for _, in := range []string{"team-a,Team_B", "a/b", strings.Repeat("x", 64)} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		} else if !strings.Contains(err.Error(), "namespace ") {
			t.Errorf("Parse(%q) = %v, want it to name the namespace", in, err)
		}
	}
}

func TestCacheNamespaces_OnlyTheServedNamespacesAreCached(t *testing.T) {
	all, _ := Parse("")
	if got := all.CacheNamespaces(); got != nil {
		t.Errorf("every namespace: cache namespaces %v, want nil (the whole cluster)", got)
	}
	some, _ := Parse("team-b,team-a")
	want := map[string]cache.Config{"team-a": {}, "team-b": {}}
	if diff := cmp.Diff(want, some.CacheNamespaces()); diff != "" {
		t.Errorf("cache namespaces (-want +got):\n%s", diff)
	}
	if some.String() != "team-a,team-b" {
		t.Errorf("String() = %q", some.String())
	}
}
