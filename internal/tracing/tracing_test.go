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

package tracing

import (
	"context"
	"errors"
	"regexp"
	"testing"

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

	spans := exporter.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want one per reconcile", len(spans))
	}
	attrs := map[string]string{}
	for _, a := range spans[0].Attributes {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	if spans[0].Name != "Reconcile scheduletask" || attrs["k8s.namespace.name"] != "ns" || attrs["object.name"] != "task" || attrs["result"] != "error" {
		t.Errorf("first span = %s %v", spans[0].Name, attrs)
	}
	if spans[0].Status.Code != codes.Error || len(spans[0].Events) == 0 {
		t.Errorf("the error is not on the span: %+v", spans[0].Status)
	}
	if spans[1].Status.Code == codes.Error {
		t.Errorf("a successful reconcile's span is marked failed")
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
