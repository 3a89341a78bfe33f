// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestScope_ListOptionsAreNamespaceAndSelector(t *testing.T) {
	for _, tt := range []struct {
		name          string
		scope         Scope
		wantNamespace string
		wantSelector  string
		wantScoped    string
	}{
		{"the namespace", Scope{Namespace: "team"}, "team", "", "team"},
		{"every namespace", Scope{Namespace: "team", AllNamespaces: true}, "", "", ""},
		{"a selector in the namespace", Scope{Namespace: "team", Selector: "app=web,tier!=db"}, "team", "app=web,tier!=db", "team"},
		{"a selector everywhere", Scope{Namespace: "team", AllNamespaces: true, Selector: "app in (a,b)"}, "", "app in (a,b)", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := tt.scope.ListOptions()
			if err != nil {
				t.Fatal(err)
			}
			got := (&client.ListOptions{}).ApplyOptions(opts)
			selector := ""
			if got.LabelSelector != nil {
				selector = got.LabelSelector.String()
			}
			if got.Namespace != tt.wantNamespace || selector != tt.wantSelector {
				t.Errorf("namespace %q, selector %q; want %q, %q", got.Namespace, selector, tt.wantNamespace, tt.wantSelector)
			}
			// The namespace part alone carries no selector.
			scoped := (&client.ListOptions{}).ApplyOptions(tt.scope.Namespaces())
			if scoped.Namespace != tt.wantScoped || scoped.LabelSelector != nil {
				t.Errorf("Namespaces: namespace %q, selector %v; want %q and none", scoped.Namespace, scoped.LabelSelector, tt.wantScoped)
			}
		})
	}
}

func TestScope_ASelectorThatDoesNotParseIsAnError(t *testing.T) {
	_, err := Scope{Namespace: "team", Selector: "app in (a"}.ListOptions()
	if err == nil || !strings.Contains(err.Error(), `invalid selector "app in (a"`) {
		t.Errorf("error %v, want one that quotes the selector", err)
	}
}
