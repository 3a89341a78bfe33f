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
	"k8s.io/apimachinery/pkg/util/validation"
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
	// say), that label and where the series come from. The platform sets
	// it, never a tenant.
	LabelFor map[string]LabelFor
	// Extra are matchers added to every selector, such as cluster="east"
	// on a Prometheus (Thanos, Mimir) that holds several clusters' series,
	// where a namespace's name alone is not one tenant's. A tenant's
	// matcher on one of their labels is refused unless it is the same.
	Extra []*labels.Matcher
	// MaxRange bounds a range or subquery window, and an offset; 0 is
	// DefaultMaxRange.
	MaxRange time.Duration
	// MinStep bounds a subquery's step from below; 0 is DefaultMinStep.
	MinStep time.Duration
}

// LabelFor is where one metric keeps the tenant's namespace.
type LabelFor struct {
	// Label holds the tenant's namespace, such as route_namespace, or
	// exported_namespace when the exposing pod sets namespace itself.
	Label string
	// Source is the namespace the series come from (under the scope's own
	// label): the ingress controller's or the gateway's. Every selector of
	// the metric gets that matcher too: any pod that is scraped can expose
	// the metric with Label set to another tenant's namespace, and only
	// the platform's component is believed. ParseLabelFor never leaves it
	// empty; a LabelFor without it confines by Label alone.
	Source string
}

// ParseLabelFor reads METRIC=LABEL@NAMESPACE, as
// --prometheus-namespace-label-for gives it, into m.
func ParseLabelFor(m map[string]LabelFor, s string) error {
	metric, rest, ok := strings.Cut(s, "=")
	label, source, pinned := strings.Cut(rest, "@")
	switch {
	case !ok || metric == "" || label == "":
		return fmt.Errorf("%q: want METRIC=LABEL@NAMESPACE, such as "+
			"envoy_cluster_upstream_rq_total=route_namespace@gateway-system", s)
	case !model.LegacyValidation.IsValidMetricName(metric):
		return fmt.Errorf("%q: %q is not a metric name", s, metric)
	case !model.LegacyValidation.IsValidLabelName(label):
		return fmt.Errorf("%q: %q is not a label name", s, label)
	case !pinned || source == "":
		return fmt.Errorf("%q: name the namespace the series come from, METRIC=LABEL@NAMESPACE (the ingress "+
			"controller's or gateway's): any pod that is scraped can expose %s with %s set to another tenant's "+
			"namespace, and only that namespace's series are believed", s, metric, label)
	case len(validation.IsDNS1123Label(source)) > 0:
		return fmt.Errorf("%q: %q is not a namespace name", s, source)
	}
	m[metric] = LabelFor{Label: label, Source: source}
	return nil
}

// ParseExtraMatcher reads a matcher such as cluster="east", as
// --prometheus-extra-matcher gives it: an equality on a label other than
// the metric name.
func ParseExtraMatcher(s string) (*labels.Matcher, error) {
	ms, err := promQL.ParseMetricSelector("{" + s + "}")
	switch {
	case err != nil:
		return nil, fmt.Errorf("%q: want LABEL=\"VALUE\", such as cluster=\"east\": %s", s, oneLine(err.Error()))
	case len(ms) != 1 || ms[0].Type != labels.MatchEqual:
		return nil, fmt.Errorf("%q: want one equality, LABEL=\"VALUE\", such as cluster=\"east\"", s)
	case ms[0].Name == model.MetricNameLabel:
		return nil, fmt.Errorf("%q: the metric name is the criterion's, not the platform's", s)
	}
	return ms[0], nil
}

// Validate reports what is wrong with the scope as the flags gave it: a
// label used for two things, an extra matcher on a namespace label.
func (s Scope) Validate() error {
	def := s.label("")
	for metric, lf := range s.LabelFor {
		if lf.Label == def {
			return fmt.Errorf("--prometheus-namespace-label-for %s=%s@%s: %s is already the namespace label "+
				"(--prometheus-namespace-label); name the label that holds the tenant's namespace", metric, lf.Label, lf.Source, lf.Label)
		}
	}
	seen := map[string]bool{}
	for _, m := range s.Extra {
		if slices.Contains(s.Labels(), m.Name) {
			return fmt.Errorf("--prometheus-extra-matcher %s: %s holds a tenant's namespace, which the operator sets", m, m.Name)
		}
		if seen[m.Name] {
			return fmt.Errorf("--prometheus-extra-matcher %s: a second matcher on %s", m, m.Name)
		}
		seen[m.Name] = true
	}
	return nil
}

// label is the label that holds the namespace of the series of metric ("" when
// the selector names no single metric).
func (s Scope) label(metric string) string {
	if lf, ok := s.LabelFor[metric]; ok && metric != "" {
		return lf.Label
	}
	if s.Label == "" {
		return DefaultNamespaceLabel
	}
	return s.Label
}

// pins are the matchers every selector of metric gets besides its
// namespace: the platform's extra matchers and, for a metric of LabelFor,
// the namespace its series come from.
func (s Scope) pins(metric string) []*labels.Matcher {
	pins := s.Extra
	if lf, ok := s.LabelFor[metric]; ok && metric != "" && lf.Source != "" {
		pins = append(slices.Clip(pins), labels.MustNewMatcher(labels.MatchEqual, s.label(""), lf.Source))
	}
	return pins
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
	for _, lf := range s.LabelFor {
		set[lf.Label] = true
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
			name := metricName(vs)
			named = named || name != ""
			if problem = s.checkSelector(vs, namespace); problem == nil && add {
				vs.LabelMatchers = confined(vs.LabelMatchers, labels.MustNewMatcher(labels.MatchEqual, s.label(name), namespace))
				for _, pin := range s.pins(name) {
					vs.LabelMatchers = confined(vs.LabelMatchers, pin)
				}
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
		return s.checkShift(n.OriginalOffset, n.Timestamp, n.String())
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
		if err := s.checkShift(n.OriginalOffset, n.Timestamp, n.String()); err != nil {
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

// checkShift refuses what moves the time a selector or subquery (what)
// reads: an offset, either way, longer than the scope's bound, and a fixed
// @ time; @ start() and @ end() are the time of the measurement, which a
// fixed time is not.
func (s Scope) checkShift(offset time.Duration, at *int64, what string) error {
	if err := s.checkRange("an offset", offset.Abs()); err != nil {
		return err
	}
	if at != nil {
		return fmt.Errorf("%s reads at a fixed time (@ %d), the same past moment at every measurement: "+
			"leave the @ out, or write @ end()", what, *at/1000)
	}
	return nil
}

// confined is matchers with want added, unless a matcher on its label is
// there (checkSelector has refused any but want itself).
func confined(matchers []*labels.Matcher, want *labels.Matcher) []*labels.Matcher {
	for _, m := range matchers {
		if m.Name == want.Name {
			return matchers
		}
	}
	return append(matchers, want)
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
		for _, pin := range s.pins(name) {
			if m.Name == pin.Name && (m.Type != labels.MatchEqual || m.Value != pin.Value) {
				return fmt.Errorf("the matcher %s reads series the platform does not vouch for: the operator "+
					"reads %s only with %s; leave it out", m.String(), name, pin.String())
			}
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
