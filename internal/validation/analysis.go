// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
)

// criterionName is the pattern of a criterion's name.
var criterionName = regexp.MustCompile(`^[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// Limits of a criterion's texts, as the schema has them.
const (
	maxCriterionName = 63
	maxQuery         = 4096
	maxCondition     = 1024
)

// canaryCriteria checks the criteria, including what the schema cannot: a
// query must parse as PromQL with only the known template variables, and a
// successCondition must compile as CEL over result, so a mistake is refused
// at `kubectl apply` (and by `kubectl appdeploy lint`), not found when the
// rollout runs.
func canaryCriteria(path *field.Path, criteria []platformv1.CanaryCriterion, qs queryScope) field.ErrorList {
	errs := tooMany(path, len(criteria), platformv1.MaxCanaryCriteria)
	// The list's own name (canaryCriteria, or a blue-green analysis's
	// criteria), for naming another entry of it.
	list := path.String()[strings.LastIndex(path.String(), ".")+1:]
	seen := map[string]int{}
	for i, c := range criteria {
		p := path.Index(i)
		errs = append(errs, criterion(p, c, qs)...)
		name := analysis.CriterionName(c)
		if j, dup := seen[name]; dup && name != "" {
			errs = append(errs, field.Invalid(p.Child("name"), name,
				fmt.Sprintf("criteria names must be unique: %s[%d] is also %s "+
					"(a metric's criterion is named after its metric unless name is set)", list, j, name)))
		}
		seen[name] = i
	}
	return errs
}

// criterion checks one criterion: a metric with a threshold, or a named
// query with a successCondition.
func criterion(p *field.Path, c platformv1.CanaryCriterion, qs queryScope) field.ErrorList {
	var errs field.ErrorList
	if c.Name != "" {
		if !criterionName.MatchString(c.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name,
				"lower case letters, digits, '-' and '_', starting and ending with a letter or digit"))
		}
		errs = append(errs, tooLong(p.Child("name"), c.Name, maxCriterionName)...)
	}
	switch {
	case c.Metric != "" && c.Query != "":
		return append(errs, field.Forbidden(p.Child("query"), "set metric (a built-in measurement) or query (PromQL), not both"))
	case c.Metric == "" && c.Query == "":
		return append(errs, field.Required(p.Child("metric"),
			"a built-in metric (error_rate, success_rate, latency_p95, latency_p99) or a PromQL query"))
	case c.Metric != "":
		errs = append(errs, metricCriterion(p, c)...)
	default:
		errs = append(errs, queryCriterion(p, c, qs)...)
	}
	if cmp := c.CompareToStable; cmp != (platformv1.CompareToStable{}) {
		cp := p.Child("compareToStable")
		switch {
		case cmp.MaxDelta != nil && *cmp.MaxDelta < 0:
			errs = append(errs, field.Invalid(cp.Child("maxDelta"), *cmp.MaxDelta, "must be at least 0"))
		case cmp.MaxRatio != nil && *cmp.MaxRatio < 1:
			errs = append(errs, field.Invalid(cp.Child("maxRatio"), *cmp.MaxRatio,
				"must be at least 1 (a ratio of canary to stable: 1.2 allows 20 % worse)"))
		}
	}
	return errs
}

// metricCriterion checks a built-in metric and its threshold.
func metricCriterion(p *field.Path, c platformv1.CanaryCriterion) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []setField{{"successCondition", c.SuccessCondition != ""}, {"samplesQuery", c.SamplesQuery != ""}} {
		if f.set {
			errs = append(errs, field.Forbidden(p.Child(f.name),
				"applies to a query; a metric is judged by its threshold and counts its own requests"))
		}
	}
	var percent bool
	switch c.Metric {
	case platformv1.MetricErrorRate, platformv1.MetricSuccessRate:
		percent = true
	case platformv1.MetricLatencyP95, platformv1.MetricLatencyP99:
	default:
		return append(errs, oneOf(p.Child("metric"), string(c.Metric),
			platformv1.MetricErrorRate, platformv1.MetricSuccessRate, platformv1.MetricLatencyP95, platformv1.MetricLatencyP99))
	}
	t := c.Threshold
	switch {
	case t == nil:
		errs = append(errs, field.Required(p.Child("threshold"), "the limit of the metric, e.g. 0.5 (percent) for error_rate"))
	case percent && (*t < 0 || *t > 100):
		errs = append(errs, field.Invalid(p.Child("threshold"), *t, "is a percent: must be between 0 and 100"))
	case !percent && *t <= 0:
		errs = append(errs, field.Invalid(p.Child("threshold"), *t, "is in seconds: must be more than 0"))
	}
	return errs
}

// queryCriterion checks a PromQL criterion: its name, queries and condition.
func queryCriterion(p *field.Path, c platformv1.CanaryCriterion, qs queryScope) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "a query's criterion needs a name, for status and events"))
	}
	if c.Threshold != nil {
		errs = append(errs, field.Forbidden(p.Child("threshold"),
			"applies to a metric; a query is judged by its successCondition, e.g. result < 0.05"))
	}
	errs = append(errs, promQL(p.Child("query"), c.Query, qs)...)
	if c.SamplesQuery != "" {
		errs = append(errs, promQL(p.Child("samplesQuery"), c.SamplesQuery, qs)...)
	}
	switch {
	case c.SuccessCondition == "":
		errs = append(errs, field.Required(p.Child("successCondition"),
			"a CEL expression over result that is true when the canary passes, e.g. result < 0.05"))
	case len(tooLong(p.Child("successCondition"), c.SuccessCondition, maxCondition)) > 0:
		errs = append(errs, tooLong(p.Child("successCondition"), c.SuccessCondition, maxCondition)...)
	default:
		if err := analysis.CheckCondition(c.SuccessCondition); err != nil {
			errs = append(errs, field.Invalid(p.Child("successCondition"), c.SuccessCondition, err.Error()))
		}
	}
	return errs
}

// queryScope is the scope a criterion's queries are checked against, and
// the namespace they are written in.
type queryScope struct {
	scope     analysis.Scope
	namespace string
}

// promQL checks a query: its length, its template variables, that it
// parses as PromQL, and that it reads only its namespace's series at a cost
// the operator allows.
func promQL(p *field.Path, q string, qs queryScope) field.ErrorList {
	if errs := tooLong(p, q, maxQuery); len(errs) > 0 {
		return errs
	}
	ns := qs.namespace
	if ns == "" {
		// A manifest without a namespace, checked offline: the rules are
		// the same for every namespace but its own name.
		ns = "default"
	}
	if err := analysis.CheckQuery(q, qs.scope, ns); err != nil {
		return field.ErrorList{field.Invalid(p, q, err.Error())}
	}
	return nil
}

// analysisSpec checks the analysis settings; zero is unset (the schema's
// default).
func analysisSpec(path *field.Path, a *platformv1.Analysis) field.ErrorList {
	var errs field.ErrorList
	for _, n := range []struct {
		name   string
		v      int32
		lo, hi int64
	}{
		{"intervalSeconds", a.IntervalSeconds, 5, 3600},
		{"minMeasurements", a.MinMeasurements, 1, 100},
		{"failureLimit", a.FailureLimit, 1, 100},
	} {
		if n.v != 0 {
			errs = append(errs, inRange(path.Child(n.name), &n.v, n.lo, n.hi)...)
		}
	}
	return append(errs, inRange(path.Child("minSamples"), a.MinSamples, 0, 1000000)...)
}

// rollbackAnalysis checks the rollback settings of the analysis.
func rollbackAnalysis(path *field.Path, r *platformv1.RollbackPolicy) field.ErrorList {
	var errs field.ErrorList
	switch r.OnNoData {
	case "", platformv1.NoDataPause, platformv1.NoDataRollback:
	default:
		errs = append(errs, oneOf(path.Child("onNoData"), string(r.OnNoData), platformv1.NoDataPause, platformv1.NoDataRollback))
	}
	if g := r.ProviderErrorGraceSeconds; g != 0 {
		errs = append(errs, inRange(path.Child("providerErrorGraceSeconds"), &g, 10, 86400)...)
	}
	return errs
}
