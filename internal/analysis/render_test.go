// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

func TestRender_FillsEveryVariable(t *testing.T) {
	v := Vars{Namespace: "prod", Name: "shop", Version: "v1.2.4", Revision: "7c9d", Track: "canary",
		Interval: 90 * time.Second}
	for _, c := range []struct{ query, want string }{
		{`up{namespace="{{namespace}}",app="{{name}}"}`, `up{namespace="prod",app="shop"}`},
		{`x{version="{{version}}",revision="{{revision}}",track="{{track}}"}`,
			`x{version="v1.2.4",revision="7c9d",track="canary"}`},
		{`rate(x[{{interval}}])`, `rate(x[90s])`},
		{`x{app="{{ name }}",t="{{  track}}"}[{{interval }}]`, `x{app="shop",t="canary"}[90s]`},
		{`{{name}}-{{name}}`, `shop-shop`},
		{`sum(up{job="x"}) / 2`, `sum(up{job="x"}) / 2`},
	} {
		got, err := Render(c.query, v)
		if err != nil || got != c.want {
			t.Errorf("Render(%q) = %q, %v; want %q", c.query, got, err, c.want)
		}
	}
}

func TestRender_IntervalInWholeSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "60s", 90*time.Second + 500*time.Millisecond: "90s", time.Hour: "3600s",
	} {
		if got, err := Render("{{interval}}", Vars{Interval: d}); err != nil || got != want {
			t.Errorf("interval %s: %q, %v; want %q", d, got, err, want)
		}
	}
}

func TestRender_EscapesValuesForAPromQLString(t *testing.T) {
	v := Vars{Name: `a"b\c`, Version: "x\ny"}
	got, err := Render(`up{app="{{name}}",version="{{version}}"}`, v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `up{app="a\"b\\c",version="x\ny"}`; got != want {
		t.Errorf("Render = %s, want %s", got, want)
	}
	// And what it made parses, with the values intact.
	expr, err := promQL.ParseExpr(got)
	if err != nil {
		t.Fatalf("escaped query does not parse: %v", err)
	}
	values := map[string]string{}
	for _, m := range expr.(*parser.VectorSelector).LabelMatchers {
		values[m.Name] = m.Value
	}
	if values["app"] != v.Name || values["version"] != v.Version {
		t.Errorf("parsed values %q, want app %q and version %q", values, v.Name, v.Version)
	}
}

func TestRender_UnknownVariableIsNamedWithTheKnownOnes(t *testing.T) {
	for _, c := range []struct{ query, named string }{
		{`up{pod="{{pod}}"}`, "{{pod}}"},
		{`up{app="{{ Name }}"}`, "{{ Name }}"},
		{`up{x="{{}}"}`, "{{}}"},
		{`up{a="{{name}}",b="{{nam}}",c="{{other}}"}`, "{{nam}}"},
	} {
		_, err := Render(c.query, Vars{})
		if err == nil {
			t.Errorf("Render(%q): no error", c.query)
			continue
		}
		want := "unknown template variable " + c.named +
			"; the known ones are {{namespace}}, {{name}}, {{version}}, {{revision}}, {{track}}, {{interval}}"
		if err.Error() != want {
			t.Errorf("Render(%q) error %q, want %q", c.query, err, want)
		}
	}
}
