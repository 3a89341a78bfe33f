// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

func TestTransport_OnlyARequestInsideASpanIsTracedAndCarriesItsTraceparent(t *testing.T) {
	rec := recordSpans(t)
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("traceparent"))
	}))
	defer srv.Close()
	c := &http.Client{Transport: Transport(http.DefaultTransport)}
	get := func(ctx context.Context) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	get(context.Background()) // an informer's list: no span, no header
	ctx, reconcile := otel.Tracer("test").Start(context.Background(), "Reconcile scheduletask")
	get(ctx)
	reconcile.End()

	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the reconcile's and its request's", len(spans))
	}
	request := spans[0]
	if request.SpanKind() != trace.SpanKindClient || request.Parent().SpanID() != reconcile.SpanContext().SpanID() {
		t.Errorf("request span %q (kind %v) has parent %s, want a client span below the reconcile %s",
			request.Name(), request.SpanKind(), request.Parent().SpanID(), reconcile.SpanContext().SpanID())
	}
	want := "00-" + request.SpanContext().TraceID().String() + "-" + request.SpanContext().SpanID().String() + "-01"
	if len(got) != 2 || got[0] != "" || got[1] != want {
		t.Errorf("traceparent headers the server saw = %q, want none and then %q", got, want)
	}
}
