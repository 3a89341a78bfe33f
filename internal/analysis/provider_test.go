// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// TestPrometheus_AnswersAreNumbersOrClassifiedErrors drives the real client
// against answers written as Prometheus writes them, so the classification
// rests on what the client makes of a 400, a 422 and a 5xx, not on a guess.
func TestPrometheus_AnswersAreNumbersOrClassifiedErrors(t *testing.T) {
	cases := []struct {
		name  string
		reply reply
		// want is the value of an answer; check, when set, replaces the
		// comparison for values == cannot compare (NaN).
		want    Value
		check   func(Value) bool
		class   platformv1.MeasurementResult // of the error; Pass for none
		errText string                       // in the error
	}{
		{name: "one series", reply: vector("0.12"), want: Value{Number: 0.12}, class: platformv1.MeasurementPass},
		{name: "a scalar", reply: scalar("3"), want: Value{Number: 3}, class: platformv1.MeasurementPass},
		{name: "empty vector", reply: vector(), want: Value{Empty: true}, class: platformv1.MeasurementPass},
		{name: "NaN", reply: vector("NaN"), check: func(v Value) bool { return !v.Empty && math.IsNaN(v.Number) },
			class: platformv1.MeasurementPass},
		{name: "+Inf", reply: vector("+Inf"), want: Value{Number: math.Inf(1)}, class: platformv1.MeasurementPass},
		{name: "-Inf", reply: vector("-Inf"), want: Value{Number: math.Inf(-1)}, class: platformv1.MeasurementPass},
		{name: "two series", reply: vector("1", "2"), class: platformv1.MeasurementInvalid,
			errText: "2 series returned, want 1"},
		{name: "a range vector", reply: success("matrix", `[{"metric":{},"values":[[1767225600,"1"]]}]`),
			class: platformv1.MeasurementInvalid, errText: "a range vector returned"},
		{name: "a string", reply: success("string", `[1767225600,"hello"]`),
			class: platformv1.MeasurementInvalid, errText: "a string returned"},
		{name: "a native histogram", reply: success("vector",
			`[{"metric":{},"histogram":[1767225600,{"count":"1","sum":"1","buckets":[[0,"0","1","1"]]}]}]`),
			class: platformv1.MeasurementInvalid, errText: "native histogram"},
		{name: "400 bad_data", reply: promError(http.StatusBadRequest, "bad_data",
			`invalid parameter \"query\": 1:5: parse error: unexpected end of input`),
			class: platformv1.MeasurementInvalid, errText: "bad_data: invalid parameter"},
		{name: "422 execution", reply: promError(http.StatusUnprocessableEntity, "execution",
			"found duplicate series for the match group"),
			class: platformv1.MeasurementInvalid, errText: "execution: found duplicate series"},
		{name: "500 internal", reply: promError(http.StatusInternalServerError, "internal", "tsdb is closing"),
			class: platformv1.MeasurementError, errText: "server error: 500: tsdb is closing"},
		{name: "503 timeout", reply: promError(http.StatusServiceUnavailable, "timeout",
			"query timed out in expression evaluation"),
			class: platformv1.MeasurementError, errText: "503: query timed out"},
		{name: "502 from a proxy", reply: reply{status: http.StatusBadGateway, body: "<html>Bad Gateway</html>"},
			class: platformv1.MeasurementError, errText: "502: <html>Bad Gateway</html>"},
		{name: "404: not a Prometheus", reply: reply{status: http.StatusNotFound, body: "404 page not found"},
			class: platformv1.MeasurementError, errText: "client error: 404"},
		{name: "an answer that is not JSON", reply: reply{body: "hello"}, class: platformv1.MeasurementError},
		{name: "a value that is not a number", reply: vector("twelve"), class: platformv1.MeasurementError},
		{name: "an answer larger than the cap",
			reply:   vector(strings.Repeat("1", maxAnswerBytes)),
			class:   platformv1.MeasurementInvalid,
			errText: "far more than one number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeProm(t, func(string) reply { return c.reply })
			v, err := newProvider(t, f.URL, 5*time.Second).Query(t.Context(), "up", time.Unix(1767225600, 0))
			if got := Classify(err); got != c.class {
				t.Fatalf("Classify(%v) = %s, want %s", err, got, c.class)
			}
			if err != nil {
				if !strings.Contains(err.Error(), c.errText) {
					t.Errorf("error %q does not contain %q", err, c.errText)
				}
				return
			}
			if c.check != nil {
				if !c.check(v) {
					t.Errorf("value %+v", v)
				}
			} else if v != c.want {
				t.Errorf("value %+v, want %+v", v, c.want)
			}
		})
	}
}

func TestPrometheus_AsksTheQueryAtTheInstant(t *testing.T) {
	f := newFakeProm(t, func(string) reply { return vector("1") })
	at := time.Unix(1767225600, 500_000_000)
	if _, err := newProvider(t, f.URL, time.Second).Query(t.Context(), `sum(up{job="x"})`, at); err != nil {
		t.Fatal(err)
	}
	if f.times[0] != "1767225600.5" {
		t.Errorf("time parameter %q, want 1767225600.5", f.times[0])
	}
	if got := f.queries(); len(got) != 1 {
		t.Errorf("asked %d queries, want 1", len(got))
	}
}

// TestPrometheus_NeverWaitsLongerThanTheTimeout: each way of not answering
// ends within the timeout (plus scheduling slack), as Error.
func TestPrometheus_NeverWaitsLongerThanTheTimeout(t *testing.T) {
	const timeout = 500 * time.Millisecond
	slow := func(t *testing.T) string {
		return newFakeProm(t, func(string) reply { return reply{body: vector("1").body, delay: 10 * time.Second} }).URL
	}
	cases := []struct {
		name    string
		address func(t *testing.T) string
		errText string
	}{
		{"server answers too late", slow, "no answer within 500ms"},
		{"black hole: accepts and never answers", blackHole, "no answer within 500ms"},
		{"connection refused", refusedAddress, "connection refused"},
		// .invalid never resolves (RFC 6761); with no resolver at all the
		// lookup fails too, as Error.
		{"DNS failure", func(*testing.T) string { return "http://prometheus.invalid:9090" }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProvider(t, c.address(t), timeout)
			start := time.Now()
			_, err := p.Query(t.Context(), "up", time.Now())
			if elapsed := time.Since(start); elapsed > timeout+time.Second {
				t.Errorf("returned after %s, want within %s + 1s", elapsed, timeout)
			}
			if got := Classify(err); got != platformv1.MeasurementError {
				t.Fatalf("Classify(%v) = %s, want Error", err, got)
			}
			if !strings.Contains(err.Error(), c.errText) {
				t.Errorf("error %q does not contain %q", err, c.errText)
			}
		})
	}
}

func TestPrometheus_SlowAnswerWithinTheTimeoutCounts(t *testing.T) {
	f := newFakeProm(t, func(string) reply { return reply{body: vector("0.25").body, delay: 300 * time.Millisecond} })
	v, err := newProvider(t, f.URL, 3*time.Second).Query(t.Context(), "up", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if v != (Value{Number: 0.25}) {
		t.Errorf("value %+v, want 0.25", v)
	}
}

func TestPrometheus_CallersDeadlineBoundsTheQueryFurther(t *testing.T) {
	p := newProvider(t, blackHole(t), time.Minute)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Query(ctx, "up", time.Now())
	if elapsed := time.Since(start); elapsed > 1300*time.Millisecond {
		t.Errorf("returned after %s, want about 300ms", elapsed)
	}
	if got := Classify(err); got != platformv1.MeasurementError {
		t.Errorf("Classify(%v) = %s, want Error", err, got)
	}
}

// Prometheus is told to give up on a query a little before the client
// does: at the provider's timeout, or sooner when the caller's deadline
// (a measurement's, half its interval) comes first.
func TestPrometheus_SendsATimeoutWithinTheCallersDeadline(t *testing.T) {
	f := newFakeProm(t, func(string) reply { return vector("1") })
	p := newProvider(t, f.URL, 10*time.Second)
	if _, err := p.Query(t.Context(), "up", time.Now()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := p.Query(ctx, "up", time.Now()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	sent := append([]string(nil), f.timeouts...)
	f.mu.Unlock()
	for i, want := range []struct{ low, high time.Duration }{
		{9 * time.Second, 10 * time.Second},
		{time.Second, 2 * time.Second},
	} {
		// As Prometheus reads it: a number of seconds or its own form,
		// which has no fractions ("4.5s" is refused).
		parsed, err := model.ParseDuration(sent[i])
		got := time.Duration(parsed)
		if err != nil || got < want.low || got >= want.high {
			t.Errorf("query %d sent timeout=%q (%v), want in [%s, %s)", i, sent[i], err, want.low, want.high)
		}
	}
}

// TestTimedOut: a query that got no answer in time, whoever gave up, is
// told from an outage and from a refusal.
func TestTimedOut(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"Prometheus's timeout", &promv1.Error{Type: promv1.ErrTimeout, Msg: "query timed out in expression evaluation"}, true},
		{"Prometheus's 503 for a timeout", &promv1.Error{Type: promv1.ErrServer, Msg: "server error: 503",
			Detail: `{"status":"error","errorType":"timeout","error":"query timed out"}`}, true},
		{"the client's timeout", &timeoutError{after: time.Second, err: context.DeadlineExceeded}, true},
		{"an unavailable server", &promv1.Error{Type: promv1.ErrServer, Msg: "server error: 503", Detail: "upstream down"}, false},
		{"a refused query", &promv1.Error{Type: promv1.ErrBadData, Msg: "parse error"}, false},
		{"nothing", nil, false},
	} {
		if got := TimedOut(c.err); got != c.want {
			t.Errorf("%s: TimedOut = %t, want %t", c.name, got, c.want)
		}
	}
}

func TestPrometheus_SafeForConcurrentQueries(t *testing.T) {
	f := newFakeProm(t, func(q string) reply { return vector(strings.TrimPrefix(q, "q")) })
	p := newProvider(t, f.URL, 5*time.Second)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			v, err := p.Query(t.Context(), fmt.Sprintf("q%d", i), time.Now())
			if err != nil || v.Number != float64(i) {
				t.Errorf("query %d: %+v, %v", i, v, err)
			}
		})
	}
	wg.Wait()
}

func TestNewPrometheus_RefusesWhatCannotWork(t *testing.T) {
	for _, c := range []struct {
		address string
		timeout time.Duration
		errText string
	}{
		{"prometheus:9090", time.Second, "want http://host:port"},
		{"ftp://prometheus:9090", time.Second, "want http://host:port"},
		{"http://", time.Second, "want http://host:port"},
		{"http://prometheus:9090", 0, "want a positive duration"},
	} {
		_, err := NewPrometheus(Connection{Address: c.address, Timeout: c.timeout})
		if err == nil || !strings.Contains(err.Error(), c.errText) {
			t.Errorf("NewPrometheus(%q, %s) = %v, want an error containing %q", c.address, c.timeout, err, c.errText)
		}
	}
	if _, err := NewPrometheus(Connection{Address: "https://prometheus.monitoring.svc:9090/prefix", Timeout: time.Second}); err != nil {
		t.Errorf("NewPrometheus with a path prefix: %v", err)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want platformv1.MeasurementResult
	}{
		{nil, platformv1.MeasurementPass},
		{&promv1.Error{Type: promv1.ErrBadData, Msg: "parse error"}, platformv1.MeasurementInvalid},
		{&promv1.Error{Type: promv1.ErrExec, Msg: "many-to-many"}, platformv1.MeasurementInvalid},
		{fmt.Errorf("wrapped: %w", &promv1.Error{Type: promv1.ErrBadData}), platformv1.MeasurementInvalid},
		{&invalidAnswerError{msg: "2 series returned, want 1"}, platformv1.MeasurementInvalid},
		{&promv1.Error{Type: promv1.ErrServer, Msg: "server error: 500"}, platformv1.MeasurementError},
		{&promv1.Error{Type: promv1.ErrTimeout}, platformv1.MeasurementError},
		{&promv1.Error{Type: promv1.ErrCanceled}, platformv1.MeasurementError},
		{&promv1.Error{Type: promv1.ErrClient, Msg: "client error: 499"}, platformv1.MeasurementError},
		{&promv1.Error{Type: promv1.ErrBadResponse}, platformv1.MeasurementError},
		{context.DeadlineExceeded, platformv1.MeasurementError},
		{errors.New("connection reset by peer"), platformv1.MeasurementError},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}
