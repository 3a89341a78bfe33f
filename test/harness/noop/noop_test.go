// SPDX-License-Identifier: Apache-2.0

package noop

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestNoOpHandler_ConvertsAndAllows: the floor's server answers a
// ConversionReview with the objects in the version asked for (a
// conversion the API server accepts), and an AdmissionReview allowed.
func TestNoOpHandler_ConvertsAndAllows(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()

	conv := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{UID: "c1", DesiredAPIVersion: "platform.example.com/v1alpha1",
			Objects: []runtime.RawExtension{{Raw: []byte(
				`{"apiVersion":"platform.example.com/v1","kind":"ScheduleTask","metadata":{"name":"a"}}`)}}},
	}
	var convAnswer apiextensionsv1.ConversionReview
	post(t, srv.URL+"/convert", conv, &convAnswer)
	resp := convAnswer.Response
	if resp == nil || resp.UID != "c1" || resp.Result.Status != metav1.StatusSuccess || len(resp.ConvertedObjects) != 1 {
		t.Fatalf("conversion answered %+v", resp)
	}
	var obj map[string]any
	err := json.Unmarshal(resp.ConvertedObjects[0].Raw, &obj)
	if err != nil || obj["apiVersion"] != "platform.example.com/v1alpha1" || obj["kind"] != "ScheduleTask" {
		t.Fatalf("converted object %s (%v)", resp.ConvertedObjects[0].Raw, err)
	}

	adm := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &admissionv1.AdmissionRequest{UID: "a1"},
	}
	var admAnswer admissionv1.AdmissionReview
	post(t, srv.URL+"/validate-platform-example-com-v1-scheduletask", adm, &admAnswer)
	if a := admAnswer.Response; a == nil || a.UID != "a1" || !a.Allowed || a.Patch != nil {
		t.Fatalf("admission answered %+v", a)
	}
}

// post sends in as JSON to url and decodes the answer into out.
func post(t *testing.T, url string, in, out any) {
	t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body)) //nolint:gosec // a test server's URL
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}
