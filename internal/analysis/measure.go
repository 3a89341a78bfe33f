// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/example/platform-operator/internal/text"

	"github.com/google/cel-go/cel"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Criterion is a criterion ready to measure: its queries and its compiled condition.
// It does not change after Compile, so measurements may share it.
type Criterion struct {
	name string
	// metric is the built-in metric, or "" for a query judged by condition.
	metric    platformv1.Metric
	threshold float64
	// query and samplesQuery are the templates of a custom criterion.
	query, samplesQuery string
	condition           string
	program             cel.Program
	// maxDelta and maxRatio bound the comparison with stable; compare says
	// whether there is one.
	compare            bool
	maxDelta, maxRatio *float64
	// scope confines every query sent to the namespace of the track's
	// Vars.
	scope Scope
}

// Name is the criterion's name: Name if set, else its metric.
func (c *Criterion) Name() string { return c.name }

// Threshold describes what passes, for status: "<= 0.5", ">= 99.9" (success_rate), or the successCondition text.
func (c *Criterion) Threshold() string {
	if c.metric == "" {
		return c.condition
	}
	return c.operator(true) + " " + num(c.threshold)
}

// CriterionName is a criterion's name in status, events and metrics: its
// name, else its metric's.
func CriterionName(c platformv1.CanaryCriterion) string {
	if c.Name != "" {
		return c.Name
	}
	return string(c.Metric)
}

// Compile prepares a criterion whose queries scope confines; errors as
// CheckQuery/CheckCondition would give (the controller only compiles admitted
// specs, so an error here is Invalid at measure time). What the scope refuses
// is found when a query is rendered for its namespace, and is Invalid too.
func Compile(c platformv1.CanaryCriterion, scope Scope) (*Criterion, error) {
	cr := &Criterion{name: CriterionName(c), metric: c.Metric, scope: scope}
	switch {
	case c.Metric != "" && c.Query != "":
		return nil, errors.New("set exactly one of metric (a built-in measurement) or query (PromQL)")
	case c.Metric != "":
		if BuiltinQuery(c.Metric, sampleVars) == "" {
			return nil, fmt.Errorf("unknown metric %q; want %s, %s, %s or %s", c.Metric, platformv1.MetricErrorRate,
				platformv1.MetricSuccessRate, platformv1.MetricLatencyP95, platformv1.MetricLatencyP99)
		}
		if c.Threshold == nil {
			return nil, fmt.Errorf("metric %s needs a threshold", c.Metric)
		}
		cr.threshold = *c.Threshold
	case c.Query != "":
		if _, err := checkQuery(c.Query, sampleVars); err != nil {
			return nil, fmt.Errorf("query: %w", err)
		}
		if c.SamplesQuery != "" {
			if _, err := checkQuery(c.SamplesQuery, sampleVars); err != nil {
				return nil, fmt.Errorf("samplesQuery: %w", err)
			}
		}
		prg, err := compileCondition(c.SuccessCondition)
		if err != nil {
			return nil, fmt.Errorf("successCondition: %w", err)
		}
		cr.query, cr.samplesQuery, cr.condition, cr.program = c.Query, c.SamplesQuery, c.SuccessCondition, prg
	default:
		return nil, errors.New("set metric (a built-in measurement) or query (PromQL)")
	}
	if s := c.CompareToStable; s != (platformv1.CompareToStable{}) {
		// Copies, so a later change to the spec the criterion came from does
		// not change a criterion other goroutines measure with.
		cr.compare = true
		if s.MaxDelta != nil {
			cr.maxDelta = ptr.To(*s.MaxDelta)
		}
		if s.MaxRatio != nil {
			cr.maxRatio = ptr.To(*s.MaxRatio)
		}
	}
	return cr, nil
}

// Measurement is one measurement of one criterion.
type Measurement struct {
	Name    string
	Result  platformv1.MeasurementResult // Pass, Fail, NoData, Error, Invalid
	Value   *float64                     // canary value when one was read
	Stable  *float64                     // stable value: with compareToStable, and in a preflight
	Samples *int64                       // the measured track's samples, when a sample guard ran
	Message string                       // one line for people: "error_rate 0.12% <= 0.5% (n=812)"
	// Cause is the error behind an Error or Invalid result as the provider
	// gave it, for the manager's log only: Prometheus's texts can quote
	// other tenants' series or the server's internals, so Message says the
	// cause in the operator's words instead.
	Cause error
	// Threshold is the criterion's test as status shows it ("<= 0.5%"),
	// set by the measurer from the criterion it compiled; empty when the
	// criterion did not compile.
	Threshold string
}

// maxMessage bounds a Measurement's message, in characters: it is one line
// of a status and of `kubectl appdeploy get`, and an error from the HTTP
// client can be long.
const maxMessage = 200

// Measure measures c once for the canary track (canary Vars) and, when c has
// compareToStable, for the stable track (stable Vars), at instant at.
//
// The canary's sample guard runs first, then its query; the first result that
// is not a number (NoData, Error, Invalid) is the measurement's. A canary
// value that fails the threshold or condition is a Fail without asking about
// stable: the comparison is ANDed with it and cannot turn it into a Pass,
// and a stable track without data must not hide a canary that is plainly
// bad. Otherwise the stable track is measured the same way (guard, then
// query), and a stable result that is not a number is the measurement's:
// without it the canary cannot be judged.
func Measure(ctx context.Context, p Provider, c *Criterion, canary, stable Vars, minSamples int64,
	at time.Time) Measurement {
	m := Measurement{Name: c.name}
	cr := c.read(ctx, p, canary, minSamples, at, true)
	m.Samples = cr.samples
	if cr.result != "" {
		m.Cause = cr.cause
		return m.finish(cr.result, c.name+": "+cr.detail)
	}
	m.Value = ptr.To(cr.value)
	pass, verdict, err := c.judge(cr.value)
	if err != nil {
		return m.finish(platformv1.MeasurementInvalid, verdict+": "+err.Error()+samplesNote(cr.samples))
	}
	if !pass || !c.compare {
		return m.finish(resultOf(pass), verdict+samplesNote(cr.samples))
	}

	sr := c.read(ctx, p, stable, minSamples, at, true)
	if sr.result != "" {
		m.Cause = sr.cause
		return m.finish(sr.result, c.name+": stable: "+sr.detail)
	}
	m.Stable = ptr.To(sr.value)
	pass, checks := c.compareToStable(cr.value, sr.value)
	vs := "vs stable " + num(sr.value) + c.unit() + ": " + checks
	if !pass {
		return m.finish(platformv1.MeasurementFail,
			c.name+" "+num(cr.value)+c.unit()+" "+vs+samplesNote(cr.samples))
	}
	return m.finish(platformv1.MeasurementPass, verdict+", "+vs+samplesNote(cr.samples))
}

// Preflight runs each of c's queries once against the stable track (the canary does not
// exist yet). Only Error and Invalid matter to the caller; any answered query
// (a number, empty, NaN) gives Pass. The first Error or Invalid ends it:
// one is enough to hold the canary back.
func Preflight(ctx context.Context, p Provider, c *Criterion, stable Vars, at time.Time) Measurement {
	m := Measurement{Name: c.name}
	r := c.read(ctx, p, stable, 0, at, false)
	m.Samples = r.samples
	switch r.result {
	case platformv1.MeasurementError, platformv1.MeasurementInvalid:
		m.Cause = r.cause
		return m.finish(r.result, c.name+": "+r.detail)
	case "":
		m.Stable = ptr.To(r.value)
		return m.finish(platformv1.MeasurementPass,
			c.name+": queries answer: stable "+num(r.value)+c.unit()+samplesNote(r.samples))
	}
	return m.finish(platformv1.MeasurementPass, c.name+": queries answer: stable "+r.detail)
}

// finish sets the result and the message, cut to maxMessage.
func (m Measurement) finish(r platformv1.MeasurementResult, msg string) Measurement {
	m.Result, m.Message = r, text.Truncate(msg, maxMessage)
	return m
}

// reading is what one track's queries gave: a number to judge (result "")
// or the result that ends the measurement, with detail saying why.
type reading struct {
	result  platformv1.MeasurementResult
	value   float64
	samples *int64
	detail  string
	// cause is the provider's error, for the log.
	cause error
}

// read runs c's sample guard, when it has one, and its query for one track.
// guard false runs the samples query without judging its count (preflight).
func (c *Criterion) read(ctx context.Context, p Provider, v Vars, minSamples int64, at time.Time,
	guard bool) reading {
	query, samplesQuery, err := c.render(v)
	if err != nil {
		return reading{result: platformv1.MeasurementInvalid, detail: "invalid query: " + err.Error()}
	}
	var r reading
	if samplesQuery != "" {
		val, err := p.Query(ctx, samplesQuery, at)
		if err != nil {
			return failed(err, "samples query")
		}
		n := samplesOf(val)
		r.samples = &n
		if guard && n < minSamples {
			r.result, r.detail = platformv1.MeasurementNoData, fmt.Sprintf("no data (%d of %d samples)", n, minSamples)
			return r
		}
	}
	val, err := p.Query(ctx, query, at)
	if err != nil {
		f := failed(err, "query")
		f.samples = r.samples
		return f
	}
	switch {
	case val.Empty:
		r.result, r.detail = platformv1.MeasurementNoData, "no data (empty result)"
	case math.IsNaN(val.Number) || math.IsInf(val.Number, 0):
		r.result, r.detail = platformv1.MeasurementNoData, "no data ("+num(val.Number)+")"
	default:
		r.value = val.Number
	}
	return r
}

// render is c's query and sample guard's query for one track, each confined
// to the track's namespace by c's scope; the guard is "" when c has none.
func (c *Criterion) render(v Vars) (query, samplesQuery string, err error) {
	if c.metric != "" {
		query, samplesQuery = BuiltinQuery(c.metric, v), SamplesQuery(v)
	} else {
		if query, err = Render(c.query, v); err != nil {
			return "", "", err
		}
		if c.samplesQuery != "" {
			if samplesQuery, err = Render(c.samplesQuery, v); err != nil {
				return "", "", err
			}
		}
	}
	if query, err = c.scope.Enforce(query, v.Namespace); err != nil {
		return "", "", err
	}
	if samplesQuery != "" {
		if samplesQuery, err = c.scope.Enforce(samplesQuery, v.Namespace); err != nil {
			return "", "", err
		}
	}
	return query, samplesQuery, nil
}

// failed is the reading of a query that did not answer with a value: its
// result and the cause in the operator's words (Cause), never the
// provider's text, which goes to the log.
func failed(err error, what string) reading {
	r := reading{result: Classify(err), cause: err}
	if r.result == platformv1.MeasurementInvalid {
		r.detail = "invalid " + what + ": " + Cause(err)
	} else {
		r.detail = "Prometheus did not answer: " + Cause(err)
	}
	return r
}

// samplesOf is the sample count an answer of a samples query stands for.
// increase() extrapolates, so the count is rounded; an empty answer is no
// samples, and so is one that is not a count at all (NaN, negative).
func samplesOf(v Value) int64 {
	switch {
	case v.Empty || math.IsNaN(v.Number) || v.Number <= 0:
		return 0
	case v.Number >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(math.Round(v.Number))
}

// judge says whether v meets c's threshold or condition, and says so for
// people: "error_rate 0.12% <= 0.5%", "checkout-errors 0.07: result < 0.05
// is false". A condition that fails to evaluate returns an error, with the
// verdict saying what was evaluated.
func (c *Criterion) judge(v float64) (bool, string, error) {
	if c.metric != "" {
		pass := v <= c.threshold
		if c.metric == platformv1.MetricSuccessRate {
			pass = v >= c.threshold
		}
		vs, ts := numPair(v, c.threshold)
		return pass, c.name + " " + vs + c.unit() + " " + c.operator(pass) + " " + ts + c.unit(), nil
	}
	prefix := c.name + " " + num(v) + ": " + c.condition
	out, _, err := c.program.Eval(map[string]any{"result": v})
	if err != nil {
		return false, prefix, fmt.Errorf("evaluation failed: %w", err)
	}
	pass, ok := out.Value().(bool)
	if !ok {
		// Compile checked the type; a dyn that turned out otherwise lands here.
		return false, prefix, fmt.Errorf("evaluation gave %v, want a bool", out.Value())
	}
	return pass, prefix + " is " + strconv.FormatBool(pass), nil
}

// compareToStable applies maxDelta and maxRatio to the canary value c and
// the stable value s. Worse is higher, except for success_rate. checks says
// each bound for people, "+0.3 > maxDelta 0.2".
func (c *Criterion) compareToStable(cv, sv float64) (bool, string) {
	worse, better := cv, sv
	if c.metric == platformv1.MetricSuccessRate {
		worse, better = sv, cv
	}
	pass := true
	var checks []string
	if c.maxDelta != nil {
		delta := worse - better
		ok := within(delta, *c.maxDelta)
		pass = pass && ok
		checks = append(checks, fmt.Sprintf("%+.6g %s maxDelta %s", delta, bound(ok), num(*c.maxDelta)))
	}
	if c.maxRatio != nil {
		ratio := 1.0
		switch {
		case better != 0:
			ratio = worse / better
		case worse != 0:
			// Anything is infinitely worse than a perfect zero.
			ratio = math.Inf(1)
		}
		ok := within(ratio, *c.maxRatio)
		pass = pass && ok
		checks = append(checks, fmt.Sprintf("x%s %s maxRatio %s", num(ratio), bound(ok), num(*c.maxRatio)))
	}
	return pass, strings.Join(checks, ", ")
}

// within is x <= limit, forgiving the rounding of the subtraction or
// division that made x: 0.4 - 0.1 is 0.30000000000000004, and a maxDelta
// of 0.3 is meant to allow it.
func within(x, limit float64) bool {
	return x <= limit+1e-9*math.Max(1, math.Abs(limit))
}

// bound is the comparison sign of a bound that held (ok) or did not.
func bound(ok bool) string {
	if ok {
		return "<="
	}
	return ">"
}

// operator is the comparison sign of c's threshold for a value that passes
// it, or does not.
func (c *Criterion) operator(pass bool) string {
	switch {
	case c.metric == platformv1.MetricSuccessRate && pass:
		return ">="
	case c.metric == platformv1.MetricSuccessRate:
		return "<"
	case pass:
		return "<="
	}
	return ">"
}

// unit is the unit of c's values in messages.
func (c *Criterion) unit() string {
	switch c.metric {
	case platformv1.MetricErrorRate, platformv1.MetricSuccessRate:
		return "%"
	case platformv1.MetricLatencyP95, platformv1.MetricLatencyP99:
		return "s"
	}
	return ""
}

// resultOf is Pass or Fail.
func resultOf(pass bool) platformv1.MeasurementResult {
	if pass {
		return platformv1.MeasurementPass
	}
	return platformv1.MeasurementFail
}

// samplesNote is " (n=812)" when the samples are known.
func samplesNote(n *int64) string {
	if n == nil {
		return ""
	}
	return " (n=" + strconv.FormatInt(*n, 10) + ")"
}

// num formats a value for a message: six significant digits, enough for a
// percentage or a latency and short enough for one line.
func num(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// numPair formats a value and its threshold with enough digits to tell them
// apart when they differ, so no message reads "99.9% < 99.9%".
func numPair(v, t float64) (string, string) {
	for prec := 6; prec < 17; prec++ {
		vs, ts := strconv.FormatFloat(v, 'g', prec, 64), strconv.FormatFloat(t, 'g', prec, 64)
		if vs != ts || v == t {
			return vs, ts
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64), strconv.FormatFloat(t, 'g', -1, 64)
}
