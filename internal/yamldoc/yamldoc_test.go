// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package yamldoc

import (
	"reflect"
	"strings"
	"testing"
)

func TestDecode_SplitsDocumentsAndSkipsEmptyOnes(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []map[string]any
	}{
		{name: "nothing", in: "", want: nil},
		{name: "one document", in: "kind: A\n", want: []map[string]any{{"kind": "A"}}},
		{
			name: "leading separator, empty and comment-only documents",
			in:   "---\nkind: A\n---\n---\n# only a comment\n---\nkind: B\nspec: {count: 1}\n",
			want: []map[string]any{{"kind": "A"}, {"kind": "B", "spec": map[string]any{"count": float64(1)}}},
		},
		{name: "JSON", in: `{"kind": "A"}`, want: []map[string]any{{"kind": "A"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decode = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestDecode_NamesTheDocumentThatIsNotYAML(t *testing.T) {
	_, err := Decode(strings.NewReader("kind: A\n---\n\n---\nkind: [\n"))
	if err == nil || !strings.Contains(err.Error(), "document 3") {
		t.Errorf("Decode error = %v, want one naming document 3", err)
	}
}

func TestEncode_RoundTripsThroughDecode(t *testing.T) {
	objs := []map[string]any{{"kind": "A", "metadata": map[string]any{"name": "a"}}, {"kind": "B"}}
	y, err := Encode(objs[0], objs[1])
	if err != nil {
		t.Fatal(err)
	}
	if want := "---\nkind: A\nmetadata:\n  name: a\n---\nkind: B\n"; string(y) != want {
		t.Errorf("Encode = %q, want %q", y, want)
	}
	back, err := Decode(strings.NewReader(string(y)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, objs) {
		t.Errorf("Decode(Encode(objs)) = %#v, want %#v", back, objs)
	}
}

func TestKind(t *testing.T) {
	for _, tc := range []struct {
		obj  map[string]any
		want string
	}{
		{map[string]any{"kind": "Deployment"}, "Deployment"},
		{map[string]any{}, ""},
		{map[string]any{"kind": 3}, ""},
	} {
		if got := Kind(tc.obj); got != tc.want {
			t.Errorf("Kind(%v) = %q, want %q", tc.obj, got, tc.want)
		}
	}
}
