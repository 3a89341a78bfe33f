// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/sets"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
)

// APIWrites counts the writes the manager sends to the API server, by the
// resource written and the verb: client-go's rest_client_requests_total
// says only the HTTP method, which cannot tell a status write from a
// CronJob create, nor a stored object from an access review that admission
// asks for (a create of a SubjectAccessReview stores nothing). The labels
// are small fixed sets: the kinds the manager writes and the five write
// verbs.
var APIWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: Namespace,
	Name:      "api_writes_total",
	Help: "Requests that write, sent by the manager to the API server, by group, resource, subresource, " +
		"verb (create, update, patch, delete, deletecollection) and HTTP status code.",
}, []string{"group", "resource", "subresource", "verb", "code"})

func init() {
	Registry.MustRegister(APIWrites)
}

// requestInfo parses a request's path as the API server does: the same
// parser, so a path means the same resource on both sides.
var requestInfo = &apirequest.RequestInfoFactory{
	APIPrefixes:          sets.String(sets.New("api", "apis")), //nolint:staticcheck // the parser's field is a sets.String
	GrouplessAPIPrefixes: sets.String(sets.New("api")),         //nolint:staticcheck // the parser's field is a sets.String
}

// CountWrites makes every client built from cfg count its writes in
// APIWrites. Reads pass through untouched.
func CountWrites(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return writeCounter{next: rt} })
}

// writeCounter is the RoundTripper of CountWrites.
type writeCounter struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (w writeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return w.next.RoundTrip(req)
	}
	resp, err := w.next.RoundTrip(req)
	info, perr := requestInfo.NewRequestInfo(req)
	if perr != nil || !info.IsResourceRequest {
		return resp, err
	}
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	APIWrites.WithLabelValues(info.APIGroup, info.Resource, info.Subresource, info.Verb, code).Inc()
	return resp, err
}
