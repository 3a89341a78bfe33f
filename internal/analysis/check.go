// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/prometheus/prometheus/promql/parser"
	"k8s.io/utils/lru"
)

// sampleVars fill a query's variables for CheckQuery: values of the shape
// the controller passes, so that what parses here parses at measure time.
// CheckQuery replaces the namespace with the AppDeployment's.
var sampleVars = Vars{
	Namespace: "default",
	Name:      "app",
	Version:   "v1.0.0",
	Revision:  "5d8f7c9b6",
	Track:     "canary",
	Interval:  60 * time.Second,
}

// promQL parses as a stock Prometheus server does: without the experimental
// functions and syntax it enables only by feature flag, so a query admitted
// here is not refused by a default Prometheus.
var promQL = parser.NewParser(parser.Options{})

// CheckQuery reports what is wrong with a criterion's query, as written in
// namespace, before it ever runs: an unknown template variable, or (after
// rendering with sample values and the namespace) a query that does not
// parse as PromQL, one whose type is not a scalar or an instant vector (a
// range vector `x[5m]`, a string), or one the scope refuses (another
// namespace's series, a window too long, a selector of every series). nil
// when fine. The error text is for a field error: no field path in it.
func CheckQuery(query string, scope Scope, namespace string) error {
	v := sampleVars
	v.Namespace = namespace
	expr, err := checkQuery(query, v)
	if err != nil {
		return err
	}
	// The parse that checked the type is the one the scope checks: a query
	// is parsed once at admission.
	return scope.confineExpr(expr, namespace, false)
}

// checkQuery renders query with v and checks that it parses as PromQL of a
// type that gives one number; it returns the parsed query.
func checkQuery(query string, v Vars) (parser.Expr, error) {
	rendered, err := Render(query, v)
	if err != nil {
		return nil, err
	}
	expr, err := promQL.ParseExpr(rendered)
	if err != nil {
		// The parser's message can span lines (one per error); a field error
		// reads best on one.
		return nil, fmt.Errorf("not valid PromQL: %s", oneLine(err.Error()))
	}
	switch t := expr.Type(); t {
	case parser.ValueTypeScalar, parser.ValueTypeVector:
		return expr, nil
	default:
		return nil, fmt.Errorf("returns a %s; want an instant vector or a scalar, one number", parser.DocumentedType(t))
	}
}

// conditionCostLimit bounds the work of one evaluation of a successCondition.
// A comparison costs a few units; the bound is there for a nest of
// comprehensions over literal lists, which could otherwise keep a reconcile
// busy for minutes. CheckCondition refuses a condition whose worst case
// exceeds it, and evaluation stops at it.
const conditionCostLimit = 100_000

// conditionEnv is the CEL environment of a successCondition: one variable,
// result, a double. Numeric comparisons across types are allowed so that
// "result < 1" means what it says instead of failing to type-check for
// comparing a double with an int.
var conditionEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("result", cel.DoubleType),
		cel.CrossTypeNumericComparisons(true),
	)
})

// CheckCondition compiles a successCondition: CEL over one variable `result` (double);
// it must have type bool. Errors say what is wrong (syntax, unknown variable, not bool).
func CheckCondition(expr string) error {
	_, err := compileCondition(expr)
	return err
}

// compiledConditions holds the programs (or errors) of the conditions
// compiled last, by expression: admission checks every criterion of every
// AppDeployment it admits, and the measurer evaluates them each interval,
// while a fleet holds few distinct conditions. Compiling one costs a
// parser's run and tens of allocations; a hit, a map lookup.
var compiledConditions = lru.New(1024)

// compiled is a compiled condition, or why it does not compile.
type compiled struct {
	prg cel.Program
	err error
}

// compileCondition is the program of a successCondition, ready to evaluate
// concurrently (a cel.Program is safe for concurrent use).
func compileCondition(expr string) (cel.Program, error) {
	if c, ok := compiledConditions.Get(expr); ok {
		return c.(compiled).prg, c.(compiled).err
	}
	prg, err := compileConditionAnew(expr)
	compiledConditions.Add(expr, compiled{prg: prg, err: err})
	return prg, err
}

// compileConditionAnew compiles a successCondition.
func compileConditionAnew(expr string) (cel.Program, error) {
	env, err := conditionEnv()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	if strings.TrimSpace(expr) == "" {
		return nil, errors.New("is empty; want a CEL expression over result, such as result < 0.05")
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		msgs := make([]string, 0, len(iss.Errors()))
		for _, e := range iss.Errors() {
			msgs = append(msgs, fmt.Sprintf("%d:%d: %s", e.Location.Line(), e.Location.Column()+1, e.Message))
		}
		msg := strings.Join(msgs, "; ")
		if strings.Contains(msg, "(double, int)") || strings.Contains(msg, "(int, double)") {
			// CEL converts between number types only to compare their
			// order: result == 0 and result * 100 need 0.0 and 100.0.
			msg += " (write whole numbers with a decimal point, 1.0, to combine them with result)"
		}
		return nil, fmt.Errorf("not a valid CEL condition over result (a double): %s", msg)
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("has type %s; want bool (true when the canary passes), such as result < 0.05",
			ast.OutputType())
	}
	est, err := env.EstimateCost(ast, noEstimates{})
	if err != nil {
		return nil, fmt.Errorf("cannot estimate its cost: %w", err)
	}
	if est.Max > conditionCostLimit {
		return nil, fmt.Errorf("too expensive: its worst case costs %d, more than %d", est.Max, conditionCostLimit)
	}
	prg, err := env.Program(ast, cel.CostLimit(conditionCostLimit))
	if err != nil {
		return nil, fmt.Errorf("CEL program: %w", err)
	}
	return prg, nil
}

// noEstimates leaves every size and call to CEL's own worst-case estimate:
// a condition's only input is a double, which has no size.
type noEstimates struct{}

func (noEstimates) EstimateSize(checker.AstNode) *checker.SizeEstimate { return nil }

func (noEstimates) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// oneLine joins the non-blank lines of s with "; ", for messages that
// must stay on one line.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
