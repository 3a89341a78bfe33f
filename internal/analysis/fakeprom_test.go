// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// reply is one answer of the fake Prometheus.
type reply struct {
	status int // HTTP status; 200 when 0
	body   string
	delay  time.Duration // before answering
}

// sampleTime is the timestamp of the fake's samples: Prometheus stamps an
// instant query's samples with the evaluation time.
const sampleTime = "1767225600"

// vector is a success answer of one series per value, values written as
// Prometheus writes them ("0.12", "NaN", "+Inf"); no values is an empty
// vector.
func vector(values ...string) reply {
	series := make([]string, 0, len(values))
	for i, v := range values {
		series = append(series, fmt.Sprintf(`{"metric":{"pod":"p%d"},"value":[%s,"%s"]}`, i, sampleTime, v))
	}
	return success("vector", "["+strings.Join(series, ",")+"]")
}

// scalar is a success answer of a scalar.
func scalar(v string) reply {
	return success("scalar", fmt.Sprintf(`[%s,"%s"]`, sampleTime, v))
}

// success is a success answer of a result type and its JSON.
func success(resultType, result string) reply {
	return reply{body: fmt.Sprintf(`{"status":"success","data":{"resultType":"%s","result":%s}}`, resultType, result)}
}

// promError is an error answer as Prometheus writes it.
func promError(status int, errorType, msg string) reply {
	return reply{status: status, body: fmt.Sprintf(`{"status":"error","errorType":"%s","error":"%s"}`, errorType, msg)}
}

// fakeProm is an httptest Prometheus answering /api/v1/query. It records
// each query it was asked, as kind(query) names it, and the time parameter.
type fakeProm struct {
	URL    string
	answer func(query string) reply

	mu       sync.Mutex
	asked    []string
	times    []string
	timeouts []string
}

// newFakeProm serves answer until the test ends.
func newFakeProm(t *testing.T, answer func(query string) reply) *fakeProm {
	t.Helper()
	f := &fakeProm{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *fakeProm) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	q := r.FormValue("query")
	f.mu.Lock()
	f.asked = append(f.asked, kind(q))
	f.times = append(f.times, r.FormValue("time"))
	f.timeouts = append(f.timeouts, r.FormValue("timeout"))
	f.mu.Unlock()
	rep := f.answer(q)
	if rep.delay > 0 {
		// Give up with the client, so the server's Close does not wait out
		// the delay.
		select {
		case <-time.After(rep.delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write([]byte(rep.body))
}

// queries is what the fake was asked, in order.
func (f *fakeProm) queries() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

// kind names a query for the tests: its track and whether it counts samples,
// "canary samples", "stable value". The tests' custom queries name their
// samples metric *_samples, and the built-in sample guard uses increase().
func kind(q string) string {
	track := platformv1.TrackCanary
	if strings.Contains(q, `track="stable"`) {
		track = platformv1.TrackStable
	}
	if strings.Contains(q, "increase(") || strings.Contains(q, "_samples") {
		return track + " samples"
	}
	return track + " value"
}

// byKind answers each kind of query with its reply, and anything else with
// a 500 saying so, which fails the test's expectations.
func byKind(replies map[string]reply) func(string) reply {
	return func(q string) reply {
		if r, ok := replies[kind(q)]; ok {
			return r
		}
		return promError(http.StatusInternalServerError, "internal", "no answer configured for "+kind(q))
	}
}

// refusedAddress is the address of a listener that was closed: connecting
// to it is refused.
func refusedAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// blackHole is the address of a listener that accepts connections and never
// reads or writes on them, like a host behind a stuck proxy.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// newProvider is a Prometheus provider for address with a timeout.
func newProvider(t *testing.T, address string, timeout time.Duration) Provider {
	t.Helper()
	p, err := NewPrometheus(Connection{Address: address, Timeout: timeout})
	if err != nil {
		t.Fatalf("NewPrometheus(%q): %v", address, err)
	}
	return p
}
