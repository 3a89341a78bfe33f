// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// The trace annotation as the operator reads it, and two traceparents: that
// of the webhook call under test and that of an earlier change.
const (
	traceKey = "platform.example.com/traceparent"
	callTP   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	earlier  = "00-0af7651916cd43dd8448eb211c80319c-b9c7c989f97918e1-01"
)

// tracedAdmission is the context of a webhook call whose span is callTP's,
// admitting a CREATE when old is nil and an UPDATE of old otherwise.
func tracedAdmission(t *testing.T, old client.Object) context.Context {
	t.Helper()
	tid, _ := trace.TraceIDFromHex(callTP[3:35])
	sid, _ := trace.SpanIDFromHex(callTP[36:52])
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	req := admissionv1.AdmissionRequest{Operation: admissionv1.Create}
	if old != nil {
		raw, err := json.Marshal(old)
		if err != nil {
			t.Fatal(err)
		}
		req.Operation, req.OldObject = admissionv1.Update, runtime.RawExtension{Raw: raw}
	}
	return admission.NewContextWithRequest(ctx, admission.Request{AdmissionRequest: req})
}

func TestScheduleTaskDefault_RecordsTheTraceOfACreateOrSpecChangeOnly(t *testing.T) {
	stored := func() *platformv1.ScheduleTask {
		st := testutil.NewScheduleTask("ns", "t")
		st.Annotations = map[string]string{traceKey: earlier}
		return st
	}
	tests := []struct {
		name   string
		old    *platformv1.ScheduleTask
		change func(*platformv1.ScheduleTask)
		want   string
	}{
		{name: "create", change: func(*platformv1.ScheduleTask) {}, want: callTP},
		{name: "spec change", old: stored(), change: func(st *platformv1.ScheduleTask) { st.Spec.Image = "busybox:1.37" }, want: callTP},
		{name: "run-now only", old: stored(), change: func(st *platformv1.ScheduleTask) {
			st.Annotations[platformv1.RunNowAnnotation] = "1"
		}, want: earlier},
		{name: "the annotation dropped by a re-apply", old: stored(), change: func(st *platformv1.ScheduleTask) {
			delete(st.Annotations, traceKey)
		}, want: earlier},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := testutil.NewScheduleTask("ns", "t")
			var old client.Object
			if tt.old != nil {
				st, old = tt.old.DeepCopy(), tt.old
			}
			tt.change(st)
			if err := (&ScheduleTaskWebhook{}).Default(tracedAdmission(t, old), st); err != nil {
				t.Fatal(err)
			}
			if got := st.Annotations[traceKey]; got != tt.want {
				t.Errorf("trace annotation = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAppDeploymentDefault_RecordsTheTraceOfACreateOrSpecChangeOnly(t *testing.T) {
	ad := app(nil)
	if err := (&AppDeploymentWebhook{}).Default(tracedAdmission(t, nil), ad); err != nil {
		t.Fatal(err)
	}
	stored := app(map[string]string{traceKey: earlier})
	relabeled := stored.DeepCopy()
	relabeled.Labels = map[string]string{"team": "shop"}
	changed := stored.DeepCopy()
	changed.Spec.Image = "harbor.example.com/shop:v1.2.4"
	for _, obj := range []*platformv1.AppDeployment{relabeled, changed} {
		if err := (&AppDeploymentWebhook{}).Default(tracedAdmission(t, stored), obj); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{"create": ad.Annotations[traceKey],
		"label": relabeled.Annotations[traceKey], "spec": changed.Annotations[traceKey]}
	want := map[string]string{"create": callTP, "label": earlier, "spec": callTP}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trace annotation after each request (-want +got):\n%s", diff)
	}
}

// The mutating webhooks must be called for every request whose trace they
// record, and for every change of the annotation, which they undo.
func TestMatchConditions_CallTheMutatingWebhooksForEveryChangeTheyTrace(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	expressions := map[string]string{}
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var cfg struct {
			Webhooks []admissionregistrationv1.MutatingWebhook `json:"webhooks"`
		}
		if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
			t.Fatal(err)
		}
		for _, w := range cfg.Webhooks {
			var all []string
			for _, c := range w.MatchConditions {
				all = append(all, c.Expression)
			}
			expressions[w.Name] = strings.Join(all, " && ")
		}
	}
	for _, name := range []string{"mscheduletask-v1.platform.example.com", "mappdeployment-v1.platform.example.com"} {
		for _, want := range []string{"request.operation == 'CREATE' ||", "object.spec != oldObject.spec", "'" + traceKey + "'"} {
			if !strings.Contains(expressions[name], want) {
				t.Errorf("%s's matchConditions lack %q", name, want)
			}
		}
	}
}
