// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package tracing

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Transport wraps rt, the operator's connection to the API server, so that
// a request made inside a traced reconcile runs in a client span and sends
// its traceparent: an API server that traces continues it, and the writes
// a reconcile makes (the CronJob it applies, the TaskRun it records) show in
// the reconcile's trace. A request made outside a span (the informers' lists
// and watches, leader election) passes untouched and starts no trace. Use it
// with rest.Config.Wrap.
func Transport(rt http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(rt,
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithFilter(func(r *http.Request) bool {
			return trace.SpanContextFromContext(r.Context()).IsValid()
		}))
}
