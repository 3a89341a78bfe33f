// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package admit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// labeller labels every ConfigMap it defaults and records the old object
// Old gave it.
type labeller struct{ old *corev1.ConfigMap }

func (l *labeller) Default(ctx context.Context, cm *corev1.ConfigMap) error {
	old, err := Old[*corev1.ConfigMap](ctx)
	if err != nil {
		return err
	}
	l.old = old
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["labelled"] = "yes"
	return nil
}

// judge refuses a ConfigMap without data, by the field, and one named
// "plain" with a plain error; it warns of every update.
type judge struct{}

func (judge) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	if cm.Name == "plain" {
		return nil, errors.New("plain refusal")
	}
	if len(cm.Data) == 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, cm.Name,
			field.ErrorList{field.Required(field.NewPath("data"), "must hold a key")})
	}
	return nil, nil
}

func (judge) ValidateUpdate(_ context.Context, old, _ *corev1.ConfigMap) (admission.Warnings, error) {
	return admission.Warnings{"updated " + old.Name}, nil
}

func (judge) ValidateDelete(context.Context, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

// call sends the review of op on obj (and old) to h and returns its answer.
func call(t *testing.T, h http.Handler, op admissionv1.Operation, obj, old string) (int, admissionv1.AdmissionReview) {
	t.Helper()
	req := map[string]any{"uid": "u-1", "operation": op, "namespace": "team", "name": "cm"}
	if obj != "" {
		req["object"] = json.RawMessage(obj)
	}
	if old != "" {
		req["oldObject"] = json.RawMessage(old)
	}
	body, err := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	if err != nil {
		t.Fatal(err)
	}
	return send(t, h, "application/json", body)
}

// send posts body to h.
func send(t *testing.T, h http.Handler, contentType string, body []byte) (int, admissionv1.AdmissionReview) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
		t.Fatalf("no AdmissionReview answered (%v): %s", err, rec.Body.String())
	}
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" {
		t.Errorf("answered a %s %s, want an admission.k8s.io/v1 AdmissionReview", review.APIVersion, review.Kind)
	}
	return rec.Code, review
}

func discard(logr.Logger, *admission.Request) logr.Logger { return logr.Discard() }

func TestDefaulting_PatchesWhatTheDefaulterChangedOnly(t *testing.T) {
	l := &labeller{}
	h := Serve(Defaulting[*corev1.ConfigMap](l), discard)
	// "extra" is a field the Go type does not know: a patch from the body
	// to the type's encoding would remove it.
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"team"},"extra":{"a":1},"data":{"k":"v"}}`
	_, review := call(t, h, admissionv1.Create, cm, "")
	if !review.Response.Allowed || review.Response.UID != "u-1" {
		t.Fatalf("want the create allowed and answered for its uid, got %+v", review.Response)
	}
	var ops []map[string]any
	if err := json.Unmarshal(review.Response.Patch, &ops); err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"add","path":"/metadata/labels","value":{"labelled":"yes"}}]`
	if got, _ := json.Marshal(ops); string(got) != want {
		t.Errorf("patch %s, want %s", got, want)
	}
	if l.old != nil {
		t.Errorf("a create has no old object; Old gave %v", l.old)
	}

	const labelled = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"team","labels":{"labelled":"yes"}}}`
	_, review = call(t, h, admissionv1.Update, labelled, `{"metadata":{"name":"before"}}`)
	if !review.Response.Allowed || review.Response.Patch != nil {
		t.Errorf("an object the defaulter leaves as it is needs no patch, got %+v", review.Response)
	}
	if l.old == nil || l.old.Name != "before" {
		t.Errorf("Old gave %v, want the update's old object", l.old)
	}

	_, review = call(t, h, admissionv1.Delete, "", labelled)
	if !review.Response.Allowed || review.Response.Patch != nil {
		t.Errorf("a delete passes unpatched, got %+v", review.Response)
	}
}

func TestValidating_AnswersRefusalsByTheFieldAndPassesWarningsOn(t *testing.T) {
	h := Serve(Validating[*corev1.ConfigMap](judge{}), discard)
	_, review := call(t, h, admissionv1.Create, `{"metadata":{"name":"cm"}}`, "")
	r := review.Response
	if r.Allowed || r.Result == nil || r.Result.Code != http.StatusUnprocessableEntity ||
		!strings.Contains(r.Result.Message, "data: Required value: must hold a key") {
		t.Errorf("want a 422 naming the field, got %+v", r)
	}
	_, review = call(t, h, admissionv1.Create, `{"metadata":{"name":"plain"}}`, "")
	if r := review.Response; r.Allowed || r.Result == nil || r.Result.Code != http.StatusForbidden || r.Result.Message != "plain refusal" {
		t.Errorf("want a 403 with the error's message, got %+v", r)
	}
	_, review = call(t, h, admissionv1.Update, `{"metadata":{"name":"cm"}}`, `{"metadata":{"name":"before"}}`)
	if r := review.Response; !r.Allowed || len(r.Warnings) != 1 || r.Warnings[0] != "updated before" {
		t.Errorf("want the update allowed with the warning about the old object, got %+v", r)
	}
	_, review = call(t, h, admissionv1.Update, `{"metadata":{"name":"cm"}}`, "")
	if r := review.Response; r.Allowed || r.Result == nil || r.Result.Code != http.StatusBadRequest {
		t.Errorf("an update without its old object is a bad request, got %+v", r)
	}
}

func TestServe_RefusesWhatIsNotAV1AdmissionReview(t *testing.T) {
	h := Serve(Validating[*corev1.ConfigMap](judge{}), discard)
	for _, c := range []struct {
		name, contentType, body, want string
	}{
		{"empty", "application/json", "", "request body is empty"},
		{"not JSON's content type", "text/plain", `{}`, "contentType=text/plain"},
		{"v1beta1", "application/json", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}`,
			"admissionReviewVersions: [v1]"},
		{"no request", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, "has no request"},
		{"not JSON", "application/json", `{"apiVersion":`, "decode the AdmissionReview"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, review := send(t, h, c.contentType, []byte(c.body))
			r := review.Response
			if r.Allowed || r.Result == nil || r.Result.Code != http.StatusBadRequest || !strings.Contains(r.Result.Message, c.want) {
				t.Errorf("want a 400 saying %q, got %+v", c.want, r)
			}
		})
	}
}

func TestPath_IsTheBuildersAndTheMarkersPath(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "platform.example.com", Version: "v1", Kind: "ScheduleTask"}
	if got, want := Path("mutate", gvk), "/mutate-platform-example-com-v1-scheduletask"; got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
}
