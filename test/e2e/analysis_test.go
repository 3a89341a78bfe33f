//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/appdeployment"
	"github.com/example/platform-operator/test/harness"
)

// Canary analysis against the real Prometheus that TestMain runs, scraping
// the traffic simulator (test/trafficsim): per track of every application,
// 10 requests a second per ready pod, with 10 % errors and 2 s latency for
// an image tagged ...bad..., none for ...idle..., and 0.1 % errors and 50 ms
// otherwise. Prometheus scrapes every second; the analyses measure every
// 5 s.

// prometheusShared is held for reading by every test whose canaries the
// suite's Prometheus judges, and for writing by the one test that stops
// that Prometheus: it runs in parallel with the rest of the suite (the
// missed-runs test among them, the longest, which would otherwise wait for
// it to end before starting), but never beside a test that needs the
// Prometheus it stops.
var prometheusShared sync.RWMutex

// judgedByPrometheus marks a parallel test as one whose canaries the
// suite's Prometheus judges (or whose assertions query it): it never runs
// while TestAnalysis_PrometheusStoppedMidAnalysisPausesAndResumesByItself
// has it stopped.
func judgedByPrometheus(t *testing.T) {
	t.Helper()
	prometheusShared.RLock()
	t.Cleanup(prometheusShared.RUnlock)
}

// analysisTimeout bounds a release that the analysis judges: a measurement
// every 5 s, three Passes, and the rollout around them.
const analysisTimeout = 3 * time.Minute

// analysedApp is the design documents' manifest — canaryCriteria error_rate
// at most 0.5 % — measured every 5 s, in namespace ns.
func analysedApp(ns string, mutate func(*platformv1.AppDeployment)) *platformv1.AppDeployment {
	return app(ns, func(ad *platformv1.AppDeployment) {
		ad.Spec.Strategy.CanaryCriteria = []platformv1.CanaryCriterion{
			{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}}
		ad.Spec.Strategy.Analysis = platformv1.Analysis{IntervalSeconds: 5}
		ad.Spec.Rollback.ProviderErrorGraceSeconds = 10
		if mutate != nil {
			mutate(ad)
		}
	})
}

// waitAnalysed waits up to analysisTimeout until check passes.
func waitAnalysed(t *testing.T, ad *platformv1.AppDeployment,
	check func(Gomega, *platformv1.AppDeployment)) *platformv1.AppDeployment {
	t.Helper()
	got := &platformv1.AppDeployment{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(cluster.Client.Get(t.Context(), keyOf(ad), got)).To(Succeed())
		check(g, got)
	}).WithTimeout(analysisTimeout).WithPolling(250 * time.Millisecond).Should(Succeed())
	return got
}

func TestAnalysis_DesignDocumentsManifestIsPromotedOnEvidence(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	ns := newNamespace(t)
	ad := analysedApp(ns, nil)
	watch := harness.WatchAnalysis(t, cluster, ns, ad.Name)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })

	// The canary is measured: Passes are counted in status as they come.
	waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.Canary).NotTo(BeNil())
		g.Expect(got.Status.Canary.Analysis).NotTo(BeNil())
		g.Expect(got.Status.Canary.Analysis.Criteria).To(ContainElement(And(
			HaveField("Name", "error_rate"), HaveField("LastResult", platformv1.MeasurementPass),
			HaveField("Samples", Not(BeNil())), HaveField("Message", ContainSubstring("error_rate")))))
	})
	got := waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
	})
	if o := got.Status.LastOutcome; o.Result != platformv1.OutcomePromoted || o.Version != v124 {
		t.Fatalf("outcome %+v", o)
	}
	if v := watch.Violations(); len(v) > 0 || watch.Completed() == 0 {
		t.Fatalf("step completions seen: %d; broken promises: %v", watch.Completed(), v)
	}
	expectEvent(t, ad, appdeployment.EventStepCompleted, "passes")
	expectEvent(t, ad, appdeployment.EventAnalysisStarted, "stable track")
}

func TestAnalysis_BadCanaryRollsBackAfterFailureLimitFailsAndStatusWatchExits1(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	ns := newNamespace(t)
	ad := analysedApp(ns, nil)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) {
		got.Spec.Image = imageBad
	})
	stdout, stderr, code := runPlugin(t, "kubectl-appdeploy", ns, "status", ad.Name, "--watch", "--timeout", "3m")
	if code != 1 {
		t.Fatalf("status --watch exited %d, want 1 (rolled back)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseDegraded), got.Status.Message)
		g.Expect(got.Status.Canary).To(BeNil())
	})
	o := got.Status.LastOutcome
	if o.Result != platformv1.OutcomeRolledBack || o.Reason != appdeployment.ReasonAnalysisFailed ||
		!strings.Contains(o.Message, "2 measurements in a row") {
		t.Fatalf("outcome %+v", o)
	}
	if got.Status.StableVersion != v123 {
		t.Fatalf("stable %s after the rollback", got.Status.StableVersion)
	}
	ready := meta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != platformv1.ReasonRolledBack {
		t.Fatalf("Ready %+v", ready)
	}
}

func TestAnalysis_CanaryWithoutTrafficPausesWithNoDataAndIsNeverPromoted(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	ns := newNamespace(t)
	ad := analysedApp(ns, nil)
	watch := harness.WatchAnalysis(t, cluster, ns, ad.Name)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) {
		got.Spec.Image = "harbor.example.com/order-service:v1.2.4-idle"
	})
	waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhasePaused), got.Status.Message)
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseNoData))
	})
	// Several more intervals: measured, never promoted, still paused.
	NewWithT(t).Consistently(func(g Gomega) {
		got := &platformv1.AppDeployment{}
		g.Expect(cluster.Client.Get(t.Context(), keyOf(ad), got)).To(Succeed())
		g.Expect(got.Status.StableVersion).To(Equal(v123))
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseNoData))
		g.Expect(got.Status.Canary.Analysis.Criteria[0].Passes).To(HaveValue(BeZero()))
	}).WithTimeout(20 * time.Second).WithPolling(time.Second).Should(Succeed())
	if watch.Completed() != 0 || !watch.Saw(platformv1.MeasurementNoData) {
		t.Fatalf("completions %d, NoData seen %v", watch.Completed(), watch.Saw(platformv1.MeasurementNoData))
	}
	expectEvent(t, ad, appdeployment.EventAnalysisPaused, "no data")
}

func TestAnalysis_QueryOfSeveralSeriesPausesInThePreflightWithNothingChanged(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	ns := newNamespace(t)
	ad := analysedApp(ns, nil)
	released(t, ad)
	// One series per response code: a configuration error only Prometheus's
	// answer reveals, which the preflight gets for the stable track once
	// Prometheus has a window of it.
	selector := `namespace="{{namespace}}",app="{{name}}",track="{{track}}"`
	perCode := `sum by (code) (rate(http_requests_total{` + selector + `}[{{interval}}]))`
	stable := strings.NewReplacer("{{namespace}}", ns, "{{name}}", ad.Name, "{{track}}", platformv1.TrackStable,
		"{{interval}}", "5s").Replace(perCode)
	NewWithT(t).Eventually(func(g Gomega) {
		v, err := prometheus.Query(t.Context(), stable)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(v).To(HaveLen(2))
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	change(t, ad, func(got *platformv1.AppDeployment) {
		got.Spec.Image = image124
		got.Spec.Strategy.CanaryCriteria = append(got.Spec.Strategy.CanaryCriteria, platformv1.CanaryCriterion{
			Name: "requests-per-second", Query: perCode, SuccessCondition: "result > 1",
		})
	})
	got := waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhasePaused), got.Status.Message)
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseInvalidQuery))
	})
	if !strings.Contains(got.Status.Message, "requests-per-second: invalid query: 2 series returned") ||
		got.Status.StableVersion != v123 || got.Status.Canary.Analysis.PreflightAt != nil {
		t.Fatalf("status %+v: want the preflight held, naming the criterion", got.Status)
	}
	err := cluster.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: ad.Name + platformv1.CanarySuffix},
		&appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("canary Deployment: %v, want none before the preflight answers", err)
	}
	expectEvent(t, ad, appdeployment.EventAnalysisPaused, "2 series returned")
	// The criterion corrected: the canary goes on by itself and is promoted.
	change(t, ad, func(got *platformv1.AppDeployment) {
		got.Spec.Strategy.CanaryCriteria[1].Query = `sum(rate(http_requests_total{` + selector + `}[{{interval}}]))`
	})
	waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
	})
}

func TestAnalysis_CompareToStableCatchesACanaryWorseThanStableUnderTheThreshold(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	ns := newNamespace(t)
	// 10 % errors passes a 15 % threshold, but not 1 point above stable's 0.1 %.
	ad := analysedApp(ns, func(ad *platformv1.AppDeployment) {
		ad.Spec.Strategy.CanaryCriteria[0].Threshold = ptr.To(15.0)
		ad.Spec.Strategy.CanaryCriteria[0].CompareToStable = platformv1.CompareToStable{MaxDelta: ptr.To(1.0)}
	})
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) {
		got.Spec.Image = imageBad
	})
	got := waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.LastOutcome.Result).To(Equal(platformv1.OutcomeRolledBack), got.Status.Message)
	})
	o := got.Status.LastOutcome
	if o.Reason != appdeployment.ReasonAnalysisFailed || !strings.Contains(o.Message, "stable") {
		t.Fatalf("outcome %+v: want a failure against stable", o)
	}
}

func TestAnalysis_MalformedConditionOrQueryIsRefusedAtApply(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	for _, tc := range []struct {
		name, query, condition, field string
	}{
		{"condition", `sum(rate(http_requests_total{app="{{name}}"}[1m]))`, "result <",
			"spec.strategy.canaryCriteria[0].successCondition"},
		{"query", `sum(rate(http_requests_total{app="{{name}}"}[1m])`, "result < 0.05",
			"spec.strategy.canaryCriteria[0].query"},
	} {
		manifest := fmt.Sprintf(`apiVersion: platform.example.com/v1
kind: AppDeployment
metadata:
  name: bad-%s
  namespace: %s
spec:
  image: harbor.example.com/order-service:v1.2.3
  strategy:
    type: canary
    canaryPercent: 30
    canaryCriteria:
    - name: requests
      query: '%s'
      successCondition: '%s'
`, tc.name, ns, tc.query, tc.condition)
		err := cluster.Kubectl(t.Context(), []byte(manifest), "apply", "-f", "-")
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: kubectl apply returned %v, want a refusal naming %s", tc.name, err, tc.field)
		}
	}
}

// TestAnalysis_PrometheusStoppedMidAnalysisPausesAndResumesByItself stops
// the suite's Prometheus: it runs while no test judged by it does
// (prometheusShared), in parallel with the others.
func TestAnalysis_PrometheusStoppedMidAnalysisPausesAndResumesByItself(t *testing.T) {
	t.Parallel()
	prometheusShared.Lock()
	t.Cleanup(prometheusShared.Unlock) // after the restart below, which is registered later
	ns := newNamespace(t)
	ad := analysedApp(ns, nil)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.Canary).NotTo(BeNil())
		g.Expect(got.Status.Canary.Analysis).NotTo(BeNil())
		g.Expect(got.Status.Canary.Analysis.Criteria).NotTo(BeEmpty())
		g.Expect(got.Status.Canary.Analysis.Criteria[0].Passes).To(HaveValue(BeNumerically(">=", 1)))
	})
	prometheus.Stop()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = prometheus.Start(t.Context())
		}
	})
	got := waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhasePaused), got.Status.Message)
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseProviderError))
	})
	if got.Status.StableVersion != v123 || got.Status.Canary == nil {
		t.Fatalf("during the outage: stable %s, canary %+v: nothing may be rolled back or promoted",
			got.Status.StableVersion, got.Status.Canary)
	}
	NewWithT(t).Expect(prometheus.Start(t.Context())).To(Succeed())
	restarted = true
	waitAnalysed(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
	})
	// Resumed from ProviderError, or from NoData when the first answers after
	// the restart still lack a whole window of samples.
	expectEvent(t, ad, appdeployment.EventAnalysisResumed, "Analysis resumed")
	expectEvent(t, ad, appdeployment.EventAnalysisPaused, "Prometheus has not answered")
}

// keyOf is the key of an object.
func keyOf(ad *platformv1.AppDeployment) client.ObjectKey { return client.ObjectKeyFromObject(ad) }

// expectEvent waits for an event of reason about ad whose note contains text.
func expectEvent(t *testing.T, ad *platformv1.AppDeployment, reason, text string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		var events eventsv1.EventList
		g.Expect(cluster.Client.List(t.Context(), &events, client.InNamespace(ad.Namespace))).To(Succeed())
		var notes []string
		for _, e := range events.Items {
			if e.Regarding.Name == ad.Name && e.Regarding.Kind == "AppDeployment" && e.Reason == reason {
				notes = append(notes, e.Note)
			}
		}
		g.Expect(notes).To(ContainElement(ContainSubstring(text)), "events %s of %s", reason, ad.Name)
	}).WithTimeout(settleTimeout).Should(Succeed())
}
