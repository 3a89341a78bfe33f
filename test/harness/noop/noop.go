// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package noop is a webhook server that does no work: every admission
// request allowed, every conversion converted with nothing changed but the
// apiVersion. It is the floor the admission figure measures the operator's
// webhooks against (harness.Operator.ServeNoOpWebhooks), run in a process
// of its own (test/harness/noopwebhook) as any webhook server is.
package noop

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Serve serves Handler on l over TLS with the tls.crt and tls.key of
// certDir, HTTP/1.1 only, as the replicas serve by default and as the API
// server calls a webhook Service, until l is closed.
func Serve(l net.Listener, certDir string) error {
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: Handler(), ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	return srv.ServeTLS(l, "", "")
}

// Handler answers each path as the replicas' paths are answered with the
// least work: conversions (/convert) converted, admission allowed.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/convert", convert)
	mux.HandleFunc("/", allow)
	return mux
}

// convert answers a ConversionReview with each object unchanged but for
// its apiVersion, the least a conversion can do. The API server converts
// every write of a kind served in two versions for the watch cache of the
// other (ScheduleTask: v1 and v1alpha1), so the floor must answer these
// calls as the replicas do, not fail them.
func convert(w http.ResponseWriter, r *http.Request) {
	var review apiextensionsv1.ConversionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not a ConversionReview: %v", err), http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{
		UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess},
	}
	for _, obj := range review.Request.Objects {
		var u map[string]any
		if err := json.Unmarshal(obj.Raw, &u); err != nil {
			http.Error(w, fmt.Sprintf("an object to convert: %v", err), http.StatusBadRequest)
			return
		}
		u["apiVersion"] = review.Request.DesiredAPIVersion
		raw, err := json.Marshal(u)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: raw})
	}
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// allow answers an AdmissionReview allowed, without a patch.
func allow(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}
