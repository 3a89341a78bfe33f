/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package tracing gives every reconcile an OpenTelemetry span and carries
// the W3C trace context of the reconcile that starts a run onto the run's
// objects, so a run can be found from its trace and the other way round.
// Export is configured by the standard OTEL_EXPORTER_OTLP_* variables (OTLP
// over gRPC) and is off when none is set.
package tracing

import (
	"context"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TraceParentAnnotation holds, on a TaskRun and on a Job the operator
// starts, the W3C traceparent of the reconcile that started the run.
const TraceParentAnnotation = "platform.example.com/traceparent"

const tracerName = "github.com/example/platform-operator"

// Setup installs an OTLP exporter as the global tracer provider when an
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set,
// and the W3C propagator in any case. The returned function flushes and
// stops the exporter.
func Setup(ctx context.Context) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return func(context.Context) error { return nil }, nil
	}
	exporter, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("platform-operator")))
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// Instrument wraps a reconciler so each call runs in a span named after the
// controller, with the object, the result and any error on it.
func Instrument(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		ctx, span := otel.Tracer(tracerName).Start(ctx, "Reconcile "+controller,
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(
				attribute.String("controller", controller),
				attribute.String("k8s.namespace.name", req.Namespace),
				attribute.String("object.name", req.Name),
			))
		defer span.End()
		res, err := r.Reconcile(ctx, req)
		switch {
		case err != nil:
			span.SetAttributes(attribute.String("result", "error"))
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		case res.RequeueAfter > 0:
			span.SetAttributes(attribute.String("result", "requeue"), attribute.String("requeueAfter", res.RequeueAfter.String()))
		default:
			span.SetAttributes(attribute.String("result", "success"))
		}
		return res, err
	})
}

// TraceParent returns the W3C traceparent of the span in ctx, empty when
// there is none (tracing off leaves no annotation behind).
func TraceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier["traceparent"]
}

// Annotate sets TraceParentAnnotation on annotations from ctx, if traced.
func Annotate(ctx context.Context, annotations map[string]string) {
	if tp := TraceParent(ctx); tp != "" && annotations != nil {
		annotations[TraceParentAnnotation] = tp
	}
}
