// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package tracing

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

func TestWebhookServer_AHandlerRunsInAServerSpanBelowTheCallersTraceparent(t *testing.T) {
	rec := recordSpans(t)
	s := WebhookServer(webhook.NewServer(webhook.Options{}))
	const path = "/mutate-platform-example-com-v1-scheduletask"
	var inside string
	s.Register(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside = TraceParent(r.Context())
		w.WriteHeader(http.StatusOK)
	}))

	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}"))
	// What the API server's webhook client sends when its tracing is on.
	req.Header.Set("traceparent", changeTP)
	resp := httptest.NewRecorder()
	s.WebhookMux().ServeHTTP(resp, req)
	if resp.Code != http.StatusOK {
		t.Fatalf("status %d", resp.Code)
	}

	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want the webhook call's one", len(spans))
	}
	s0 := spans[0]
	type view struct {
		Name   string
		Kind   trace.SpanKind
		Origin spanOrigin
	}
	got := view{Name: s0.Name(), Kind: s0.SpanKind(), Origin: originOf(s0)}
	want := view{Name: "POST " + path, Kind: trace.SpanKindServer,
		Origin: spanOrigin{Trace: changeTrace, Parent: changeSpan, RemoteParent: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webhook span (-want +got):\n%s", diff)
	}
	// What the handler records on an object names the webhook's own span.
	if want := "00-" + changeTrace + "-" + s0.SpanContext().SpanID().String() + "-01"; inside != want {
		t.Errorf("traceparent inside the handler = %q, want %q", inside, want)
	}
}
