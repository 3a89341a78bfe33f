// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// TestAppDeployment_ATenantsQueryMayReadOnlyItsOwnNamespace: a tenant with
// rights in one namespace writes canary criteria that read another
// namespace's series (the first attack of the threat model). The webhook
// refuses each, naming the field, and admits the query that names its own
// namespace through {{namespace}} or literally.
func TestAppDeployment_ATenantsQueryMayReadOnlyItsOwnNamespace(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	tenant := userClient(t, ns, "mallory", []rbacv1.PolicyRule{appRule, deploymentRule})
	withQuery := func(name, query string) *platformv1.AppDeployment {
		ad := sampleApp(t, ns)
		ad.Name = name
		ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30,
			CanaryCriteria: []platformv1.CanaryCriterion{{Name: "peek", Query: query, SuccessCondition: "result >= 0.0"}}}
		return ad
	}
	for i, query := range []string{
		`sum(rate(http_requests_total{namespace="default"}[1m]))`,
		`sum(rate(http_requests_total{namespace=~".+"}[1m]))`,
		`sum(rate(http_requests_total{namespace!="` + ns + `"}[1m]))`,
		`max_over_time(sum(rate(http_requests_total{namespace="kube-system"}[1m]))[10m:1m])`,
		`count({__name__=~".+"})`,
		`sum(rate(http_requests_total[2h]))`,
	} {
		err := tenant.Create(ctx, withQuery(fmt.Sprintf("peek-%d", i), query))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.strategy.canaryCriteria[0].query") {
			t.Errorf("query %s: create = %v, want it refused naming spec.strategy.canaryCriteria[0].query", query, err)
			continue
		}
		own := `may only read series of namespace "` + ns + `"`
		if strings.Contains(query, "namespace") && !strings.Contains(err.Error(), own) {
			t.Errorf("query %s: refusal %q does not say which namespace it may read", query, err)
		}
	}
	for i, query := range []string{
		`sum(rate(http_requests_total{namespace="{{namespace}}",app="{{name}}"}[1m]))`,
		`sum(rate(http_requests_total{namespace="` + ns + `"}[1m]))`,
		`sum(rate(http_requests_total{app="{{name}}"}[1m]))`,
	} {
		ad := withQuery(fmt.Sprintf("own-%d", i), query)
		ad.Spec.Strategy.CanaryCriteria[0].SamplesQuery = ""
		ad.Spec.Replicas = ptr.To[int32](3)
		if err := tenant.Create(ctx, ad); err != nil {
			t.Errorf("query %s of its own namespace: %v", query, err)
		}
	}
}

// TestAppDeployment_AQueryThatWouldBurnPrometheusIsRefused: the third
// attack of issue 42, a criterion whose one evaluation is millions of
// points (a subquery of a subquery at a step of a millisecond), measured
// every 5 s, was admitted by a server dry run. The webhook now refuses it
// and each other way to make one evaluation costly, naming the field and
// the bound.
func TestAppDeployment_AQueryThatWouldBurnPrometheusIsRefused(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	tenant := userClient(t, ns, "mallory", []rbacv1.PolicyRule{appRule, deploymentRule})
	for i, c := range []struct{ query, bound string }{
		{`max_over_time(quantile_over_time(0.5, vector(1)[1h:1ms])[1h:1ms])`,
			"a subquery step of 1ms is shorter than the 1s the operator allows (--analysis-min-step)"},
		{`max_over_time(quantile_over_time(0.5, http_requests_total[1h:1s])[1h:1s])`,
			"inside another subquery, which multiplies their points"},
		{`sum(rate(http_requests_total[5m] offset 30d))`, "an offset of 30d is longer than the 1h the operator allows"},
		{`sum(rate(http_requests_total[5m] @ 1609746000))`, "reads at a fixed time"},
		{`vector(1)`, "reads no metric"},
	} {
		ad := sampleApp(t, ns)
		ad.Name = fmt.Sprintf("burn-%d", i)
		ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30,
			Analysis:       platformv1.Analysis{IntervalSeconds: 5},
			CanaryCriteria: []platformv1.CanaryCriterion{{Name: "burn", Query: c.query, SuccessCondition: "result >= 0.0"}}}
		err := tenant.Create(ctx, ad)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.strategy.canaryCriteria[0].query") ||
			!strings.Contains(err.Error(), c.bound) {
			t.Errorf("query %s: create = %v, want it refused naming spec.strategy.canaryCriteria[0].query and %q",
				c.query, err, c.bound)
		}
	}
}
