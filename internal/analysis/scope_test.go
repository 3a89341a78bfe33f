// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"errors"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// TestScope_EnforceConfinesEverySelector: whatever the query's shape, every
// selector Prometheus evaluates, also inside subqueries, functions,
// aggregations and both sides of an operator, carries namespace="attacker"
// once the operator has confined it.
func TestScope_EnforceConfinesEverySelector(t *testing.T) {
	for _, q := range []string{
		`sum(rate(http_requests_total[1m]))`,
		`http_requests_total`,
		`sum by (code) (rate(http_requests_total{code=~"5.."}[5m])) / ignoring(code) group_left sum(rate(http_requests_total[5m]))`,
		`max_over_time(sum(rate(x[1m]))[30m:1m])`,
		`histogram_quantile(0.9, sum by (le) (rate(h_bucket{job="a"}[5m])))`,
		`label_replace(up, "namespace", "default", "", "")`,
		`absent(up{job="a"}) + count({__name__=~"kube_.+", job="ksm"}) * on() group_left vector(1)`,
		`sum(rate(x[5m] offset 10m)) or sum(rate(y{namespace="attacker"}[5m]))`,
		`scalar(sum(up)) > bool 1`,
		`topk(1, sum by (namespace) (up))`,
		`{__name__="up", job="a"}`,
	} {
		out, err := Scope{}.Enforce(q, "attacker")
		if err != nil {
			t.Errorf("Enforce(%s): %v", q, err)
			continue
		}
		expr, err := promQL.ParseExpr(out)
		if err != nil {
			t.Errorf("Enforce(%s) = %s, which does not parse: %v", q, out, err)
			continue
		}
		selectors := 0
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			selectors++
			var confined bool
			for _, m := range vs.LabelMatchers {
				if m.Name == "namespace" {
					confined = m.Type == labels.MatchEqual && m.Value == "attacker"
					if !confined {
						break
					}
				}
			}
			if !confined {
				t.Errorf("Enforce(%s): selector %s in %s is not confined to namespace attacker", q, vs, out)
			}
			return nil
		})
		if selectors == 0 {
			t.Errorf("Enforce(%s) = %s: no selector found, the check above checked nothing", q, out)
		}
	}
}

// TestScope_TheAttackOfTheIssueIsRefused: a criterion of namespace attacker
// that names namespace default is refused at admission, and never sent if it
// was admitted before the rule: the measurement is Invalid.
func TestScope_TheAttackOfTheIssueIsRefused(t *testing.T) {
	const attack = `sum(rate(http_requests_total{namespace="default"}[1m]))`
	err := CheckQuery(attack, Scope{}, "attacker")
	if err == nil || !strings.Contains(err.Error(), `may only read series of namespace "attacker"`) {
		t.Errorf("CheckQuery(%s) in attacker = %v, want it refused as reading another namespace", attack, err)
	}
	if out, err := (Scope{}).Enforce(attack, "attacker"); err == nil {
		t.Errorf("Enforce(%s) = %s, want it refused", attack, out)
	}
}

func TestScope_Check(t *testing.T) {
	scope := Scope{LabelFor: map[string]LabelFor{"envoy_rq_total": {Label: "route_namespace", Source: "gateway-system"}}, MaxRange: time.Hour}
	for _, c := range []struct {
		query, errText string
	}{
		{`sum(rate(x{namespace="shop"}[5m]))`, ""},
		{`sum(rate(x{namespace="{{namespace}}"}[{{interval}}]))`, ""},
		{`sum(rate(x[1h]))`, ""},
		{`{__name__="up",job="a"}`, ""},
		{`{job="a"}`, "reads no metric"},
		{`vector(1)`, "reads no metric"},
		{`sum(rate(x{namespace="default"}[5m]))`, `may only read series of namespace "shop": the matcher namespace="default" reads others`},
		{`sum(rate(x{namespace=~"shop|default"}[5m]))`, `may only read series of namespace "shop"`},
		{`sum(rate(x{namespace=~"shop"}[5m]))`, `may only read series of namespace "shop"`},
		{`sum(rate(x{namespace!="shop"}[5m]))`, `may only read series of namespace "shop"`},
		{`sum(rate(x[5m])) / sum(rate(x{namespace!~"kube-.*"}[5m]))`, `may only read series of namespace "shop"`},
		{`max_over_time(x{namespace="other"}[10m:1m])`, `may only read series of namespace "shop"`},
		// The gateway's metric keeps the tenant in route_namespace: that is
		// the label checked, and namespace is only another label there.
		{`sum(rate(envoy_rq_total{route_namespace="other"}[5m]))`, `may only read series of namespace "shop": the matcher route_namespace="other"`},
		{`sum(rate(envoy_rq_total{namespace="gateway-system",route_namespace="shop"}[5m]))`, ""},
		// Only the gateway's series of its metric are believed.
		{`sum(rate(envoy_rq_total{namespace="shop"}[5m]))`, `the matcher namespace="shop" reads series the platform does not vouch for`},
		{`sum(rate(envoy_rq_total{namespace=~".+"}[5m]))`, `does not vouch for`},
		{`sum(rate(x[2h]))`, "a range of 2h is longer than the 1h the operator allows"},
		{`max_over_time(sum(rate(x[1m]))[1d:1m])`, "a subquery window of 1d is longer than the 1h"},
		{`count({__name__=~".+"})`, "names no metric and matches only by regular expressions"},
		{`count({job=~".+"})`, "names no metric and matches only by regular expressions"},
		// The cost of one evaluation is bounded.
		{`max_over_time(sum(rate(x[1m]))[1h:1s])`, ""},
		{`max_over_time(sum(rate(x[1m]))[1h:])`, ""},
		{`max_over_time(sum(rate(x[1m]))[1h:500ms])`, "a subquery step of 500ms is shorter than the 1s the operator allows (--analysis-min-step)"},
		{`max_over_time(x[1h:100ms])`, "a subquery step of 100ms is shorter"},
		{`max_over_time(quantile_over_time(0.5, x[1h:1s])[1h:1s])`, "is inside another subquery, which multiplies their points"},
		{`sum(rate(x[5m] offset 30m))`, ""},
		{`sum(rate(x[5m] offset 2h))`, "an offset of 2h is longer than the 1h the operator allows"},
		{`sum(rate(x[5m] offset -2h))`, "an offset of 2h is longer"},
		{`x offset 1d`, "an offset of 1d is longer"},
		{`max_over_time(x[10m:1m] offset 1d)`, "an offset of 1d is longer"},
		{`sum(rate(x[5m] @ 1609746000))`, "reads at a fixed time (@ 1609746000)"},
		{`max_over_time(x[10m:1m] @ 1609746000)`, "reads at a fixed time"},
		{`sum(rate(x[5m] @ end()))`, ""},
	} {
		err := CheckQuery(c.query, scope, "shop")
		switch {
		case c.errText == "" && err != nil:
			t.Errorf("CheckQuery(%s) = %v, want nil", c.query, err)
		case c.errText != "" && (err == nil || !strings.Contains(err.Error(), c.errText)):
			t.Errorf("CheckQuery(%s) = %v, want an error containing %q", c.query, err, c.errText)
		}
	}
}

// TestScope_PointsOfASubqueryAreBounded: with a longer window allowed, a
// step at the bound can still ask for too many points.
func TestScope_PointsOfASubqueryAreBounded(t *testing.T) {
	scope := Scope{MaxRange: 24 * time.Hour, MinStep: time.Second}
	if err := CheckQuery(`max_over_time(x[3h:1s])`, scope, "shop"); err != nil {
		t.Errorf("3h at 1s (10800 points): %v, want nil", err)
	}
	err := CheckQuery(`max_over_time(x[4h:1s])`, scope, "shop")
	if err == nil || !strings.Contains(err.Error(), "evaluates 14400 points (its window over its step), more than 11000") {
		t.Errorf("4h at 1s: %v, want it refused for its points", err)
	}
}

// TestScope_TheCostAttackOfIssue42IsRefused: the query that would have
// Prometheus evaluate millions of points every interval is refused, naming
// the bound.
func TestScope_TheCostAttackOfIssue42IsRefused(t *testing.T) {
	const attack = `max_over_time(quantile_over_time(0.5, vector(1)[1h:1ms])[1h:1ms])`
	err := CheckQuery(attack, Scope{}, "attacker")
	if err == nil || !strings.Contains(err.Error(), "(--analysis-min-step)") {
		t.Errorf("CheckQuery(%s) = %v, want it refused for its step", attack, err)
	}
}

// TestScope_LabelForNamesTheLabelOfAMetric: a metric the platform names gets
// its own label, every other the default.
func TestScope_LabelForNamesTheLabelOfAMetric(t *testing.T) {
	scope := Scope{LabelFor: map[string]LabelFor{"envoy_rq_total": {Label: "route_namespace", Source: "gateway-system"}}}
	got, err := scope.Enforce(`sum(rate(envoy_rq_total[1m])) / sum(rate(http_requests_total[1m]))`, "shop")
	if err != nil {
		t.Fatal(err)
	}
	want := `sum(rate(envoy_rq_total{namespace="gateway-system",route_namespace="shop"}[1m])) / sum(rate(http_requests_total{namespace="shop"}[1m]))`
	if got != want {
		t.Errorf("Enforce:\n got %s\nwant %s", got, want)
	}
}

func TestParseLabelFor(t *testing.T) {
	m := map[string]LabelFor{}
	if err := ParseLabelFor(m, "envoy_rq_total=route_namespace@gateway-system"); err != nil ||
		m["envoy_rq_total"] != (LabelFor{Label: "route_namespace", Source: "gateway-system"}) {
		t.Errorf("ParseLabelFor: %v, map %v", err, m)
	}
	for _, bad := range []string{"", "x", "=y", "x=", "1x=y", "x=a-b", "x=y@", "x=y@Not_A_Namespace"} {
		if err := ParseLabelFor(map[string]LabelFor{}, bad); err == nil {
			t.Errorf("ParseLabelFor(%q) = nil, want an error", bad)
		}
	}
	// Without the namespace the series come from, any scraped pod could
	// stand for the gateway: refused, saying why.
	err := ParseLabelFor(map[string]LabelFor{}, "envoy_rq_total=route_namespace")
	if err == nil || !strings.Contains(err.Error(), "name the namespace the series come from, METRIC=LABEL@NAMESPACE") {
		t.Errorf("ParseLabelFor without @NAMESPACE = %v, want it refused saying why", err)
	}
}

func TestParseExtraMatcher(t *testing.T) {
	m, err := ParseExtraMatcher(`cluster="east"`)
	if err != nil || m.String() != `cluster="east"` {
		t.Errorf("ParseExtraMatcher = %v, %v", m, err)
	}
	for _, bad := range []string{``, `cluster=~"e.*"`, `cluster!="east"`, `__name__="up"`, `cluster="east",region="eu"`, `cluster=east`} {
		if _, err := ParseExtraMatcher(bad); err == nil {
			t.Errorf("ParseExtraMatcher(%s) = nil, want an error", bad)
		}
	}
}

// TestScope_ExtraMatchersGoOnEverySelector: on a Prometheus holding
// several clusters, a namespace's name is one tenant's only with the
// cluster's label; a tenant cannot name another cluster.
func TestScope_ExtraMatchersGoOnEverySelector(t *testing.T) {
	east, err := ParseExtraMatcher(`cluster="east"`)
	if err != nil {
		t.Fatal(err)
	}
	scope := Scope{Extra: []*labels.Matcher{east}}
	got, err := scope.Enforce(`sum(rate(a[1m])) / sum(rate(b{cluster="east"}[1m]))`, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if want := `sum(rate(a{cluster="east",namespace="shop"}[1m])) / sum(rate(b{cluster="east",namespace="shop"}[1m]))`; got != want {
		t.Errorf("Enforce:\n got %s\nwant %s", got, want)
	}
	if err := scope.Check(`sum(rate(a{cluster="west"}[1m]))`, "shop"); err == nil || !strings.Contains(err.Error(), `cluster="west"`) {
		t.Errorf("Check of another cluster = %v, want it refused", err)
	}
	for _, bad := range []Scope{
		{Extra: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "namespace", "x")}},
		{Extra: []*labels.Matcher{east, east}},
		{LabelFor: map[string]LabelFor{"m": {Label: "namespace", Source: "gw"}}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", bad)
		}
	}
}

// TestCause_PrometheusTextsNeverShow: whatever Prometheus says, the cause
// shown to the tenant is the operator's sentence, and it names no series.
func TestCause_PrometheusTextsNeverShow(t *testing.T) {
	secret := `found duplicate series for the match group {namespace="default", app="payments"}`
	for _, err := range []error{
		withDetail(apiError("execution", secret)),
		withDetail(apiError("bad_data", secret)),
		withDetail(apiError("server_error", secret)),
		errorsJoin(secret),
	} {
		if got := Cause(err); strings.Contains(got, "payments") || got == "" {
			t.Errorf("Cause(%v) = %q: want the operator's words without Prometheus's text", err, got)
		}
	}
}

// apiError is the error Prometheus's client gives for an answer of type typ,
// its body saying msg.
func apiError(typ, msg string) error {
	return &promv1.Error{Type: promv1.ErrorType(typ), Msg: msg, Detail: `{"status":"error","error":"` + msg + `"}`}
}

// errorsJoin is an error of no known kind saying msg.
func errorsJoin(msg string) error { return errors.New(msg) }
