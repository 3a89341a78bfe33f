// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Vars are the template variables of one track of one application.
type Vars struct {
	Namespace, Name, Version, Revision, Track string
	Interval                                  time.Duration // rendered as whole seconds: "60s"
}

// variables are the names a query may use, in the order error messages list
// them.
var variables = []string{"namespace", "name", "version", "revision", "track", "interval"}

// templateRef matches {{name}} with optional spaces inside the braces. It
// matches any run of characters without braces, not only known names, so a
// misspelt variable is reported instead of being sent to Prometheus, where
// it would surface as a confusing parse error.
var templateRef = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// promQLEscaper escapes a value for a PromQL double-quoted string. Newlines
// are escaped as well: a raw one would end the string and make a query
// that cannot parse.
var promQLEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)

// value is the rendering of variable name, and whether name is known.
func (v Vars) value(name string) (string, bool) {
	switch name {
	case "namespace":
		return v.Namespace, true
	case "name":
		return v.Name, true
	case "version":
		return v.Version, true
	case "revision":
		return v.Revision, true
	case "track":
		return v.Track, true
	case "interval":
		return window(v), true
	}
	return "", false
}

// Render fills {{namespace}} {{name}} {{version}} {{revision}} {{track}} {{interval}}
// (spaces inside the braces allowed: {{ name }}) in a query. Values are escaped for a
// PromQL double-quoted string (backslash and double quote). An unknown variable is an
// error naming it and listing the known ones.
func Render(query string, v Vars) (string, error) {
	var unknown string
	out := templateRef.ReplaceAllStringFunc(query, func(ref string) string {
		name := templateRef.FindStringSubmatch(ref)[1]
		val, ok := v.value(name)
		if !ok {
			if unknown == "" {
				unknown = ref
			}
			return ref
		}
		return promQLEscaper.Replace(val)
	})
	if unknown != "" {
		return "", fmt.Errorf("unknown template variable %s; the known ones are {{%s}}",
			unknown, strings.Join(variables, "}}, {{"))
	}
	return out, nil
}
