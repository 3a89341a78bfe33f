// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// The tracks measured: an application "shop" in "prod", its canary at
// revision 7c9d and its stable at 5f6a.
var (
	canaryVars = Vars{Namespace: "prod", Name: "shop", Version: "v1.2.4", Revision: "7c9d",
		Track: platformv1.TrackCanary, Interval: time.Minute}
	stableVars = Vars{Namespace: "prod", Name: "shop", Version: "v1.2.3", Revision: "5f6a",
		Track: platformv1.TrackStable, Interval: time.Minute}
)

// Names of the kinds of queries, as kind() names them.
const (
	canarySamples = "canary samples"
	canaryValue   = "canary value"
	stableSamples = "stable samples"
	stableValue   = "stable value"
)

// metric is a built-in criterion with a threshold.
func metric(m platformv1.Metric, threshold float64) platformv1.CanaryCriterion {
	return platformv1.CanaryCriterion{Metric: m, Threshold: ptr.To(threshold)}
}

// custom is a query criterion named checkout-errors; its queries carry the
// track, so the fake tells the tracks apart.
func custom(condition string) platformv1.CanaryCriterion {
	return platformv1.CanaryCriterion{
		Name:             "checkout-errors",
		Query:            `sum(rate(checkout_errors_total{track="{{track}}"}[{{interval}}]))`,
		SuccessCondition: condition,
	}
}

// withSamples gives a criterion a samples query.
func withSamples(c platformv1.CanaryCriterion) platformv1.CanaryCriterion {
	c.SamplesQuery = `sum(increase(checkout_samples{track="{{ track }}"}[{{ interval }}]))`
	return c
}

// comparing gives a criterion bounds against stable.
func comparing(c platformv1.CanaryCriterion, maxDelta, maxRatio *float64) platformv1.CanaryCriterion {
	c.CompareToStable = platformv1.CompareToStable{MaxDelta: maxDelta, MaxRatio: maxRatio}
	return c
}

// ignoreCause leaves Measurement.Cause, the provider's own error, to
// checkCause.
var ignoreCause = cmpopts.IgnoreFields(Measurement{}, "Cause")

// checkCause holds a measurement's Cause to its result: the provider's
// error is kept, for the log, only for an Error or Invalid result, and an
// Error always has one (an Invalid may be the condition's, with none).
func checkCause(t *testing.T, m Measurement) {
	t.Helper()
	failed := m.Result == platformv1.MeasurementError || m.Result == platformv1.MeasurementInvalid
	if (m.Cause != nil && !failed) || (m.Result == platformv1.MeasurementError && m.Cause == nil) {
		t.Errorf("result %s with cause %v: want a cause for every Error, and only for Error and Invalid",
			m.Result, m.Cause)
	}
}

func compile(t *testing.T, c platformv1.CanaryCriterion) *Criterion {
	t.Helper()
	cr, err := Compile(c, Scope{})
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return cr
}

// measureCase is one measurement against the fake Prometheus: what it
// answers to each kind of query, and what the measurement must be. msg is
// the whole message unless msgPrefix is set, for messages that carry an
// address.
type measureCase struct {
	name      string
	criterion platformv1.CanaryCriterion
	replies   map[string]reply
	want      Measurement
	msgPrefix bool
	asked     []string // the kinds of queries asked, in order
}

func runMeasureCases(t *testing.T, cases []measureCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeProm(t, byKind(c.replies))
			p := newProvider(t, f.URL, 5*time.Second)
			got := Measure(t.Context(), p, compile(t, c.criterion), canaryVars, stableVars, 10, time.Now())
			if c.msgPrefix {
				if !strings.HasPrefix(got.Message, c.want.Message) {
					t.Errorf("message %q does not start with %q", got.Message, c.want.Message)
				}
				got.Message = c.want.Message
			}
			if d := cmp.Diff(c.want, got, ignoreCause); d != "" {
				t.Errorf("measurement (-want +got):\n%s", d)
			}
			checkCause(t, got)
			if d := cmp.Diff(c.asked, f.queries(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("queries asked (-want +got):\n%s", d)
			}
		})
	}
}

func TestMeasure_BuiltinMetricAgainstItsThreshold(t *testing.T) {
	errorRate := metric(platformv1.MetricErrorRate, 0.5)
	guardThenValue := []string{canarySamples, canaryValue}
	runMeasureCases(t, []measureCase{{
		name:      "pass",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: vector("812.4"), canaryValue: vector("0.12")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementPass, Value: ptr.To(0.12),
			Samples: ptr.To[int64](812), Message: "error_rate 0.12% <= 0.5% (n=812)"},
		asked: guardThenValue,
	}, {
		name:      "fail",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: vector("600"), canaryValue: vector("10")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementFail, Value: ptr.To(10.0),
			Samples: ptr.To[int64](600), Message: "error_rate 10% > 0.5% (n=600)"},
		asked: guardThenValue,
	}, {
		name:      "exactly at the threshold passes",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: vector("600"), canaryValue: scalar("0.5")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementPass, Value: ptr.To(0.5),
			Samples: ptr.To[int64](600), Message: "error_rate 0.5% <= 0.5% (n=600)"},
		asked: guardThenValue,
	}, {
		name:      "just above the threshold says so with enough digits",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: vector("600"), canaryValue: vector("0.50000001")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementFail, Value: ptr.To(0.50000001),
			Samples: ptr.To[int64](600), Message: "error_rate 0.50000001% > 0.5% (n=600)"},
		asked: guardThenValue,
	}, {
		name:      "success_rate is a minimum: above passes",
		criterion: metric(platformv1.MetricSuccessRate, 99.9),
		replies:   map[string]reply{canarySamples: vector("1000"), canaryValue: vector("99.95")},
		want: Measurement{Name: "success_rate", Result: platformv1.MeasurementPass, Value: ptr.To(99.95),
			Samples: ptr.To[int64](1000), Message: "success_rate 99.95% >= 99.9% (n=1000)"},
		asked: guardThenValue,
	}, {
		name:      "success_rate exactly at the minimum passes",
		criterion: metric(platformv1.MetricSuccessRate, 99.9),
		replies:   map[string]reply{canarySamples: vector("1000"), canaryValue: vector("99.9")},
		want: Measurement{Name: "success_rate", Result: platformv1.MeasurementPass, Value: ptr.To(99.9),
			Samples: ptr.To[int64](1000), Message: "success_rate 99.9% >= 99.9% (n=1000)"},
		asked: guardThenValue,
	}, {
		name:      "success_rate is a minimum: below fails",
		criterion: metric(platformv1.MetricSuccessRate, 99.9),
		replies:   map[string]reply{canarySamples: vector("1000"), canaryValue: vector("99")},
		want: Measurement{Name: "success_rate", Result: platformv1.MeasurementFail, Value: ptr.To(99.0),
			Samples: ptr.To[int64](1000), Message: "success_rate 99% < 99.9% (n=1000)"},
		asked: guardThenValue,
	}, {
		name:      "latency in seconds",
		criterion: metric(platformv1.MetricLatencyP99, 0.5),
		replies:   map[string]reply{canarySamples: vector("100"), canaryValue: vector("2.1")},
		want: Measurement{Name: "latency_p99", Result: platformv1.MeasurementFail, Value: ptr.To(2.1),
			Samples: ptr.To[int64](100), Message: "latency_p99 2.1s > 0.5s (n=100)"},
		asked: guardThenValue,
	}, {
		name:      "a named metric criterion is measured under its name",
		criterion: platformv1.CanaryCriterion{Name: "p95", Metric: platformv1.MetricLatencyP95, Threshold: ptr.To(0.3)},
		replies:   map[string]reply{canarySamples: vector("100"), canaryValue: vector("0.25")},
		want: Measurement{Name: "p95", Result: platformv1.MeasurementPass, Value: ptr.To(0.25),
			Samples: ptr.To[int64](100), Message: "p95 0.25s <= 0.3s (n=100)"},
		asked: guardThenValue,
	}})
}

func TestMeasure_NoDataErrorAndInvalidAreNotJudged(t *testing.T) {
	errorRate := metric(platformv1.MetricErrorRate, 0.5)
	guardThenValue := []string{canarySamples, canaryValue}
	enough := vector("600")
	result := func(r platformv1.MeasurementResult, msg string) Measurement {
		return Measurement{Name: "error_rate", Result: r, Samples: ptr.To[int64](600), Message: msg}
	}
	runMeasureCases(t, []measureCase{{
		name:      "empty vector",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: enough, canaryValue: vector()},
		want:      result(platformv1.MeasurementNoData, "error_rate: no data (empty result)"),
		asked:     guardThenValue,
	}, {
		name:      "NaN",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: enough, canaryValue: vector("NaN")},
		want:      result(platformv1.MeasurementNoData, "error_rate: no data (NaN)"),
		asked:     guardThenValue,
	}, {
		name:      "+Inf",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: enough, canaryValue: vector("+Inf")},
		want:      result(platformv1.MeasurementNoData, "error_rate: no data (+Inf)"),
		asked:     guardThenValue,
	}, {
		name:      "-Inf",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: enough, canaryValue: scalar("-Inf")},
		want:      result(platformv1.MeasurementNoData, "error_rate: no data (-Inf)"),
		asked:     guardThenValue,
	}, {
		name:      "two series",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: enough, canaryValue: vector("0.1", "0.2")},
		want:      result(platformv1.MeasurementInvalid, "error_rate: invalid query: 2 series returned, want 1"),
		asked:     guardThenValue,
	}, {
		name:      "400 bad_data",
		criterion: errorRate,
		replies: map[string]reply{canarySamples: enough, canaryValue: promError(http.StatusBadRequest, "bad_data",
			"1:10: parse error: unexpected right parenthesis")},
		want: result(platformv1.MeasurementInvalid,
			"error_rate: invalid query: Prometheus refused the query as malformed (bad_data)"),
		asked: guardThenValue,
	}, {
		name:      "422 execution",
		criterion: errorRate,
		replies: map[string]reply{canarySamples: enough, canaryValue: promError(http.StatusUnprocessableEntity,
			"execution", "many-to-many matching not allowed")},
		want: result(platformv1.MeasurementInvalid,
			"error_rate: invalid query: Prometheus could not evaluate the query (execution error; the manager's log has its text)"),
		asked: guardThenValue,
	}, {
		name:      "500",
		criterion: errorRate,
		replies: map[string]reply{canarySamples: enough, canaryValue: promError(http.StatusInternalServerError,
			"internal", "tsdb is closing")},
		want: result(platformv1.MeasurementError,
			"error_rate: Prometheus did not answer: Prometheus answered with a server error (HTTP 500)"),
		asked: guardThenValue,
	}, {
		name:      "the samples query's error stops the measurement",
		criterion: errorRate,
		replies: map[string]reply{canarySamples: promError(http.StatusServiceUnavailable, "unavailable",
			"overloaded")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementError,
			Message: "error_rate: Prometheus did not answer: Prometheus answered with a server error (HTTP 503)"},
		asked: []string{canarySamples},
	}})
}

func TestMeasure_SampleGuard(t *testing.T) {
	errorRate := metric(platformv1.MetricErrorRate, 0.5)
	runMeasureCases(t, []measureCase{{
		name:      "below minSamples is NoData, and the value is not asked for",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: vector("3.2")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementNoData, Samples: ptr.To[int64](3),
			Message: "error_rate: no data (3 of 10 samples)"},
		asked: []string{canarySamples},
	}, {
		name:      "at minSamples is judged",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: vector("9.6"), canaryValue: vector("0")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementPass, Value: ptr.To(0.0),
			Samples: ptr.To[int64](10), Message: "error_rate 0% <= 0.5% (n=10)"},
		asked: []string{canarySamples, canaryValue},
	}, {
		name:      "no series of requests at all is 0 samples",
		criterion: errorRate,
		replies:   map[string]reply{canarySamples: vector()},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementNoData, Samples: ptr.To[int64](0),
			Message: "error_rate: no data (0 of 10 samples)"},
		asked: []string{canarySamples},
	}, {
		name:      "a custom query without samplesQuery has no guard",
		criterion: custom("result < 0.05"),
		replies:   map[string]reply{canaryValue: vector("0.03")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementPass, Value: ptr.To(0.03),
			Message: "checkout-errors 0.03: result < 0.05 is true"},
		asked: []string{canaryValue},
	}, {
		name:      "a custom query's samplesQuery guards it",
		criterion: withSamples(custom("result < 0.05")),
		replies:   map[string]reply{canarySamples: scalar("4")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementNoData, Samples: ptr.To[int64](4),
			Message: "checkout-errors: no data (4 of 10 samples)"},
		asked: []string{canarySamples},
	}, {
		name:      "a samplesQuery that returns two series is Invalid and says which query",
		criterion: withSamples(custom("result < 0.05")),
		replies:   map[string]reply{canarySamples: vector("4", "8")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementInvalid,
			Message: "checkout-errors: invalid samples query: 2 series returned, want 1"},
		asked: []string{canarySamples},
	}})
}

func TestMeasure_CustomConditionInCEL(t *testing.T) {
	runMeasureCases(t, []measureCase{{
		name:      "true passes",
		criterion: withSamples(custom("result < 0.05")),
		replies:   map[string]reply{canarySamples: vector("50"), canaryValue: vector("0.03")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementPass, Value: ptr.To(0.03),
			Samples: ptr.To[int64](50), Message: "checkout-errors 0.03: result < 0.05 is true (n=50)"},
		asked: []string{canarySamples, canaryValue},
	}, {
		name:      "false fails",
		criterion: custom("result < 0.05"),
		replies:   map[string]reply{canaryValue: vector("0.07")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementFail, Value: ptr.To(0.07),
			Message: "checkout-errors 0.07: result < 0.05 is false"},
		asked: []string{canaryValue},
	}, {
		name:      "a comparison with an int literal works",
		criterion: custom("result >= 0 && result < 1"),
		replies:   map[string]reply{canaryValue: vector("0.5")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementPass, Value: ptr.To(0.5),
			Message: "checkout-errors 0.5: result >= 0 && result < 1 is true"},
		asked: []string{canaryValue},
	}, {
		name:      "an evaluation error is Invalid",
		criterion: custom("int(result) / 0 == 0"),
		replies:   map[string]reply{canaryValue: vector("3")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementInvalid, Value: ptr.To(3.0),
			Message: "checkout-errors 3: int(result) / 0 == 0: evaluation failed: division by zero"},
		asked: []string{canaryValue},
	}, {
		name:      "0/0 in the query is NaN, no data",
		criterion: custom("result < 0.05"),
		replies:   map[string]reply{canaryValue: vector("NaN")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementNoData,
			Message: "checkout-errors: no data (NaN)"},
		asked: []string{canaryValue},
	}})
}

func TestMeasure_CompareToStable(t *testing.T) {
	errorRate := metric(platformv1.MetricErrorRate, 0.5)
	p99 := metric(platformv1.MetricLatencyP99, 1)
	successRate := metric(platformv1.MetricSuccessRate, 99)
	both := []string{canarySamples, canaryValue, stableSamples, stableValue}
	n := vector("812")
	// answers gives both tracks enough samples and these values.
	answers := func(canary, stable string) map[string]reply {
		return map[string]reply{canarySamples: n, canaryValue: vector(canary), stableSamples: n, stableValue: vector(stable)}
	}
	runMeasureCases(t, []measureCase{{
		name:      "within maxDelta passes",
		criterion: comparing(errorRate, ptr.To(0.2), nil),
		replies:   answers("0.12", "0.1"),
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementPass, Value: ptr.To(0.12),
			Stable: ptr.To(0.1), Samples: ptr.To[int64](812),
			Message: "error_rate 0.12% <= 0.5%, vs stable 0.1%: +0.02 <= maxDelta 0.2 (n=812)"},
		asked: both,
	}, {
		name:      "beyond maxDelta fails though under the threshold",
		criterion: comparing(errorRate, ptr.To(0.2), nil),
		replies:   answers("0.4", "0.1"),
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementFail, Value: ptr.To(0.4),
			Stable: ptr.To(0.1), Samples: ptr.To[int64](812),
			Message: "error_rate 0.4% vs stable 0.1%: +0.3 > maxDelta 0.2 (n=812)"},
		asked: both,
	}, {
		name:      "exactly maxDelta passes despite the rounding of 0.4 - 0.1",
		criterion: comparing(errorRate, ptr.To(0.3), nil),
		replies:   answers("0.4", "0.1"),
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementPass, Value: ptr.To(0.4),
			Stable: ptr.To(0.1), Samples: ptr.To[int64](812),
			Message: "error_rate 0.4% <= 0.5%, vs stable 0.1%: +0.3 <= maxDelta 0.3 (n=812)"},
		asked: both,
	}, {
		name:      "beyond maxRatio fails",
		criterion: comparing(p99, nil, ptr.To(1.2)),
		replies:   answers("0.6", "0.4"),
		want: Measurement{Name: "latency_p99", Result: platformv1.MeasurementFail, Value: ptr.To(0.6),
			Stable: ptr.To(0.4), Samples: ptr.To[int64](812),
			Message: "latency_p99 0.6s vs stable 0.4s: x1.5 > maxRatio 1.2 (n=812)"},
		asked: both,
	}, {
		name:      "both bounds are checked and reported",
		criterion: comparing(p99, ptr.To(0.1), ptr.To(1.2)),
		replies:   answers("0.45", "0.4"),
		want: Measurement{Name: "latency_p99", Result: platformv1.MeasurementPass, Value: ptr.To(0.45),
			Stable: ptr.To(0.4), Samples: ptr.To[int64](812),
			Message: "latency_p99 0.45s <= 1s, vs stable 0.4s: +0.05 <= maxDelta 0.1, x1.125 <= maxRatio 1.2 (n=812)"},
		asked: both,
	}, {
		name:      "stable 0 and canary 0: ratio 1",
		criterion: comparing(errorRate, nil, ptr.To(1.5)),
		replies:   answers("0", "0"),
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementPass, Value: ptr.To(0.0),
			Stable: ptr.To(0.0), Samples: ptr.To[int64](812),
			Message: "error_rate 0% <= 0.5%, vs stable 0%: x1 <= maxRatio 1.5 (n=812)"},
		asked: both,
	}, {
		name:      "stable 0 and canary above: ratio +Inf fails",
		criterion: comparing(errorRate, nil, ptr.To(1.5)),
		replies:   answers("0.1", "0"),
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementFail, Value: ptr.To(0.1),
			Stable: ptr.To(0.0), Samples: ptr.To[int64](812),
			Message: "error_rate 0.1% vs stable 0%: x+Inf > maxRatio 1.5 (n=812)"},
		asked: both,
	}, {
		name:      "success_rate: lower than stable is worse",
		criterion: comparing(successRate, ptr.To(0.2), ptr.To(1.001)),
		replies:   answers("99.5", "99.9"),
		want: Measurement{Name: "success_rate", Result: platformv1.MeasurementFail, Value: ptr.To(99.5),
			Stable: ptr.To(99.9), Samples: ptr.To[int64](812),
			Message: "success_rate 99.5% vs stable 99.9%: +0.4 > maxDelta 0.2, x1.00402 > maxRatio 1.001 (n=812)"},
		asked: both,
	}, {
		name:      "success_rate: higher than stable is better",
		criterion: comparing(successRate, ptr.To(0.2), nil),
		replies:   answers("99.95", "99.9"),
		want: Measurement{Name: "success_rate", Result: platformv1.MeasurementPass, Value: ptr.To(99.95),
			Stable: ptr.To(99.9), Samples: ptr.To[int64](812),
			Message: "success_rate 99.95% >= 99%, vs stable 99.9%: -0.05 <= maxDelta 0.2 (n=812)"},
		asked: both,
	}, {
		name:      "a custom query compares too",
		criterion: comparing(custom("result < 0.05"), ptr.To(0.01), nil),
		replies:   map[string]reply{canaryValue: vector("0.04"), stableValue: vector("0.01")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementFail, Value: ptr.To(0.04),
			Stable: ptr.To(0.01), Message: "checkout-errors 0.04 vs stable 0.01: +0.03 > maxDelta 0.01"},
		asked: []string{canaryValue, stableValue},
	}, {
		name:      "a canary over its threshold fails without asking about stable",
		criterion: comparing(errorRate, ptr.To(0.2), nil),
		replies:   map[string]reply{canarySamples: n, canaryValue: vector("10")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementFail, Value: ptr.To(10.0),
			Samples: ptr.To[int64](812), Message: "error_rate 10% > 0.5% (n=812)"},
		asked: []string{canarySamples, canaryValue},
	}, {
		name:      "stable without data: cannot judge",
		criterion: comparing(errorRate, ptr.To(0.2), nil),
		replies:   map[string]reply{canarySamples: n, canaryValue: vector("0.12"), stableSamples: n, stableValue: vector()},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementNoData, Value: ptr.To(0.12),
			Samples: ptr.To[int64](812), Message: "error_rate: stable: no data (empty result)"},
		asked: both,
	}, {
		name:      "stable below minSamples: cannot judge",
		criterion: comparing(errorRate, ptr.To(0.2), nil),
		replies:   map[string]reply{canarySamples: n, canaryValue: vector("0.12"), stableSamples: vector("2")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementNoData, Value: ptr.To(0.12),
			Samples: ptr.To[int64](812), Message: "error_rate: stable: no data (2 of 10 samples)"},
		asked: []string{canarySamples, canaryValue, stableSamples},
	}, {
		name:      "stable query fails: Error",
		criterion: comparing(errorRate, ptr.To(0.2), nil),
		replies: map[string]reply{canarySamples: n, canaryValue: vector("0.12"), stableSamples: n,
			stableValue: promError(http.StatusServiceUnavailable, "timeout", "query timed out")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementError, Value: ptr.To(0.12),
			Samples: ptr.To[int64](812),
			Message: "error_rate: stable: Prometheus did not answer: Prometheus answered with a server error (HTTP 503)"},
		asked: both,
	}, {
		name:      "a canary without data does not ask about stable",
		criterion: comparing(errorRate, ptr.To(0.2), nil),
		replies:   map[string]reply{canarySamples: n, canaryValue: vector("NaN")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementNoData, Samples: ptr.To[int64](812),
			Message: "error_rate: no data (NaN)"},
		asked: []string{canarySamples, canaryValue},
	}})
}

func TestMeasure_ProviderThatDoesNotAnswerIsErrorWithinTheTimeout(t *testing.T) {
	const timeout = 400 * time.Millisecond
	cr := compile(t, metric(platformv1.MetricErrorRate, 0.5))
	for name, address := range map[string]string{
		"timeout":            newFakeProm(t, func(string) reply { return reply{delay: time.Minute} }).URL,
		"black hole":         blackHole(t),
		"connection refused": refusedAddress(t),
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			m := Measure(t.Context(), newProvider(t, address, timeout), cr, canaryVars, stableVars, 10, time.Now())
			if elapsed := time.Since(start); elapsed > timeout+time.Second {
				t.Errorf("returned after %s, want within %s + 1s", elapsed, timeout)
			}
			if m.Result != platformv1.MeasurementError {
				t.Errorf("result %s, want Error (%s)", m.Result, m.Message)
			}
			if want := "error_rate: Prometheus did not answer: "; !strings.HasPrefix(m.Message, want) {
				t.Errorf("message %q does not start with %q", m.Message, want)
			}
			if len([]rune(m.Message)) > maxMessage {
				t.Errorf("message of %d characters, want at most %d", len([]rune(m.Message)), maxMessage)
			}
		})
	}
}

func TestMeasure_PrometheusTextsStayOutOfTheMessage(t *testing.T) {
	long := strings.Repeat("very long explanation ", 40)
	f := newFakeProm(t, func(string) reply {
		return promError(http.StatusBadRequest, "bad_data", "line one\\n"+long)
	})
	m := Measure(t.Context(), newProvider(t, f.URL, time.Second), compile(t, custom("result < 1")),
		canaryVars, stableVars, 10, time.Now())
	if m.Result != platformv1.MeasurementInvalid {
		t.Errorf("result %s, want Invalid", m.Result)
	}
	if n := len([]rune(m.Message)); n > maxMessage {
		t.Errorf("message of %d characters, want at most %d", n, maxMessage)
	}
	if strings.Contains(m.Message, "very long") || strings.ContainsAny(m.Message, "\n\r") {
		t.Errorf("message %q: want one line without Prometheus's text", m.Message)
	}
	if m.Cause == nil || !strings.Contains(m.Cause.Error(), "very long") {
		t.Errorf("cause %v: want Prometheus's text, for the log", m.Cause)
	}
	if want := "checkout-errors: invalid query: Prometheus refused the query as malformed (bad_data)"; !strings.HasPrefix(m.Message, want) {
		t.Errorf("message %q does not start with %q", m.Message, want)
	}
}

func TestMeasure_AsksBothTracksAtTheSameInstant(t *testing.T) {
	f := newFakeProm(t, byKind(map[string]reply{
		canarySamples: vector("100"), canaryValue: vector("0.1"), stableSamples: vector("100"), stableValue: vector("0.1"),
	}))
	at := time.Unix(1767225600, 0)
	cr := compile(t, comparing(metric(platformv1.MetricErrorRate, 0.5), ptr.To(0.2), nil))
	Measure(t.Context(), newProvider(t, f.URL, time.Second), cr, canaryVars, stableVars, 10, at)
	if d := cmp.Diff([]string{"1767225600", "1767225600", "1767225600", "1767225600"}, f.times); d != "" {
		t.Errorf("time parameters (-want +got):\n%s", d)
	}
}

func TestMeasure_SafeForConcurrentUse(t *testing.T) {
	f := newFakeProm(t, byKind(map[string]reply{
		canarySamples: vector("100"), canaryValue: vector("0.1"), stableSamples: vector("100"), stableValue: vector("0.05"),
	}))
	p := newProvider(t, f.URL, 5*time.Second)
	crs := []*Criterion{
		compile(t, comparing(metric(platformv1.MetricErrorRate, 0.5), ptr.To(0.2), ptr.To(3.0))),
		compile(t, comparing(custom("result < 0.5"), ptr.To(0.2), nil)),
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			m := Measure(t.Context(), p, crs[i%2], canaryVars, stableVars, 10, time.Now())
			if m.Result != platformv1.MeasurementPass {
				t.Errorf("measurement %d: %s: %s", i, m.Result, m.Message)
			}
		})
	}
	wg.Wait()
}

func TestPreflight_OnlyErrorsAndInvalidQueriesMatter(t *testing.T) {
	errorRate := metric(platformv1.MetricErrorRate, 0.5)
	cases := []struct {
		name      string
		criterion platformv1.CanaryCriterion
		replies   map[string]reply
		want      Measurement
		asked     []string
	}{{
		name:      "a number passes whatever the threshold",
		criterion: errorRate,
		replies:   map[string]reply{stableSamples: vector("812"), stableValue: vector("7")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementPass, Stable: ptr.To(7.0),
			Samples: ptr.To[int64](812), Message: "error_rate: queries answer: stable 7% (n=812)"},
		asked: []string{stableSamples, stableValue},
	}, {
		name:      "too few samples are no reason to stop",
		criterion: errorRate,
		replies:   map[string]reply{stableSamples: vector("0"), stableValue: vector()},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementPass, Samples: ptr.To[int64](0),
			Message: "error_rate: queries answer: stable no data (empty result)"},
		asked: []string{stableSamples, stableValue},
	}, {
		name:      "NaN passes",
		criterion: custom("result < 0.05"),
		replies:   map[string]reply{stableValue: vector("NaN")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementPass,
			Message: "checkout-errors: queries answer: stable no data (NaN)"},
		asked: []string{stableValue},
	}, {
		name:      "a refused query is Invalid",
		criterion: custom("result < 0.05"),
		replies: map[string]reply{stableValue: promError(http.StatusBadRequest, "bad_data",
			`1:1: parse error: unknown function with name \"rat\"`)},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementInvalid,
			Message: "checkout-errors: invalid query: Prometheus refused the query as malformed (bad_data)"},
		asked: []string{stableValue},
	}, {
		name:      "two series are Invalid",
		criterion: withSamples(custom("result < 0.05")),
		replies:   map[string]reply{stableSamples: vector("10"), stableValue: vector("1", "2")},
		want: Measurement{Name: "checkout-errors", Result: platformv1.MeasurementInvalid, Samples: ptr.To[int64](10),
			Message: "checkout-errors: invalid query: 2 series returned, want 1"},
		asked: []string{stableSamples, stableValue},
	}, {
		name:      "Prometheus failing is Error",
		criterion: errorRate,
		replies:   map[string]reply{stableSamples: promError(http.StatusInternalServerError, "internal", "oops")},
		want: Measurement{Name: "error_rate", Result: platformv1.MeasurementError,
			Message: "error_rate: Prometheus did not answer: Prometheus answered with a server error (HTTP 500)"},
		asked: []string{stableSamples},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeProm(t, byKind(c.replies))
			got := Preflight(t.Context(), newProvider(t, f.URL, time.Second), compile(t, c.criterion), stableVars,
				time.Now())
			if d := cmp.Diff(c.want, got, ignoreCause); d != "" {
				t.Errorf("measurement (-want +got):\n%s", d)
			}
			checkCause(t, got)
			if d := cmp.Diff(c.asked, f.queries()); d != "" {
				t.Errorf("queries asked (-want +got):\n%s", d)
			}
		})
	}
}

func TestCompile(t *testing.T) {
	for _, c := range []struct {
		name      string
		criterion platformv1.CanaryCriterion
		wantName  string
		threshold string
	}{
		{"error_rate", metric(platformv1.MetricErrorRate, 0.5), "error_rate", "<= 0.5"},
		{"success_rate", metric(platformv1.MetricSuccessRate, 99.9), "success_rate", ">= 99.9"},
		{"latency_p95", metric(platformv1.MetricLatencyP95, 0.25), "latency_p95", "<= 0.25"},
		{"named metric", platformv1.CanaryCriterion{Name: "slow", Metric: platformv1.MetricLatencyP99,
			Threshold: ptr.To(1.0)}, "slow", "<= 1"},
		{"custom", custom("result < 0.05"), "checkout-errors", "result < 0.05"},
	} {
		cr, err := Compile(c.criterion, Scope{})
		if err != nil {
			t.Errorf("%s: Compile: %v", c.name, err)
			continue
		}
		if cr.Name() != c.wantName || cr.Threshold() != c.threshold {
			t.Errorf("%s: Name %q, Threshold %q; want %q, %q", c.name, cr.Name(), cr.Threshold(), c.wantName,
				c.threshold)
		}
	}
}

func TestCompile_RefusesWhatCannotBeMeasured(t *testing.T) {
	for _, c := range []struct {
		name      string
		criterion platformv1.CanaryCriterion
		errText   string
	}{
		{"neither metric nor query", platformv1.CanaryCriterion{Name: "x"}, "set metric"},
		{"both metric and query", platformv1.CanaryCriterion{Metric: platformv1.MetricErrorRate,
			Threshold: ptr.To(1.0), Query: "up", SuccessCondition: "result > 0"}, "exactly one"},
		{"metric without threshold", platformv1.CanaryCriterion{Metric: platformv1.MetricErrorRate},
			"needs a threshold"},
		{"unknown metric", metric("error_ratio", 1), `unknown metric "error_ratio"`},
		{"query that does not parse", platformv1.CanaryCriterion{Name: "x", Query: "sum(up",
			SuccessCondition: "result > 0"}, "query: not valid PromQL"},
		{"samplesQuery with an unknown variable", platformv1.CanaryCriterion{Name: "x", Query: "up",
			SamplesQuery: "count(up{pod=\"{{pod}}\"})", SuccessCondition: "result > 0"},
			"samplesQuery: unknown template variable {{pod}}"},
		{"condition that is not a bool", custom("result * 2.0"), "successCondition: has type double"},
	} {
		_, err := Compile(c.criterion, Scope{})
		if err == nil || !strings.Contains(err.Error(), c.errText) {
			t.Errorf("%s: Compile = %v, want an error containing %q", c.name, err, c.errText)
		}
	}
}
