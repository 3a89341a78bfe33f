//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/test/harness"
)

// tracingTest is the test whose cluster's API server exports its spans to
// otlp.
const tracingTest = "TestTracing_OneApplyIsOneTraceThroughAdmissionAndReconcileAndItsRunLinksToIt"

// otlp receives the spans of tracingTest's API server and operator. It
// listens before the clusters are created, since the API server's tracing
// configuration names it.
var otlp *harness.OTLPReceiver

// startOTLP starts otlp and gives tracingTest's cluster an API server that
// traces every request into it. The returned function stops it.
func startOTLP() (stop func(), err error) {
	if otlp, err = harness.StartOTLPReceiver(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "e2e-tracing-")
	if err != nil {
		otlp.Stop()
		return nil, err
	}
	stop = func() { otlp.Stop(); _ = os.RemoveAll(dir) }
	args, err := otlp.APIServerTracingArgs(dir)
	if err != nil {
		stop()
		return nil, err
	}
	ownClusterOptions[tracingTest] = harness.ClusterOptions{KwokctlArgs: args}
	return stop, nil
}

// TestTracing_OneApplyIsOneTraceThroughAdmissionAndReconcileAndItsRunLinksToIt
// applies a ScheduleTask with kubectl on a cluster whose API server traces
// every request, and finds in the spans both export: one trace that holds
// the API server's span of the create, the operator's span of the mutating
// webhook call below it, and below that the ScheduleTask reconcile whose
// request applied the CronJob (the API server's span of that PATCH links
// back to it); and, when the schedule fires, the TaskRun controller's spans
// of the run, a trace of their own with a link to the webhook's span, which
// the annotation carried from the task through the CronJob's job template
// and the Job to the TaskRun.
func TestTracing_OneApplyIsOneTraceThroughAdmissionAndReconcileAndItsRunLinksToIt(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	own := ownCluster(t)
	op, err := harness.StartOperator(ctx, own, harness.OperatorOptions{Replicas: 1, Env: otlp.Env()})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(op.Stop)
	ns := harness.Namespace(t, own)

	const name = "traced"
	g.Expect(own.Kubectl(ctx, fmt.Appendf(nil, `apiVersion: platform.example.com/v1
kind: ScheduleTask
metadata:
  name: %s
  namespace: %s
spec:
  schedule: "* * * * *"
  image: busybox:1.36
  command: ["sh", "-c", "echo hello"]
`, name, ns), "apply", "-f", "-")).To(Succeed())

	// The trace the admission recorded on the task; it is checked below
	// against what the API server and the operator exported.
	st := &platformv1.ScheduleTask{}
	g.Expect(own.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, st)).To(Succeed())
	tp := st.Annotations["platform.example.com/traceparent"]
	m := regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`).FindStringSubmatch(tp)
	g.Expect(m).NotTo(BeNil(), "the task's traceparent annotation %q", tp)
	traceID, webhookSpan := m[1], m[2]

	g.Eventually(func(g Gomega) {
		spans := otlp.Spans()
		trace := spanIndex(spans, traceID)
		// The API server's span of the create, in a trace the API server began.
		create := find(spans, func(s harness.Span) bool {
			return s.TraceID == traceID && s.Service == "apiserver" &&
				s.Name == "POST /apis/platform.example.com/v1/namespaces/{:namespace}/scheduletasks"
		})
		g.Expect(create).NotTo(BeNil(), "the API server's span of the create in trace %s; its spans: %s",
			traceID, names(spans, traceID))
		root := find(spans, func(s harness.Span) bool { return s.TraceID == traceID && s.ParentSpanID == "" })
		g.Expect(root).NotTo(BeNil(), "the root of trace %s", traceID)
		g.Expect(root.Service).To(Equal("apiserver"), "the trace's root span %q", root.Name)
		g.Expect(append(ancestors(trace, *create), create.SpanID)).To(ContainElement(root.SpanID))

		// The mutating webhook call, below a span of the API server's.
		wh, ok := trace[webhookSpan]
		g.Expect(ok).To(BeTrue(), "span %s of the annotation in trace %s; its spans: %s",
			webhookSpan, traceID, names(spans, traceID))
		g.Expect(wh.Service).To(Equal("platform-operator"))
		g.Expect(wh.Kind).To(Equal(tracepb.Span_SPAN_KIND_SERVER))
		g.Expect(wh.Name).To(Equal("POST /mutate-platform-example-com-v1-scheduletask"))
		g.Expect(trace).To(HaveKey(wh.ParentSpanID), "the webhook span's parent is in the trace")
		g.Expect(trace[wh.ParentSpanID].Service).To(Equal("apiserver"))
		g.Expect(ancestors(trace, wh)).To(ContainElement(create.SpanID), "the webhook call is below the create")

		// The reconcile acting on the new task, a child of the webhook call,
		// whose request applied the CronJob.
		reconcile := find(spans, func(s harness.Span) bool {
			return s.TraceID == traceID && s.Name == "Reconcile scheduletask" && s.ParentSpanID == webhookSpan &&
				s.Attributes["object.name"] == name && s.Attributes["k8s.namespace.name"] == ns &&
				find(spans, func(c harness.Span) bool { return c.ParentSpanID == s.SpanID && isCronJobApply(c, ns, name) }) != nil
		})
		g.Expect(reconcile).NotTo(BeNil(), "a reconcile below the webhook call that applied the CronJob; spans: %s",
			names(spans, traceID))
		apply := find(spans, func(c harness.Span) bool {
			return c.ParentSpanID == reconcile.SpanID && isCronJobApply(c, ns, name)
		})
		// The API server's span of that apply continues the request's
		// trace, or (the operator is not a privileged client) links to it.
		g.Expect(find(spans, func(s harness.Span) bool {
			continued := s.ParentSpanID == apply.SpanID ||
				slices.Contains(s.Links, harness.SpanRef{TraceID: traceID, SpanID: apply.SpanID})
			return s.Service == "apiserver" && continued &&
				strings.HasPrefix(s.Name, "PATCH /apis/batch/v1/namespaces/{:namespace}/cronjobs")
		})).NotTo(BeNil(), "the API server's span of the CronJob apply")
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())

	// The first scheduled run, and the TaskRun controller's spans of it.
	var run string
	g.Eventually(func(g Gomega) {
		var runs platformv1.TaskRunList
		g.Expect(own.Client.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
		g.Expect(runs.Items).NotTo(BeEmpty())
		g.Expect(runs.Items[0].Spec.Trigger).To(Equal(platformv1.TriggerScheduled))
		run = runs.Items[0].Name
	}).WithTimeout(minuteTimeout).WithPolling(time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		spans := otlp.Spans()
		var recorded []harness.Span
		for _, s := range spans {
			if s.Service == "platform-operator" && s.Name == "Reconcile taskrun" && s.Attributes["object.name"] == run &&
				s.Attributes["k8s.namespace.name"] == ns {
				recorded = append(recorded, s)
			}
		}
		g.Expect(recorded).NotTo(BeEmpty(), "the TaskRun controller's spans of run %s", run)
		for _, s := range recorded {
			g.Expect(s.TraceID).NotTo(Equal(traceID), "a run is a trace of its own")
			g.Expect(s.Links).To(ContainElement(harness.SpanRef{TraceID: traceID, SpanID: webhookSpan}),
				"the run's reconcile %s links to the webhook call of the apply", s.SpanID)
		}
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())

	// The job template carries the task's trace, which no pass since has
	// changed: the CronJob's spec was written once.
	cj := &batchv1.CronJob{}
	g.Expect(own.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cj)).To(Succeed())
	g.Expect(cj.Spec.JobTemplate.Annotations).To(HaveKeyWithValue("platform.example.com/traceparent", tp))
	g.Expect(cj.Generation).To(Equal(int64(1)), "generation of CronJob %s after the task's passes", name)
}

// isCronJobApply reports whether s is the operator's request that applies
// the task's CronJob.
func isCronJobApply(s harness.Span, ns, name string) bool {
	if s.Service != "platform-operator" || s.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		return false
	}
	method := cmpOr(s.Attributes["http.request.method"], s.Attributes["http.method"])
	url := cmpOr(s.Attributes["url.full"], s.Attributes["http.url"])
	return method == "PATCH" && strings.Contains(url, "/apis/batch/v1/namespaces/"+ns+"/cronjobs/"+name)
}

// cmpOr is the first of values that is not empty.
func cmpOr(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// spanIndex returns the spans of the trace by span ID.
func spanIndex(spans []harness.Span, traceID string) map[string]harness.Span {
	out := map[string]harness.Span{}
	for _, s := range spans {
		if s.TraceID == traceID {
			out[s.SpanID] = s
		}
	}
	return out
}

// find returns the first span that match accepts, nil when none does.
func find(spans []harness.Span, match func(harness.Span) bool) *harness.Span {
	for i := range spans {
		if match(spans[i]) {
			return &spans[i]
		}
	}
	return nil
}

// ancestors returns the IDs of the spans above s in the trace.
func ancestors(trace map[string]harness.Span, s harness.Span) []string {
	var out []string
	for p, ok := trace[s.ParentSpanID]; ok && !slices.Contains(out, p.SpanID); p, ok = trace[p.ParentSpanID] {
		out = append(out, p.SpanID)
	}
	return out
}

// names describes the spans of a trace, for a failure message.
func names(spans []harness.Span, traceID string) string {
	var out []string
	for _, s := range spans {
		if s.TraceID == traceID {
			out = append(out, fmt.Sprintf("%s %q (%s, parent %s)", s.Service, s.Name, s.SpanID, s.ParentSpanID))
		}
	}
	return strings.Join(out, "; ")
}
