/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Provider answers instant queries.
type Provider interface {
	// Query evaluates query at the instant at. It returns a Value, or an error
	// classified by Classify.
	Query(ctx context.Context, query string, at time.Time) (Value, error)
}

// Value is what one query returned.
type Value struct {
	// Empty: an empty vector. Otherwise Number is the one value (NaN and Inf possible).
	Empty  bool
	Number float64
}

// Classify is the measurement result a Provider's error stands for. Invalid:
// the query is wrong and asking again will not help: Prometheus refused it
// (bad_data, HTTP 400) or could not execute it (execution, HTTP 422), or it
// answered with something other than one number (several series, a range
// vector, a string). Error: anything else (unreachable, timeout, 5xx, an
// answer that does not parse), which a later measurement may not meet. nil
// is Pass: the query answered and its value is judged.
//
// A fake Provider makes an Invalid error as Prometheus's client does:
// &promv1.Error{Type: promv1.ErrBadData, Msg: "..."}.
func Classify(err error) platformv1.MeasurementResult {
	if err == nil {
		return platformv1.MeasurementPass
	}
	var shape *invalidAnswerError
	if errors.As(err, &shape) {
		return platformv1.MeasurementInvalid
	}
	var apiErr *promv1.Error
	if errors.As(err, &apiErr) && (apiErr.Type == promv1.ErrBadData || apiErr.Type == promv1.ErrExec) {
		return platformv1.MeasurementInvalid
	}
	return platformv1.MeasurementError
}

// invalidAnswerError is an answer Prometheus gave that no query of a
// criterion should give: it is the query's fault, not Prometheus's.
type invalidAnswerError struct{ msg string }

func (e *invalidAnswerError) Error() string { return e.msg }

// maxAnswerBytes bounds the body of one answer. One number takes a hundred
// bytes; a query that returns thousands of series would otherwise be read
// whole into the manager's memory only to be refused.
const maxAnswerBytes = 1 << 20

// errAnswerTooLarge is what reading past maxAnswerBytes gives.
var errAnswerTooLarge = &invalidAnswerError{
	msg: fmt.Sprintf("answer larger than %d KiB: the query returns far more than one number", maxAnswerBytes>>10),
}

// prometheus is a Provider for the Prometheus HTTP API. The API client and
// the transport are safe for concurrent use, and it holds nothing else.
type prometheus struct {
	api     promv1.API
	timeout time.Duration
}

// NewPrometheus is a Provider for the Prometheus HTTP API at address (http://host:port),
// with every query bounded by timeout (the context may bound it further).
func NewPrometheus(address string, timeout time.Duration) (Provider, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("query timeout %s: want a positive duration", timeout)
	}
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("address %q of Prometheus: want http://host:port or https://host:port", address)
	}
	// DefaultTransport's proxy settings and connection pool, with every
	// phase before the answer bounded too. The per-query context already
	// bounds the whole exchange; these keep the transport itself from
	// holding a dial or a silent connection open past it.
	t := &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	if d, ok := http.DefaultTransport.(*http.Transport); ok {
		t = d.Clone()
	}
	t.DialContext = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = timeout
	t.ResponseHeaderTimeout = timeout
	// Measurements of many applications run at once against one Prometheus;
	// the default of two idle connections per host would redial for most.
	t.MaxIdleConnsPerHost = 16
	client, err := api.NewClient(api.Config{Address: address, RoundTripper: cappedTransport{next: t}})
	if err != nil {
		return nil, fmt.Errorf("client for Prometheus at %q: %w", address, err)
	}
	return &prometheus{api: promv1.NewAPI(client), timeout: timeout}, nil
}

// Query implements Provider.
func (p *prometheus) Query(ctx context.Context, query string, at time.Time) (Value, error) {
	qctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	// The timeout goes to Prometheus too, so it stops evaluating a query
	// nobody waits for any more.
	res, _, err := p.api.Query(qctx, query, at, promv1.WithTimeout(p.timeout))
	if err != nil {
		return Value{}, p.explain(ctx, qctx, err)
	}
	return valueOf(res)
}

// explain makes the error of a query that got no number say why, in words a
// person acts on.
func (p *prometheus) explain(ctx, qctx context.Context, err error) error {
	// The query's own deadline, or the transport's bound on one phase of
	// it, whichever fired first; not the caller's deadline, which is the
	// caller's to explain.
	var netErr net.Error
	timedOut := errors.Is(qctx.Err(), context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())
	if timedOut && ctx.Err() == nil {
		return fmt.Errorf("no answer within %s: %w", p.timeout, err)
	}
	// The API client decodes scalars, vectors and matrices only, and fails
	// on a string; its message is the one way to tell that answer from one
	// that does not parse. CheckQuery refuses queries of type string, so
	// only a query admitted without it gets here.
	if strings.Contains(err.Error(), `unexpected value type "string"`) {
		return &invalidAnswerError{msg: "a string returned, want an instant vector or a scalar"}
	}
	return withDetail(err)
}

// valueOf is the one number of an answer, or why the answer is not one.
func valueOf(res model.Value) (Value, error) {
	switch v := res.(type) {
	case *model.Scalar:
		return Value{Number: float64(v.Value)}, nil
	case model.Vector:
		switch {
		case len(v) == 0:
			return Value{Empty: true}, nil
		case len(v) > 1:
			return Value{}, &invalidAnswerError{msg: fmt.Sprintf("%d series returned, want 1", len(v))}
		case v[0].Histogram != nil:
			return Value{}, &invalidAnswerError{msg: "a native histogram returned, want a number"}
		}
		return Value{Number: float64(v[0].Value)}, nil
	case model.Matrix:
		return Value{}, &invalidAnswerError{msg: "a range vector returned, want an instant vector or a scalar"}
	}
	return Value{}, fmt.Errorf("answer of unknown type %T", res)
}

// withDetail adds to a 4xx or 5xx error what the body said: the client keeps
// the body aside and says only "server error: 503". Prometheus's own errors
// are JSON with an error field; a proxy's are text.
func withDetail(err error) error {
	var apiErr *promv1.Error
	if !errors.As(err, &apiErr) || apiErr.Detail == "" {
		return err
	}
	var body struct {
		Error string `json:"error"`
	}
	detail := apiErr.Detail
	if json.Unmarshal([]byte(detail), &body) == nil && body.Error != "" {
		detail = body.Error
	}
	return fmt.Errorf("%w: %s", err, truncate(oneLine(detail), 120))
}

// cappedTransport stops reading an answer at maxAnswerBytes.
type cappedTransport struct{ next http.RoundTripper }

func (c cappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: maxAnswerBytes}
	return resp, nil
}

// cappedBody reads at most one byte past its limit, to tell a body of exactly
// the limit from a longer one, and fails there.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, errAnswerTooLarge
	}
	return n, err
}
