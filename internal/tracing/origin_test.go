// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package tracing

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// A traceparent as an API server would send it, written out by hand so the
// tests do not take it from the code under test.
const (
	changeTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	changeSpan  = "00f067aa0ba902b7"
	changeTP    = "00-" + changeTrace + "-" + changeSpan + "-01"
)

// recordSpans installs a recording tracer provider for the test.
func recordSpans(t *testing.T) *tracetest.SpanRecorder {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(sdktrace.NewTracerProvider()) })
	return rec
}

// spanOrigin is where a recorded span stands: its trace, its parent, and
// the spans it links to, as hex.
type spanOrigin struct {
	Trace, Parent string
	RemoteParent  bool
	Links         []string
}

func originOf(s sdktrace.ReadOnlySpan) spanOrigin {
	o := spanOrigin{Trace: s.SpanContext().TraceID().String(), RemoteParent: s.Parent().IsRemote()}
	if s.Parent().IsValid() {
		o.Parent = s.Parent().SpanID().String()
	}
	for _, l := range s.Links() {
		o.Links = append(o.Links, l.SpanContext.TraceID().String()+"/"+l.SpanContext.SpanID().String())
	}
	return o
}

func TestContextFromAnnotations_ASpanStartedFromItJoinsTheAnnotatedTrace(t *testing.T) {
	rec := recordSpans(t)
	ctx := ContextFromAnnotations(context.Background(), map[string]string{TraceParentAnnotation: changeTP})
	_, span := otel.Tracer("test").Start(ctx, "child")
	span.End()

	got := originOf(rec.Ended()[0])
	want := spanOrigin{Trace: changeTrace, Parent: changeSpan, RemoteParent: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span started from the annotation's context (-want +got):\n%s", diff)
	}
}

func TestContextFromAnnotations_NoOrABrokenAnnotationLeavesTheContextAlone(t *testing.T) {
	for name, annotations := range map[string]map[string]string{
		"none":          nil,
		"other keys":    {"platform.example.com/run-now": "x"},
		"not W3C":       {TraceParentAnnotation: "uber-trace-id:abc"},
		"zero trace ID": {TraceParentAnnotation: "00-00000000000000000000000000000000-" + changeSpan + "-01"},
		"truncated":     {TraceParentAnnotation: changeTP[:40]},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if got := ContextFromAnnotations(ctx, annotations); got != ctx {
				t.Errorf("ContextFromAnnotations(%v) returned a new context", annotations)
			}
			if l, ok := LinkFromAnnotations(annotations); ok {
				t.Errorf("LinkFromAnnotations(%v) = %v, want none", annotations, l.SpanContext)
			}
		})
	}
}

func TestLinkFromAnnotations_LinksTheAnnotatedSpan(t *testing.T) {
	l, ok := LinkFromAnnotations(map[string]string{TraceParentAnnotation: changeTP})
	if !ok {
		t.Fatal("no link from a valid traceparent")
	}
	if got := l.SpanContext.TraceID().String() + "/" + l.SpanContext.SpanID().String(); got != changeTrace+"/"+changeSpan {
		t.Errorf("link to %s, want %s/%s", got, changeTrace, changeSpan)
	}
	if !l.SpanContext.IsSampled() {
		t.Error("the link lost the sampled flag of the traceparent")
	}
}

// taskReader serves one ScheduleTask, as the manager's cache would.
type taskReader struct {
	task *platformv1.ScheduleTask
}

func (r taskReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if r.task == nil || key != client.ObjectKeyFromObject(r.task) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "scheduletasks"}, key.Name)
	}
	r.task.DeepCopyInto(obj.(*platformv1.ScheduleTask))
	return nil
}

func (taskReader) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

func TestInstrument_FromAnnotation_JoinsAPendingChangeAndOnlyLinksOtherwise(t *testing.T) {
	task := func(generation, observed int64, annotations map[string]string) *platformv1.ScheduleTask {
		return &platformv1.ScheduleTask{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "task", Generation: generation, Annotations: annotations},
			Status:     platformv1.ScheduleTaskStatus{ObservedGeneration: observed},
		}
	}
	observed := func(t *platformv1.ScheduleTask) int64 { return t.Status.ObservedGeneration }
	annotated := map[string]string{TraceParentAnnotation: changeTP}
	tests := []struct {
		name     string
		task     *platformv1.ScheduleTask
		observed func(*platformv1.ScheduleTask) int64
		want     spanOrigin
	}{
		{name: "new object, never observed", task: task(1, 0, annotated), observed: observed,
			want: spanOrigin{Trace: changeTrace, Parent: changeSpan, RemoteParent: true}},
		{name: "changed spec, not yet observed", task: task(5, 4, annotated), observed: observed,
			want: spanOrigin{Trace: changeTrace, Parent: changeSpan, RemoteParent: true}},
		{name: "change observed: a resync or a child's event", task: task(5, 5, annotated), observed: observed,
			want: spanOrigin{Links: []string{changeTrace + "/" + changeSpan}}},
		{name: "a kind that only links", task: task(1, 0, annotated), observed: nil,
			want: spanOrigin{Links: []string{changeTrace + "/" + changeSpan}}},
		{name: "no annotation", task: task(1, 0, nil), observed: observed, want: spanOrigin{}},
		{name: "object gone", task: nil, observed: observed, want: spanOrigin{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := recordSpans(t)
			var inside string
			r := Instrument("scheduletask", reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
				inside = TraceParent(ctx)
				return reconcile.Result{}, nil
			}), WithOrigin(FromAnnotation(taskReader{task: tt.task}, tt.observed)))
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "task"}}
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			spans := rec.Ended()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want the reconcile's one", len(spans))
			}
			got := originOf(spans[0])
			if tt.want.Trace == "" {
				// A trace of its own: any ID but the change's.
				if got.Trace == changeTrace {
					t.Errorf("the reconcile joined the change's trace")
				}
				got.Trace = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reconcile span (-want +got):\n%s", diff)
			}
			// What the reconcile annotates its runs with names its own span.
			if want := "00-" + spans[0].SpanContext().TraceID().String() + "-" + spans[0].SpanContext().SpanID().String() + "-01"; inside != want {
				t.Errorf("traceparent inside the reconcile = %q, want %q", inside, want)
			}
		})
	}
}
