// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package tracing gives every reconcile and every webhook call an
// OpenTelemetry span, and carries W3C trace context through the objects,
// since a reconcile has no request to take it from: admission records the
// trace of the request that changed an object on the object, the reconcile
// that acts on that change joins it, and a run's objects name the trace of
// what started the run, so a run can be found from its trace and the other
// way round. Export is configured by the standard OTEL_EXPORTER_OTLP_*
// variables (OTLP over gRPC) and is off when none is set.
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

// TraceParentAnnotation holds a W3C traceparent. On a ScheduleTask or an
// AppDeployment, admission writes that of the request that created it or
// last changed its spec (see AnnotateChange), and the reconciles acting on
// that change join its trace (FromAnnotation); on a Job the operator starts
// and on its TaskRun, that of the reconcile that started the run; on a
// CronJob's job template, and so on each Job of the schedule and on the
// TaskRun recorded from it, the task's: the change that made the schedule
// what it is. A TaskRun's reconciles link to the span it names.
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
	// The service name, unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES
	// say otherwise. Schemaless: the SDK's own attributes carry the schema of
	// its semconv version, and merging two schemas fails.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("platform-operator")),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// Option changes how Instrument traces a reconcile.
type Option func(*instrumentOptions)

type instrumentOptions struct {
	origin Origin
}

// WithOrigin makes each reconcile's span the child of, or linked to, the
// spans origin names for its object.
func WithOrigin(origin Origin) Option {
	return func(o *instrumentOptions) { o.origin = origin }
}

// Instrument wraps a reconciler so each call runs in a span named after the
// controller, with the object, the result and any error on it. Without
// WithOrigin every span starts a trace of its own.
func Instrument(controller string, r reconcile.Reconciler, opts ...Option) reconcile.Reconciler {
	var o instrumentOptions
	for _, opt := range opts {
		opt(&o)
	}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(
				attribute.String("controller", controller),
				attribute.String("k8s.namespace.name", req.Namespace),
				attribute.String("object.name", req.Name),
			),
		}
		if o.origin != nil {
			parent, links := o.origin(ctx, req)
			if parent.IsValid() {
				ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
			}
			start = append(start, trace.WithLinks(links...))
		}
		ctx, span := otel.Tracer(tracerName).Start(ctx, "Reconcile "+controller, start...)
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
