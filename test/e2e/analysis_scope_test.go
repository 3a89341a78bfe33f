//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// TestAnalysis_ATenantsQueryReadsOnlyItsOwnNamespace: a tenant's criterion
// that names another namespace's application, with no namespace matcher of
// its own, reads nothing of it through the real Prometheus: the operator
// confines the query to the tenant's namespace before sending it, so the
// victim's request rate never reaches the tenant's status.
func TestAnalysis_ATenantsQueryReadsOnlyItsOwnNamespace(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	g := NewWithT(t)
	victimNs, attackerNs := newNamespace(t), newNamespace(t)
	victim := app(victimNs, func(ad *platformv1.AppDeployment) {
		ad.Name = "payments"
		ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyRolling}
	})
	released(t, victim)
	// The victim's traffic is in Prometheus: this is what the tenant is
	// after.
	peek := `sum(rate(http_requests_total{app="payments"}[1m]))`
	g.Eventually(func(g Gomega) {
		own := `sum(rate(http_requests_total{app="payments",namespace="` + victimNs + `"}[1m]))`
		v, err := prometheus.QueryValue(t.Context(), own)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(v).To(BeNumerically(">", 0))
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())

	attacker := analysedApp(attackerNs, func(ad *platformv1.AppDeployment) {
		ad.Name = "peek"
		ad.Spec.Strategy.CanaryCriteria = []platformv1.CanaryCriterion{{
			Name: "peek", Query: peek, SuccessCondition: "result >= 0.0"}}
	})
	released(t, attacker)
	change(t, attacker, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	got := waitAnalysed(t, attacker, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.Canary).NotTo(BeNil())
		g.Expect(got.Status.Canary.Analysis).NotTo(BeNil())
		g.Expect(got.Status.Canary.Analysis.Criteria).NotTo(BeEmpty())
		g.Expect(got.Status.Canary.Analysis.Criteria[0].Message).NotTo(BeEmpty())
	})
	cs := got.Status.Canary.Analysis.Criteria[0]
	if cs.StableValue != "" || cs.Value != "" {
		t.Fatalf("the tenant's criterion read %q (stable) and %q (canary) of another namespace's application: %s",
			cs.StableValue, cs.Value, cs.Message)
	}
	g.Expect(cs.Message).To(ContainSubstring("no data"))
}
