// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Defaults of a Scope: the label Prometheus Operator's and kube-prometheus's
// relabelling put a pod's namespace in, and the longest window a criterion
// may read (a step is judged on the last interval; an hour is generous).
const (
	DefaultNamespaceLabel = "namespace"
	DefaultMaxRange       = time.Hour
	// DefaultMinStep is the shortest subquery step a criterion may ask for.
	DefaultMinStep = time.Second
	// MaxSubqueryPoints bounds the points one subquery evaluates (its
	// window over its step): Prometheus's own bound on a range query's
	// points, which a subquery, being evaluated inside the query, does not
	// meet.
	MaxSubqueryPoints = 11_000
)

// Scope confines the queries of an AppDeployment's analysis to the series
// of its own namespace: the operator's Prometheus holds every tenant's
// series, and a tenant who could choose the selector could read another's,
// one number per criterion per interval, through status.
//
// Enforce rewrites a query's parsed form so that every selector (also inside
// subqueries, functions and aggregations) carries label="namespace"; Check
// refuses, at admission, a query that as written names another namespace
// or costs more than the platform allows. Both work on the AST, never on the
// text: a matcher spelt inside a string or a comment cannot fool them.
//
// The zero Scope is the default one.
type Scope struct {
	// Label is the label that holds the namespace of a series; "" is
	// DefaultNamespaceLabel.
	Label string
	// LabelFor names, for a metric whose series carry the tenant under
	// another label (a gateway's metrics labelled by the route's namespace,
	// say), that label. The platform sets it, never a tenant.
	LabelFor map[string]string
	// MaxRange bounds a range or subquery window, and an offset; 0 is
	// DefaultMaxRange.
	MaxRange time.Duration
	// MinStep bounds a subquery's step from below; 0 is DefaultMinStep.
	MinStep time.Duration
}

// ParseLabelFor reads METRIC=LABEL, as --prometheus-namespace-label-for
// gives it, into m.
func ParseLabelFor(m map[string]string, s string) error {
	metric, label, ok := strings.Cut(s, "=")
	switch {
	case !ok || metric == "" || label == "":
		return fmt.Errorf("%q: want METRIC=LABEL, such as envoy_cluster_upstream_rq=route_namespace", s)
	case !model.LegacyValidation.IsValidMetricName(metric):
		return fmt.Errorf("%q: %q is not a metric name", s, metric)
	case !model.LegacyValidation.IsValidLabelName(label):
		return fmt.Errorf("%q: %q is not a label name", s, label)
	}
	m[metric] = label
	return nil
}

// label is the label that holds the namespace of the series of metric ("" when
// the selector names no single metric).
func (s Scope) label(metric string) string {
	if l, ok := s.LabelFor[metric]; ok && metric != "" {
		return l
	}
	if s.Label == "" {
		return DefaultNamespaceLabel
	}
	return s.Label
}

// maxRange is the longest window a query may read.
func (s Scope) maxRange() time.Duration {
	if s.MaxRange <= 0 {
		return DefaultMaxRange
	}
	return s.MaxRange
}

// minStep is the shortest subquery step a query may ask for.
func (s Scope) minStep() time.Duration {
	if s.MinStep <= 0 {
		return DefaultMinStep
	}
	return s.MinStep
}

// Labels are the namespace labels the scope uses, sorted: the default and
// those of LabelFor. For documentation and logs.
func (s Scope) Labels() []string {
	set := map[string]bool{s.label(""): true}
	for _, l := range s.LabelFor {
		set[l] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// Enforce returns query with every vector and matrix selector confined to
// namespace: each gets the matcher <label>="<namespace>", label being the
// one of its metric. It refuses what Check refuses, so a query admitted
// before a rule or a flag changed is judged Invalid rather than sent. An
// error means the query is not sent.
func (s Scope) Enforce(query, namespace string) (string, error) {
	expr, err := s.confine(query, namespace, true)
	if err != nil {
		return "", err
	}
	return expr.String(), nil
}

// Check reports what is wrong with a query, as written and rendered for
// namespace, that parsing alone does not show: a matcher on the namespace
// label that is anything but label="namespace" (another namespace, a regular
// expression, a negation), a selector with no metric name and only regular
// expressions (which makes Prometheus read every series), no selector with
// a metric name at all, or a cost the scope does not allow (see
// checkCost). The error text is for a field error.
func (s Scope) Check(query, namespace string) error {
	_, err := s.confine(query, namespace, false)
	return err
}

// confine parses query, checks every selector and window, and with add
// gives each selector the matcher of namespace.
func (s Scope) confine(query, namespace string, add bool) (parser.Expr, error) {
	expr, err := promQL.ParseExpr(query)
	if err != nil {
		return nil, fmt.Errorf("not valid PromQL: %s", oneLine(err.Error()))
	}
	if err := s.confineExpr(expr, namespace, add); err != nil {
		return nil, err
	}
	return expr, nil
}

// confineExpr checks every selector and window of a parsed query, and with
// add gives each selector the matcher of namespace.
func (s Scope) confineExpr(expr parser.Expr, namespace string, add bool) error {
	if namespace == "" {
		return errors.New("no namespace to confine the query to")
	}
	var problem error
	named := false
	parser.Inspect(expr, func(node parser.Node, path []parser.Node) error {
		if problem = s.checkCost(node, path); problem != nil {
			return problem
		}
		if vs, ok := node.(*parser.VectorSelector); ok {
			named = named || metricName(vs) != ""
			if problem = s.checkSelector(vs, namespace); problem == nil && add {
				vs.LabelMatchers = confined(vs.LabelMatchers, s.label(metricName(vs)), namespace)
			}
		}
		return problem
	})
	if problem == nil && !named {
		problem = fmt.Errorf("reads no metric: a criterion must select series by a metric name, " +
			"such as sum(rate(http_requests_total[1m]))")
	}
	return problem
}

// checkCost refuses what would make one evaluation of a query read far
// more than a criterion needs, every interval: a range, subquery window or
// offset longer than the scope's bound, a subquery step shorter than its
// bound or with more than MaxSubqueryPoints points, a subquery inside a
// subquery (their points multiply), and a fixed @ time (which reads the
// same moment forever, further in the past at each measurement). path
// holds node's ancestors.
func (s Scope) checkCost(node parser.Node, path []parser.Node) error {
	switch n := node.(type) {
	case *parser.VectorSelector:
		if err := s.checkRange("an offset", absDuration(n.OriginalOffset)); err != nil {
			return err
		}
		return checkAt(n.Timestamp, n.String())
	case *parser.MatrixSelector:
		return s.checkRange("a range", n.Range)
	case *parser.SubqueryExpr:
		for _, up := range path {
			if _, ok := up.(*parser.SubqueryExpr); ok {
				return fmt.Errorf("the subquery %s is inside another subquery, which multiplies their points: "+
					"write one subquery", n.String())
			}
		}
		if err := s.checkRange("a subquery window", n.Range); err != nil {
			return err
		}
		if err := s.checkRange("an offset", absDuration(n.OriginalOffset)); err != nil {
			return err
		}
		if err := checkAt(n.Timestamp, n.String()); err != nil {
			return err
		}
		if n.Step == 0 {
			// Prometheus's evaluation interval, a setting of the server.
			return nil
		}
		if limit := s.minStep(); n.Step < limit {
			return fmt.Errorf("a subquery step of %s is shorter than the %s the operator allows (--analysis-min-step)",
				formatDuration(n.Step), formatDuration(limit))
		}
		if points := n.Range / n.Step; points > MaxSubqueryPoints {
			return fmt.Errorf("the subquery %s evaluates %d points (its window over its step), more than %d: "+
				"lengthen the step or shorten the window", n.String(), points, MaxSubqueryPoints)
		}
	}
	return nil
}

// checkAt refuses a fixed @ time; @ start() and @ end() are the time of
// the measurement, which a fixed time is not.
func checkAt(at *int64, what string) error {
	if at == nil {
		return nil
	}
	return fmt.Errorf("%s reads at a fixed time (@ %d), the same past moment at every measurement: "+
		"leave the @ out, or write @ end()", what, *at/1000)
}

// absDuration is |d|.
func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// confined is matchers with label="namespace" added, unless it is there
// (checkSelector has refused any other matcher on label).
func confined(matchers []*labels.Matcher, label, namespace string) []*labels.Matcher {
	for _, m := range matchers {
		if m.Name == label {
			return matchers
		}
	}
	return append(matchers, labels.MustNewMatcher(labels.MatchEqual, label, namespace))
}

// checkSelector refuses a selector that reads outside namespace or matches
// series by regular expressions alone.
func (s Scope) checkSelector(vs *parser.VectorSelector, namespace string) error {
	name := metricName(vs)
	label := s.label(name)
	for _, m := range vs.LabelMatchers {
		if m.Name == label && (m.Type != labels.MatchEqual || m.Value != namespace) {
			return fmt.Errorf("may only read series of namespace %q: the matcher %s reads others "+
				"(write %s=\"{{namespace}}\", or leave it out: the operator adds it)", namespace, m.String(), label)
		}
	}
	if name != "" {
		return nil
	}
	for _, m := range vs.LabelMatchers {
		if m.Type == labels.MatchEqual && m.Name != model.MetricNameLabel {
			return nil
		}
	}
	return fmt.Errorf("the selector %s names no metric and matches only by regular expressions, "+
		"which makes Prometheus read every series: name the metric", vs.String())
}

// checkRange refuses a window longer than the scope's bound.
func (s Scope) checkRange(what string, d time.Duration) error {
	if limit := s.maxRange(); d > limit {
		return fmt.Errorf("%s of %s is longer than the %s the operator allows (--analysis-max-range)",
			what, formatDuration(d), formatDuration(limit))
	}
	return nil
}

// metricName is the one metric a selector reads: its name, or the value of
// an equality matcher on __name__; "" when it names none.
func metricName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// formatDuration prints d as PromQL writes durations: 1h, 1h30m, 30s.
func formatDuration(d time.Duration) string {
	return model.Duration(d).String()
}
