//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/test/harness"
)

// TestAnalysis_ForgedSeriesReachNoVerdictOfAnotherNamespace is the fourth
// attack of issue 42, on a real Prometheus scraping as Kubernetes service
// discovery does (each target's namespace label, honor_labels false). The
// ingress controller in ingress-nginx exposes
// nginx_ingress_controller_requests labelled by the ingress's namespace,
// stored as exported_namespace; the platform names that label for the
// metric. A tenant's pod in attacker is scraped too and exposes the same
// metric with namespace="victim" and status 503. Confined by
// exported_namespace alone, the victim's criterion reads the forged 503s
// and fails a healthy canary; pinned to the series of ingress-nginx
// (METRIC=LABEL@NAMESPACE), it reads the controller's only and passes.
func TestAnalysis_ForgedSeriesReachNoVerdictOfAnotherNamespace(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	const metric = "nginx_ingress_controller_requests"
	ingress := exposeMetrics(t, fmt.Sprintf(`%s{namespace="victim",ingress="shop",status="200"} 1000`, metric))
	forger := exposeMetrics(t, fmt.Sprintf(`%s{namespace="victim",ingress="shop",status="503"} 500`, metric))
	prom, err := harness.StartPrometheus(ctx, t.TempDir(),
		harness.ScrapeTarget{Job: "ingress-nginx", Address: ingress, Labels: map[string]string{"namespace": "ingress-nginx"}},
		harness.ScrapeTarget{Job: "attacker-pod", Address: forger, Labels: map[string]string{"namespace": "attacker"}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(prom.Stop)
	// Both targets scraped: the forged series is there, under the
	// attacker's namespace.
	g.Eventually(func() (float64, error) {
		return prom.QueryValue(ctx,
			fmt.Sprintf(`count(%s{exported_namespace="victim",namespace=~"ingress-nginx|attacker"})`, metric))
	}).WithTimeout(30 * time.Second).Should(BeEquivalentTo(2))

	provider, err := analysis.NewPrometheus(analysis.Connection{Address: prom.Address(), Timeout: 5 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	criterion := platformv1.CanaryCriterion{Name: "errors",
		Query:            fmt.Sprintf(`sum(%s{ingress="shop",status=~"5.."}) or vector(0)`, metric),
		SuccessCondition: "result < 1.0"}
	verdict := func(scope analysis.Scope) analysis.Measurement {
		compiled, err := analysis.Compile(criterion, scope)
		g.Expect(err).NotTo(HaveOccurred())
		vars := analysis.Vars{Namespace: "victim", Name: "shop", Track: platformv1.TrackCanary, Interval: time.Minute}
		return analysis.Measure(ctx, provider, compiled, vars, vars, 0, time.Now())
	}

	// The label alone, as --prometheus-namespace-label-for took it
	// before: the forged 503s fail the victim's canary.
	unpinned := analysis.Scope{LabelFor: map[string]analysis.LabelFor{metric: {Label: "exported_namespace"}}}
	before := verdict(unpinned)
	t.Logf("confined by exported_namespace only: %s (%s)", before.Result, before.Message)
	g.Expect(before.Result).To(Equal(platformv1.MeasurementFail), "the attack's premise: forged series are read")

	// Pinned to the controller's namespace: only its series count.
	pinned := analysis.Scope{LabelFor: map[string]analysis.LabelFor{}}
	g.Expect(analysis.ParseLabelFor(pinned.LabelFor, metric+"=exported_namespace@ingress-nginx")).To(Succeed())
	after := verdict(pinned)
	t.Logf("pinned to ingress-nginx: %s (%s)", after.Result, after.Message)
	g.Expect(after.Result).To(Equal(platformv1.MeasurementPass))
	g.Expect(after.Value).To(Equal(ptr.To(0.0)))
}

// exposeMetrics serves text as a pod's /metrics until the test ends and
// returns its address.
func exposeMetrics(t *testing.T, text string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = fmt.Fprintln(w, text)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(serve)}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}
