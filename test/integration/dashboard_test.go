// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	promlabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// dashboardPath is the Grafana dashboard both installs ship: config/grafana
// wraps it in a ConfigMap, the chart a copy of it (files/).
const dashboardPath = "config/grafana/platform-operator.json"

// dashboard is the part of a Grafana dashboard model the tests read.
type dashboard struct {
	UID           string           `json:"uid"`
	Title         string           `json:"title"`
	SchemaVersion int              `json:"schemaVersion"`
	Panels        []dashboardPanel `json:"panels"`
	Templating    struct {
		List []dashboardVariable `json:"list"`
	} `json:"templating"`
}

// dashboardPanel is a panel, or a row: a collapsed row holds its panels.
type dashboardPanel struct {
	ID          int              `json:"id"`
	Type        string           `json:"type"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Collapsed   bool             `json:"collapsed"`
	GridPos     *gridPos         `json:"gridPos"`
	Datasource  *datasourceRef   `json:"datasource"`
	Targets     []panelTarget    `json:"targets"`
	Panels      []dashboardPanel `json:"panels"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

// gridPos is where a panel sits on Grafana's grid, 24 columns wide.
type gridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// overlaps reports whether two panels share a cell of the grid.
func (p gridPos) overlaps(o gridPos) bool {
	return p.X < o.X+o.W && o.X < p.X+p.W && p.Y < o.Y+o.H && o.Y < p.Y+p.H
}

// datasourceRef names the data source a panel or query reads.
type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// panelTarget is one query of a panel.
type panelTarget struct {
	RefID      string         `json:"refId"`
	Expr       string         `json:"expr"`
	Datasource *datasourceRef `json:"datasource"`
}

// dashboardVariable is a template variable; a query variable's query is a
// string in older dashboards and an object in newer ones.
type dashboardVariable struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Query json.RawMessage `json:"query"`
}

// query is a query variable's PromQL-like query text.
func (v dashboardVariable) query() (string, error) {
	var s string
	if err := json.Unmarshal(v.Query, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(v.Query, &obj); err != nil {
		return "", fmt.Errorf("variable %q: query is neither a string nor an object with a query: %w", v.Name, err)
	}
	return obj.Query, nil
}

// readDashboard decodes the shipped dashboard.
func readDashboard(t *testing.T) *dashboard {
	t.Helper()
	data := readDashboardFile(t)
	d := &dashboard{}
	if err := json.Unmarshal(data, d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d
}

// readDashboardFile reads the shipped dashboard's bytes.
func readDashboardFile(t *testing.T) []byte {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, dashboardPath))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// allPanels is every panel of the dashboard, those inside collapsed rows
// included, rows too.
func (d *dashboard) allPanels() []dashboardPanel {
	all := make([]dashboardPanel, 0, len(d.Panels))
	for _, p := range d.Panels {
		all = append(all, p)
		all = append(all, p.Panels...)
	}
	return all
}

// dashboardQuery is one PromQL query of the dashboard and where it is.
type dashboardQuery struct {
	where string
	expr  string
}

// queries lists every query of the dashboard: the panels' targets and the
// query variables' series selectors or expressions.
func (d *dashboard) queries(t *testing.T) []dashboardQuery {
	t.Helper()
	qs := make([]dashboardQuery, 0, len(d.Panels)+len(d.Templating.List))
	for _, p := range d.allPanels() {
		for _, tg := range p.Targets {
			qs = append(qs, dashboardQuery{where: fmt.Sprintf("panel %d %q, query %s", p.ID, p.Title, tg.RefID), expr: tg.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, err := v.query()
		if err != nil {
			t.Error(err)
			continue
		}
		expr, err := variablePromQL(q)
		if err != nil {
			t.Errorf("variable %q: %v", v.Name, err)
			continue
		}
		qs = append(qs, dashboardQuery{where: fmt.Sprintf("variable %q", v.Name), expr: expr})
	}
	return qs
}

// variablePromQL is the PromQL inside a Prometheus query variable: the
// series selector of label_values(selector, label), the expression of
// query_result(expr). label_values(label) alone names no metric and lists
// the label's values across all of Prometheus, so it is refused with the
// other forms (metrics(), label_names()).
func variablePromQL(q string) (string, error) {
	q = strings.TrimSpace(q)
	if args, ok := call(q, "label_values"); ok {
		if i := strings.LastIndex(args, ","); i >= 0 {
			return strings.TrimSpace(args[:i]), nil
		}
		return "", fmt.Errorf("%s names no metric: use label_values(metric, label)", q)
	}
	if expr, ok := call(q, "query_result"); ok {
		return expr, nil
	}
	return "", fmt.Errorf("%s: want label_values(metric, label) or query_result(expr)", q)
}

// call returns the arguments of q when q is fn(arguments).
func call(q, fn string) (string, bool) {
	if !strings.HasPrefix(q, fn+"(") || !strings.HasSuffix(q, ")") {
		return "", false
	}
	return strings.TrimSuffix(strings.TrimPrefix(q, fn+"("), ")"), true
}

// grafanaBuiltins stand in for the variables Grafana defines itself: valid
// PromQL where a dashboard may put them (range selectors, offsets).
var grafanaBuiltins = map[string]string{
	"__rate_interval":    "5m",
	"__interval":         "5m",
	"__range":            "1h",
	"__rate_interval_ms": "300000",
	"__interval_ms":      "300000",
	"__range_ms":         "3600000",
	"__range_s":          "3600",
}

// grafanaVariable matches the three syntaxes of a variable reference:
// ${name} or ${name:format}, [[name]] and $name.
var grafanaVariable = regexp.MustCompile(`\$\{(\w+)(?:[:.][^}]*)?\}|\[\[(\w+)(?::\w+)?\]\]|\$(\w+)`)

// interpolate replaces the dashboard's variables in expr with stand-ins
// that parse, as Grafana replaces them with their values before querying.
// A dashboard variable stands in as a label value, the only place this
// dashboard puts one; $1 and the like (label_replace's) are left alone. A
// reference to a variable the dashboard does not define is an error.
func interpolate(expr string, vars map[string]dashboardVariable) (string, error) {
	var undefined []string
	out := grafanaVariable.ReplaceAllStringFunc(expr, func(ref string) string {
		m := grafanaVariable.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		if name[0] >= '0' && name[0] <= '9' {
			return ref
		}
		if s, ok := grafanaBuiltins[name]; ok {
			return s
		}
		v, ok := vars[name]
		switch {
		case !ok:
			undefined = append(undefined, ref)
			return ref
		case v.Type == "interval":
			return "5m"
		default:
			return "standin"
		}
	})
	if len(undefined) > 0 {
		return "", fmt.Errorf("refers to undefined variables %v", undefined)
	}
	return out, nil
}

// metricNames is every metric name expr's selectors name: a name or
// __name__="name", and each name of __name__=~"a|b". A selector of
// metrics that cannot be listed (another regular expression, __name__!=)
// is an error, since it cannot be checked.
func metricNames(expr parser.Expr) ([]string, error) {
	var names []string
	var err error
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name != model.MetricNameLabel {
				continue
			}
			switch set := m.SetMatches(); {
			case m.Type == promlabels.MatchEqual:
				names = append(names, m.Value)
			case m.Type == promlabels.MatchRegexp && len(set) > 0:
				names = append(names, set...)
			default:
				err = fmt.Errorf("selector %s: name the metrics, or list them as __name__=~\"a|b\"", vs)
			}
		}
		return nil
	})
	return names, err
}

// probe is a collector that describes one family and collects nothing.
type probe struct{ desc *prometheus.Desc }

// Describe implements prometheus.Collector.
func (p probe) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

// Collect implements prometheus.Collector.
func (probe) Collect(chan<- prometheus.Metric) {}

// managerMetrics is what the manager under test serves on /metrics: the
// families its registry gathers, and the families registered that have no
// series yet (a vector before its first observation), which Gather leaves
// out.
type managerMetrics struct {
	reg      ctrlmetrics.RegistererGatherer
	gathered map[string]dto.MetricType
}

// gatherManagerMetrics reads the manager's registry.
func gatherManagerMetrics(t *testing.T) *managerMetrics {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		// A collector that failed a scrape; the rest are still served.
		t.Logf("gather the manager's metrics: %v", err)
	}
	m := &managerMetrics{reg: ctrlmetrics.Registry, gathered: map[string]dto.MetricType{}}
	for _, f := range families {
		m.gathered[f.GetName()] = f.GetType()
	}
	return m
}

// registered reports whether a collector of the registry describes a family
// named name, series or not. The registry has no list of its descriptors,
// so it is asked to take one more: it refuses a descriptor of a name it
// holds (here with other help text), and takes one of a new name, which is
// unregistered at once.
func (m *managerMetrics) registered(t *testing.T, name string) bool {
	t.Helper()
	p := probe{prometheus.NewDesc(name, "Probe of the Grafana dashboard test; collects nothing.", nil, nil)}
	if err := p.desc.Err(); err != nil {
		t.Fatalf("%q is not a metric name: %v", name, err)
	}
	if err := m.reg.Register(p); err != nil {
		return true
	}
	m.reg.Unregister(p)
	return false
}

// has reports whether a selector of name finds series of the manager's: a
// family's name, or a histogram's or summary's _bucket, _sum and _count.
func (m *managerMetrics) has(t *testing.T, name string) bool {
	t.Helper()
	if _, ok := m.gathered[name]; ok || m.registered(t, name) {
		return true
	}
	for suffix, types := range map[string][]dto.MetricType{
		"_bucket": {dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM},
		"_sum":    {dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM, dto.MetricType_SUMMARY},
		"_count":  {dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM, dto.MetricType_SUMMARY},
	} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		if typ, ok := m.gathered[base]; ok {
			return slices.Contains(types, typ)
		}
		// No series yet, so no type to check: a name is all there is.
		return m.registered(t, base)
	}
	return false
}

// Every query of the dashboard, panels and variables, must parse as PromQL
// once Grafana's variables are in, and every metric it names must be one
// the manager exports: a renamed metric, or one that is dropped, fails
// here and names the panel, rather than leaving an empty graph to be found
// during an incident.
func TestGrafanaDashboard_EveryQueryParsesAndNamesAnExportedMetric(t *testing.T) {
	// A reconcile that made a CronJob, so the controllers' and the
	// webhooks' series exist as they do in a running install.
	createTask(t, testutil.NewScheduleTask(newNamespace(t), "dashboard"))
	exported := gatherManagerMetrics(t)
	if !exported.registered(t, "platform_operator_reconcile_duration_seconds") ||
		exported.registered(t, "platform_operator_dashboard_test_absent") {
		t.Fatal("the registry no longer refuses a second descriptor of a name it holds: " +
			"this test cannot see the families that have no series yet")
	}

	d := readDashboard(t)
	vars := map[string]dashboardVariable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	promQL := parser.NewParser(parser.Options{})
	queries := d.queries(t)
	if len(queries) == 0 {
		t.Fatalf("%s: no queries", dashboardPath)
	}
	for _, q := range queries {
		if strings.TrimSpace(q.expr) == "" {
			t.Errorf("%s: empty query", q.where)
			continue
		}
		expr, err := interpolate(q.expr, vars)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		parsed, err := promQL.ParseExpr(expr)
		if err != nil {
			t.Errorf("%s: not PromQL: %v\n%s", q.where, err, expr)
			continue
		}
		names, err := metricNames(parsed)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
		}
		if len(names) == 0 && err == nil {
			t.Errorf("%s names no metric: %s", q.where, q.expr)
		}
		for _, name := range names {
			if !exported.has(t, name) {
				t.Errorf("%s: the manager exports no metric %s", q.where, name)
			}
		}
	}
}

// Every panel has a title, a place on the grid that no other panel takes, a
// unique id, a description and a unit, and reads the data source the user
// picks: a dashboard pinned to a data source uid of someone's Grafana shows
// nothing in anyone else's.
func TestGrafanaDashboard_PanelsAreTitledPlacedAndNumberedOnce(t *testing.T) {
	d := readDashboard(t)
	if d.UID != "platform-operator" || d.Title != "platform-operator" {
		t.Errorf("uid %q, title %q; want platform-operator for both, so links and provisioning find it", d.UID, d.Title)
	}
	if d.SchemaVersion == 0 {
		t.Error("no schemaVersion: Grafana would migrate the dashboard as the oldest it knows")
	}
	var datasource bool
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" && string(v.Query) == `"prometheus"` {
			datasource = true
		}
	}
	if !datasource {
		t.Error(`no template variable "datasource" of type datasource listing the prometheus data sources`)
	}

	ids := map[int]string{}
	for _, p := range d.allPanels() {
		checkPanel(t, p, ids)
	}

	// Top-level panels share the grid with each other; a collapsed row's
	// panels, with each other (Grafana moves the rest down to open it).
	groups := [][]dashboardPanel{d.Panels}
	for _, p := range d.Panels {
		if p.Collapsed {
			groups = append(groups, p.Panels)
		}
	}
	for _, group := range groups {
		for i, p := range group {
			for _, o := range group[i+1:] {
				if p.GridPos != nil && o.GridPos != nil && p.GridPos.overlaps(*o.GridPos) {
					t.Errorf("panels %q and %q overlap: %+v, %+v", p.Title, o.Title, *p.GridPos, *o.GridPos)
				}
			}
		}
	}
}

// checkPanel checks one panel (or row) of the dashboard: an id no other
// panel of ids has, a title, a place on the grid, and, for a panel, a
// description, a unit, queries and the data source variable.
func checkPanel(t *testing.T, p dashboardPanel, ids map[int]string) {
	t.Helper()
	where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
	if p.ID <= 0 {
		t.Errorf("%s: no id", where)
	} else if other, dup := ids[p.ID]; dup {
		t.Errorf("%s: id taken by %q too", where, other)
	}
	ids[p.ID] = p.Title
	if p.Title == "" {
		t.Errorf("%s: no title", where)
	}
	if g := p.GridPos; g == nil || g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
		t.Errorf("%s: gridPos %+v; want one inside the 24 columns", where, g)
	}
	if p.Type == "row" {
		if !p.Collapsed && len(p.Panels) > 0 {
			t.Errorf("%s: an expanded row holds panels; Grafana shows an expanded row's panels after it", where)
		}
		return
	}
	if p.Description == "" {
		t.Errorf("%s: no description of what to look for", where)
	}
	if p.FieldConfig.Defaults.Unit == "" {
		t.Errorf("%s: no unit", where)
	}
	if len(p.Targets) == 0 {
		t.Errorf("%s: no queries", where)
	}
	refs := []*datasourceRef{p.Datasource}
	for _, tg := range p.Targets {
		if tg.Datasource != nil {
			refs = append(refs, tg.Datasource)
		}
	}
	for _, ds := range refs {
		if ds == nil || ds.UID != "${datasource}" {
			t.Errorf("%s: data source %+v; want uid ${datasource}", where, ds)
		}
	}
}
