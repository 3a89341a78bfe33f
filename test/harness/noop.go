// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

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

	"github.com/example/platform-operator/internal/testutil/localwebhook"
)

// ServeNoOpWebhooks sends every webhook connection, from now until the
// returned function is called, to a server that allows every admission
// request at once, in place of the replicas: the same TLS certificate and
// protocol (HTTP/1.1, as the replicas serve by default and as the API
// server calls a webhook Service), the same paths and the same way through
// the forwarder, and no work beyond a valid answer (a conversion changes
// only each object's apiVersion). It is the floor the operator's admission is
// measured against. The connections the API server holds open to the side
// left are closed at each switch, so that its calls go where the switch
// says; call it between writes, not during them.
func (d *Operator) ServeNoOpWebhooks() (restore func(), err error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(d.certDir, "tls.crt"), filepath.Join(d.certDir, "tls.key"))
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", localwebhook.Host+":0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: noOpHandler(), ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	go func() { _ = srv.ServeTLS(l, "", "") }()
	d.noopPort.Store(int32(l.Addr().(*net.TCPAddr).Port))
	d.closePiped(false)
	return func() {
		d.noopPort.Store(0)
		d.closePiped(true)
		_ = srv.Close()
	}, nil
}

// noOpHandler answers each path as the replicas' paths are answered with
// the least work: conversions (/convert) converted, admission allowed.
func noOpHandler() http.Handler {
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
