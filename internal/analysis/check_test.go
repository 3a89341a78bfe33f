// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"strings"
	"testing"
)

func TestCheckQuery(t *testing.T) {
	for _, c := range []struct {
		query   string
		errText string // "" for a good query
	}{
		{`sum(rate(checkout_errors_total{namespace="{{namespace}}",track="{{track}}"}[{{interval}}]))`, ""},
		{`histogram_quantile(0.9, sum by (le) (rate(x_bucket{app="{{ name }}"}[5m])))`, ""},
		{`1`, "reads no metric"},
		{`scalar(up)`, ""},
		{`sum(rate(x[1m])`, "not valid PromQL: 1:16: parse error: unclosed left parenthesis"},
		{`up{pod="{{pod}}"}`, "unknown template variable {{pod}}"},
		{`x[5m]`, "returns a range vector; want an instant vector or a scalar"},
		{`rate(x[{{interval}}])[5m:1m]`, "returns a range vector"},
		{`"hello"`, "returns a string"},
		{``, "not valid PromQL"},
	} {
		err := CheckQuery(c.query, Scope{}, "default")
		switch {
		case c.errText == "" && err != nil:
			t.Errorf("CheckQuery(%q) = %v, want nil", c.query, err)
		case c.errText != "" && (err == nil || !strings.Contains(err.Error(), c.errText)):
			t.Errorf("CheckQuery(%q) = %v, want an error containing %q", c.query, err, c.errText)
		case err != nil && strings.ContainsAny(err.Error(), "\n"):
			t.Errorf("CheckQuery(%q) error spans lines: %q", c.query, err)
		}
	}
}

func TestCheckCondition(t *testing.T) {
	// Ten elements, five deep: 100000 evaluations of the innermost test.
	const ten = "[0,1,2,3,4,5,6,7,8,9]"
	expensive := ten + ".all(a, " + ten + ".all(b, " + ten + ".all(c, " + ten + ".all(d, " + ten +
		".all(e, result > 0)))))"
	for _, c := range []struct {
		expr    string
		errText string // "" for a good condition
	}{
		{"result < 0.05", ""},
		{"result >= 0 && result <= 1", ""},
		{"result < 1", ""},
		{"result == 0.0 || result > 99.9", ""},
		{"result * 100.0 < 5", ""},
		{"result == 0", "applied to '(double, int)' (write whole numbers with a decimal point"},
		{"result <", "not a valid CEL condition over result (a double): 1:9: Syntax error"},
		{"foo > 1", "1:1: undeclared reference to 'foo'"},
		{"result + 1.0", "has type double; want bool"},
		{"'pass'", "has type string; want bool"},
		{"", "is empty"},
		{expensive, "too expensive"},
	} {
		err := CheckCondition(c.expr)
		switch {
		case c.errText == "" && err != nil:
			t.Errorf("CheckCondition(%q) = %v, want nil", c.expr, err)
		case c.errText != "" && (err == nil || !strings.Contains(err.Error(), c.errText)):
			t.Errorf("CheckCondition(%q) = %v, want an error containing %q", c.expr, err, c.errText)
		case err != nil && strings.ContainsAny(err.Error(), "\n"):
			t.Errorf("CheckCondition(%q) error spans lines: %q", c.expr, err)
		}
	}
}

func TestCompileCondition_CompilesAnExpressionOnce(t *testing.T) {
	first, err := compileCondition("result < 0.25")
	if err != nil {
		t.Fatal(err)
	}
	again, err := compileCondition("result < 0.25")
	if err != nil {
		t.Fatal(err)
	}
	if first != again {
		t.Error("the same condition was compiled twice")
	}
	for range 2 {
		if _, err := compileCondition("result <"); err == nil || !strings.Contains(err.Error(), "not a valid CEL condition") {
			t.Errorf("want the syntax error each time, got %v", err)
		}
	}
}
