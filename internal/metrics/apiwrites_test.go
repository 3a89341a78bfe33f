// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"
)

func TestCountWrites_ByResourceSubresourceAndVerb(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/conflicted") {
			w.WriteHeader(http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	CountWrites(cfg)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	APIWrites.Reset()
	for _, r := range []struct{ method, path string }{
		{http.MethodPost, "/apis/batch/v1/namespaces/team/cronjobs"},
		{http.MethodPut, "/apis/platform.example.com/v1/namespaces/team/scheduletasks/data/status"},
		{http.MethodPut, "/apis/platform.example.com/v1/namespaces/team/scheduletasks/conflicted"},
		{http.MethodPatch, "/apis/apps/v1/namespaces/team/deployments/web"},
		{http.MethodDelete, "/apis/batch/v1/namespaces/team/jobs/data-1"},
		{http.MethodPost, "/api/v1/namespaces/team/events"},
		{http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews"},
		{http.MethodGet, "/apis/batch/v1/namespaces/team/cronjobs"},
		{http.MethodPost, "/healthz"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), r.method, srv.URL+r.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	for _, c := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"batch", "cronjobs", "", "create", "200"}, 1},
		{[]string{"platform.example.com", "scheduletasks", "status", "update", "200"}, 1},
		{[]string{"platform.example.com", "scheduletasks", "", "update", "409"}, 1},
		{[]string{"apps", "deployments", "", "patch", "200"}, 1},
		{[]string{"batch", "jobs", "", "delete", "200"}, 1},
		{[]string{"", "events", "", "create", "200"}, 1},
		{[]string{"authorization.k8s.io", "subjectaccessreviews", "", "create", "200"}, 1},
	} {
		if got := testutil.ToFloat64(APIWrites.WithLabelValues(c.labels...)); got != c.want {
			t.Errorf("writes %v = %v, want %v", c.labels, got, c.want)
		}
	}
	// The read and the request that is no resource's are not counted.
	if n := testutil.CollectAndCount(APIWrites); n != 7 {
		t.Errorf("%d series, want the 7 writes only", n)
	}
}
