// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Origin names, for a reconcile of req, the span its own span is the child
// of (parent, when valid) and the spans it only points to (links).
type Origin func(ctx context.Context, req reconcile.Request) (parent trace.SpanContext, links []trace.Link)

// SpanContextFromAnnotations returns the span context that the
// TraceParentAnnotation of annotations names, marked remote; an invalid one
// when the annotation is missing or malformed.
func SpanContextFromAnnotations(annotations map[string]string) trace.SpanContext {
	tp := annotations[TraceParentAnnotation]
	if tp == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	return trace.SpanContextFromContext(ctx)
}

// ContextFromAnnotations returns ctx with the span that the
// TraceParentAnnotation of annotations names as its remote parent, so a span
// started from it joins that trace; ctx itself when there is none.
func ContextFromAnnotations(ctx context.Context, annotations map[string]string) context.Context {
	sc := SpanContextFromAnnotations(annotations)
	if !sc.IsValid() {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}

// LinkFromAnnotations returns a link to the span that the
// TraceParentAnnotation of annotations names; ok is false when there is none.
func LinkFromAnnotations(annotations map[string]string) (link trace.Link, ok bool) {
	sc := SpanContextFromAnnotations(annotations)
	if !sc.IsValid() {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: sc}, true
}

// objectPointer is a pointer to an API type, so that FromAnnotation can make
// the object it reads.
type objectPointer[T any] interface {
	*T
	client.Object
}

// FromAnnotation returns the Origin of a kind whose objects carry, in
// TraceParentAnnotation, the trace of the change (or the trigger) they come
// from. The object is read from reader, the manager's cache, without a copy.
//
// A reconcile joins that trace only while the change is pending: the
// object's generation is not yet the one observedGeneration says its status
// has seen. The passes that act on a change then show in the trace of the
// request that made it, below the API server's and the webhook's spans,
// while a resync, a requeue or a child's event after it begins a trace of
// its own with a link to the change, instead of adding to an old trace for
// as long as the object lives. With observedGeneration nil every reconcile
// only links.
func FromAnnotation[T any, PT objectPointer[T]](reader client.Reader, observedGeneration func(PT) int64) Origin {
	return func(ctx context.Context, req reconcile.Request) (trace.SpanContext, []trace.Link) {
		obj := PT(new(T))
		// Read-only: the annotation and the generations are all that is read.
		if err := reader.Get(ctx, req.NamespacedName, obj, client.UnsafeDisableDeepCopy); err != nil {
			return trace.SpanContext{}, nil
		}
		sc := SpanContextFromAnnotations(obj.GetAnnotations())
		if !sc.IsValid() {
			return trace.SpanContext{}, nil
		}
		if observedGeneration != nil && obj.GetGeneration() != observedGeneration(obj) {
			return sc, nil
		}
		return trace.SpanContext{}, []trace.Link{{SpanContext: sc}}
	}
}
