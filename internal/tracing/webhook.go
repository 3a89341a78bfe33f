// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package tracing

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// WebhookServer returns s with every handler registered on it (the
// builder's admission and conversion webhooks) running in an HTTP server
// span. An API server whose own tracing is on sends the W3C traceparent of
// the request it admits with each webhook call, and the span is then its
// child: the webhook shows in the trace of the request, and what the
// webhook records from its context (see ContextFromAnnotations) names it.
func WebhookServer(s webhook.Server) webhook.Server {
	return tracedServer{Server: s}
}

// tracedServer wraps handlers as they are registered; everything else is
// the wrapped server's.
type tracedServer struct {
	webhook.Server
}

// Register registers hook at path, inside a server span named after the
// method and the path, as the HTTP conventions name a span by its route.
func (s tracedServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, otelhttp.NewHandler(hook, path,
		// What the operator writes into annotations is W3C trace context,
		// whatever else the process's global propagator may understand.
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(route string, r *http.Request) string {
			return r.Method + " " + route
		})))
}
