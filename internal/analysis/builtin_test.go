/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package analysis

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// TestBuiltinQuery_TheQueriesAsDocumented holds the built-in queries to the
// text users read in the documentation and match their monitors to.
func TestBuiltinQuery_TheQueriesAsDocumented(t *testing.T) {
	const (
		sel       = `namespace="prod",app="shop",track="canary",revision="7c9d"`
		errorRate = `100 * (sum(rate(http_requests_total{` + sel + `,code=~"5.."}[60s])) or vector(0))` +
			` / sum(rate(http_requests_total{` + sel + `}[60s]))`
	)
	for m, want := range map[platformv1.Metric]string{
		platformv1.MetricErrorRate:   errorRate,
		platformv1.MetricSuccessRate: "100 - (" + errorRate + ")",
		platformv1.MetricLatencyP95: `histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{` +
			sel + `}[60s])))`,
		platformv1.MetricLatencyP99: `histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{` +
			sel + `}[60s])))`,
	} {
		if got := BuiltinQuery(m, canaryVars); got != want {
			t.Errorf("BuiltinQuery(%s):\n got %s\nwant %s", m, got, want)
		}
	}
	if got, want := SamplesQuery(canaryVars), `sum(increase(http_requests_total{`+sel+`}[60s]))`; got != want {
		t.Errorf("SamplesQuery:\n got %s\nwant %s", got, want)
	}
	if got := BuiltinQuery("error_ratio", canaryVars); got != "" {
		t.Errorf("BuiltinQuery of an unknown metric = %q, want empty", got)
	}
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
	got := SamplesQuery(v)
	if want := `sum(increase(http_requests_total{namespace="prod",app="shop",track="canary"}[60s]))`; got != want {
		t.Errorf("SamplesQuery without revision = %s, want %s", got, want)
	}
}
