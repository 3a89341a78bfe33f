// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package tracing

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"
)

func TestAnnotateChange_OnlyACreateOrASpecChangeMovesTheTrace(t *testing.T) {
	// The webhook call's span, as otelhttp puts it in the request's context.
	const callSpan = "b7ad6b7169203331"
	traced := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: mustTraceID(t, changeTrace), SpanID: mustSpanID(t, callSpan), TraceFlags: trace.FlagsSampled,
	}))
	const earlier = "00-0af7651916cd43dd8448eb211c80319c-b9c7c989f97918e1-01"
	callTP := "00-" + changeTrace + "-" + callSpan + "-01"
	tests := []struct {
		name     string
		ctx      context.Context
		changed  bool
		old, cur map[string]string
		want     map[string]string
	}{
		{name: "create, traced", ctx: traced, changed: true,
			cur: map[string]string{"a": "1"}, want: map[string]string{"a": "1", TraceParentAnnotation: callTP}},
		{name: "create without annotations, traced", ctx: traced, changed: true,
			want: map[string]string{TraceParentAnnotation: callTP}},
		{name: "create copying another object's trace, traced", ctx: traced, changed: true,
			cur: map[string]string{TraceParentAnnotation: earlier}, want: map[string]string{TraceParentAnnotation: callTP}},
		{name: "create, untraced, copying another object's trace", ctx: context.Background(), changed: true,
			cur: map[string]string{"a": "1", TraceParentAnnotation: earlier}, want: map[string]string{"a": "1"}},
		{name: "create without annotations, untraced", ctx: context.Background(), changed: true, want: nil},
		{name: "spec change, traced", ctx: traced, changed: true,
			old: map[string]string{TraceParentAnnotation: earlier}, cur: map[string]string{TraceParentAnnotation: earlier},
			want: map[string]string{TraceParentAnnotation: callTP}},
		{name: "spec change, untraced: no older change is named", ctx: context.Background(), changed: true,
			old: map[string]string{TraceParentAnnotation: earlier}, cur: map[string]string{TraceParentAnnotation: earlier},
			want: map[string]string{}},
		{name: "metadata only, traced: the change's trace stays", ctx: traced,
			old: map[string]string{TraceParentAnnotation: earlier}, cur: map[string]string{TraceParentAnnotation: earlier, "b": "2"},
			want: map[string]string{TraceParentAnnotation: earlier, "b": "2"}},
		{name: "metadata only, a re-apply dropped it", ctx: traced,
			old: map[string]string{TraceParentAnnotation: earlier}, cur: nil,
			want: map[string]string{TraceParentAnnotation: earlier}},
		{name: "metadata only, a user rewrote it", ctx: traced,
			old: map[string]string{TraceParentAnnotation: earlier}, cur: map[string]string{TraceParentAnnotation: callTP},
			want: map[string]string{TraceParentAnnotation: earlier}},
		{name: "metadata only, a user added one", ctx: traced,
			old: map[string]string{"a": "1"}, cur: map[string]string{"a": "1", TraceParentAnnotation: earlier},
			want: map[string]string{"a": "1"}},
		{name: "metadata only, never traced", ctx: traced, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AnnotateChange(tt.ctx, tt.changed, tt.old, tt.cur)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func mustTraceID(t *testing.T, s string) trace.TraceID {
	t.Helper()
	id, err := trace.TraceIDFromHex(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustSpanID(t *testing.T, s string) trace.SpanID {
	t.Helper()
	id, err := trace.SpanIDFromHex(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
