// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package tracing

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestInstrument_OneSpanPerReconcileWithObjectResultAndError(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter)))
	t.Cleanup(func() { otel.SetTracerProvider(sdktrace.NewTracerProvider()) })

	var seen string
	fail := true
	r := Instrument("scheduletask", reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		seen = TraceParent(ctx)
		if fail {
			return reconcile.Result{}, errors.New("boom")
		}
		return reconcile.Result{}, nil
	}))
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "task"}}
	_, _ = r.Reconcile(context.Background(), req)
	fail = false
	_, _ = r.Reconcile(context.Background(), req)

	// What each span says about its reconcile, compared whole.
	type spanView struct {
		Name        string
		Attributes  map[string]string
		Status      codes.Code
		Description string
		Events      []string
	}
	spans := exporter.GetSpans()
	got := make([]spanView, 0, len(spans))
	for _, s := range spans {
		v := spanView{Name: s.Name, Attributes: map[string]string{}, Status: s.Status.Code, Description: s.Status.Description}
		for _, a := range s.Attributes {
			v.Attributes[string(a.Key)] = a.Value.String()
		}
		for _, e := range s.Events {
			v.Events = append(v.Events, e.Name)
		}
		got = append(got, v)
	}
	attrs := func(result string) map[string]string {
		return map[string]string{"controller": "scheduletask", "k8s.namespace.name": "ns", "object.name": "task", "result": result}
	}
	want := []spanView{
		{Name: "Reconcile scheduletask", Attributes: attrs("error"), Status: codes.Error, Description: "boom", Events: []string{"exception"}},
		{Name: "Reconcile scheduletask", Attributes: attrs("success"), Status: codes.Unset},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("spans, one per reconcile (-want +got):\n%s", diff)
	}
	if !regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`).MatchString(seen) {
		t.Errorf("traceparent inside the reconcile = %q", seen)
	}
	if seen[36:52] != spans[1].SpanContext.SpanID().String() {
		t.Errorf("traceparent %q names another span than the reconcile's %s", seen, spans[1].SpanContext.SpanID())
	}
}

func TestTraceParent_EmptyWithoutATrace(t *testing.T) {
	if got := TraceParent(context.Background()); got != "" {
		t.Errorf("TraceParent without a span = %q", got)
	}
	a := map[string]string{}
	Annotate(context.Background(), a)
	if len(a) != 0 {
		t.Errorf("untraced run annotated: %v", a)
	}
}

func TestSetup_WithAnEndpointInstallsAnExporterNamedForTheOperator(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Cleanup(func() { otel.SetTracerProvider(sdktrace.NewTracerProvider()) })
	shutdown, err := Setup(context.Background())
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	defer func() { _ = shutdown(ctx) }()
	tp, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider)
	if !ok {
		t.Fatalf("global tracer provider is a %T, want the SDK's", otel.GetTracerProvider())
	}
	_, span := tp.Tracer("test").Start(context.Background(), "s")
	defer span.End()
	ro := span.(sdktrace.ReadOnlySpan)
	var service string
	for _, kv := range ro.Resource().Attributes() {
		if kv.Key == "service.name" {
			service = kv.Value.AsString()
		}
	}
	if service != "platform-operator" {
		t.Errorf("service.name = %q, want platform-operator", service)
	}
}
