// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// TestBuiltinQuery_TheQueriesAsDocumented holds the built-in queries, as
// the operator sends them (confined to the namespace), to the text users
// read in the documentation and match their monitors to.
func TestBuiltinQuery_TheQueriesAsDocumented(t *testing.T) {
	const (
		sel       = `app="shop",namespace="prod",revision="7c9d",track="canary"`
		errorRate = `100 * (sum(rate(http_requests_total{app="shop",code=~"5..",namespace="prod",revision="7c9d",track="canary"}[1m]))` +
			` or vector(0)) / sum(rate(http_requests_total{` + sel + `}[1m]))`
	)
	for m, want := range map[platformv1.Metric]string{
		platformv1.MetricErrorRate:   errorRate,
		platformv1.MetricSuccessRate: "100 - (" + errorRate + ")",
		platformv1.MetricLatencyP95: `histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{` +
			sel + `}[1m])))`,
		platformv1.MetricLatencyP99: `histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{` +
			sel + `}[1m])))`,
	} {
		if got := sent(t, BuiltinQuery(m, canaryVars)); got != want {
			t.Errorf("BuiltinQuery(%s) as sent:\n got %s\nwant %s", m, got, want)
		}
	}
	if got, want := sent(t, SamplesQuery(canaryVars)), `sum(increase(http_requests_total{`+sel+`}[1m]))`; got != want {
		t.Errorf("SamplesQuery as sent:\n got %s\nwant %s", got, want)
	}
	if got := BuiltinQuery("error_ratio", canaryVars); got != "" {
		t.Errorf("BuiltinQuery of an unknown metric = %q, want empty", got)
	}
}

// TestBuiltinQuery_UseTheNamespaceLabelOfThePlatform: a Prometheus that
// keeps a pod's namespace under another label gets the built-in queries with
// that label, and no namespace label they would never match.
func TestBuiltinQuery_UseTheNamespaceLabelOfThePlatform(t *testing.T) {
	scope := Scope{Label: "kubernetes_namespace"}
	got, err := scope.Enforce(SamplesQuery(canaryVars), canaryVars.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	want := `sum(increase(http_requests_total{app="shop",kubernetes_namespace="prod",revision="7c9d",track="canary"}[1m]))`
	if got != want {
		t.Errorf("SamplesQuery with label kubernetes_namespace:\n got %s\nwant %s", got, want)
	}
}

// sent is query as the default scope sends it for namespace prod.
func sent(t *testing.T, query string) string {
	t.Helper()
	out, err := Scope{}.Enforce(query, "prod")
	if err != nil {
		t.Fatalf("Enforce(%s): %v", query, err)
	}
	return out
}

func TestBuiltinQuery_EveryQueryParsesAsOneInstantVector(t *testing.T) {
	odd := Vars{Namespace: "ns", Name: `we"ird\name`, Track: platformv1.TrackStable, Interval: 5 * time.Second}
	for _, v := range []Vars{canaryVars, stableVars, odd} {
		queries := []string{SamplesQuery(v)}
		for _, m := range []platformv1.Metric{platformv1.MetricErrorRate, platformv1.MetricSuccessRate,
			platformv1.MetricLatencyP95, platformv1.MetricLatencyP99} {
			queries = append(queries, BuiltinQuery(m, v))
		}
		for _, q := range queries {
			expr, err := promQL.ParseExpr(q)
			if err != nil {
				t.Errorf("%s: %v", q, err)
				continue
			}
			if expr.Type() != parser.ValueTypeVector {
				t.Errorf("%s: type %s, want vector", q, expr.Type())
			}
		}
	}
}

func TestBuiltinQuery_WithoutRevisionSelectsTheWholeTrack(t *testing.T) {
	v := canaryVars
	v.Revision = ""
	got := sent(t, SamplesQuery(v))
	if want := `sum(increase(http_requests_total{app="shop",namespace="prod",track="canary"}[1m]))`; got != want {
		t.Errorf("SamplesQuery without revision = %s, want %s", got, want)
	}
}
