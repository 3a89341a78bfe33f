// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

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

	"github.com/example/platform-operator/internal/text"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
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

// Connection is how the operator reaches its Prometheus: the address and
// what a real installation asks of a client (a bearer token, TLS with a
// private CA or a client certificate, a tenant header for Mimir, Cortex or
// Thanos). Files are read when used, not once: a projected service account
// token or a rotated certificate takes effect without a restart.
type Connection struct {
	// Address is http://host:port or https://host:port, with an optional
	// path prefix (https://thanos.example/prefix).
	Address string
	// Timeout bounds every query; the context may bound it further.
	Timeout time.Duration
	// BearerTokenFile holds a token sent as Authorization: Bearer, read
	// for each request.
	BearerTokenFile string
	// CAFile, CertFile and KeyFile are PEM files: the CA that signs
	// Prometheus's certificate, and the client's certificate and key.
	// They are read again when they change.
	CAFile, CertFile, KeyFile string
	// Headers are sent with every query (X-Scope-OrgID: a tenant of a
	// multi-tenant store, say).
	Headers map[string]string
}

// ParseHeader reads NAME=VALUE, as --prometheus-header gives it, into h.
func ParseHeader(h map[string]string, s string) error {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t:") || strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("%q: want NAME=VALUE, such as X-Scope-OrgID=team-a", s)
	}
	h[http.CanonicalHeaderKey(name)] = value
	return nil
}

// NewPrometheus is a Provider for the Prometheus HTTP API that c describes.
func NewPrometheus(c Connection) (Provider, error) {
	if c.Timeout <= 0 {
		return nil, fmt.Errorf("query timeout %s: want a positive duration", c.Timeout)
	}
	u, err := url.Parse(c.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("address %q of Prometheus: want http://host:port or https://host:port", c.Address)
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("a client certificate needs both its file and its key's file")
	}
	cfg := config.HTTPClientConfig{
		BearerTokenFile: c.BearerTokenFile,
		TLSConfig:       config.TLSConfig{CAFile: c.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile},
		FollowRedirects: true,
		EnableHTTP2:     true,
	}
	if len(c.Headers) > 0 {
		cfg.HTTPHeaders = &config.Headers{Headers: map[string]config.Header{}}
		for name, value := range c.Headers {
			cfg.HTTPHeaders.Headers[name] = config.Header{Values: []string{value}}
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("connection to Prometheus: %w", err)
	}
	// Prometheus's own client configuration reads the token file on every
	// request and reloads the TLS files when they change. Every phase
	// before the answer is bounded too: the per-query context bounds the
	// whole exchange, and these keep the transport from holding a dial
	// open past it.
	rt, err := config.NewRoundTripperFromConfig(cfg, "platform-operator",
		config.WithDialContextFunc((&net.Dialer{Timeout: c.Timeout, KeepAlive: 30 * time.Second}).DialContext),
		config.WithUserAgent("platform-operator"))
	if err != nil {
		return nil, fmt.Errorf("connection to Prometheus: %w", err)
	}
	client, err := api.NewClient(api.Config{Address: c.Address, RoundTripper: cappedTransport{next: rt}})
	if err != nil {
		return nil, fmt.Errorf("client for Prometheus at %q: %w", c.Address, err)
	}
	return &prometheus{api: promv1.NewAPI(client), timeout: c.Timeout}, nil
}

// Query implements Provider.
func (p *prometheus) Query(ctx context.Context, query string, at time.Time) (Value, error) {
	timeout := p.timeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(deadline))
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The timeout goes to Prometheus too, so it stops evaluating a query
	// nobody waits for any more; a little less of it, so that a query too
	// costly to finish in time gets Prometheus's own timeout error (see
	// TimedOut) rather than the client's.
	res, _, err := p.api.Query(qctx, query, at, promv1.WithTimeout(serverTimeout(timeout)))
	if err != nil {
		return Value{}, p.explain(ctx, qctx, err)
	}
	return valueOf(res)
}

// serverTimeout is the timeout Prometheus is given for a query the client
// waits timeout for: a tenth less (at most a second), the time the answer
// takes to come back, in whole seconds or milliseconds. The API client
// sends the Go form of the duration, and Prometheus reads "4s" and
// "900ms" but refuses "4.5s" (bad_data).
func serverTimeout(timeout time.Duration) time.Duration {
	d := timeout - min(timeout/10, time.Second)
	if d >= time.Second {
		return d.Truncate(time.Second)
	}
	return max(d.Truncate(time.Millisecond), time.Millisecond)
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
		return &timeoutError{after: p.timeout, err: err}
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
	return fmt.Errorf("%w: %s", err, text.Truncate(oneLine(detail), 120))
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

// OwnError is an error whose text is the operator's own and safe to show a
// tenant as it is (the manager has no Prometheus address, say); Cause passes
// it through.
type OwnError struct{ Msg string }

func (e *OwnError) Error() string { return e.Msg }

// Cause says in the operator's words why a query got no number, for status,
// events and the CLI. Prometheus's own texts never appear in it: they may
// quote series of other namespaces (a many-to-many match lists the label sets
// it found), a proxy's internals or the server's address; the manager logs
// them instead (Measurement.Cause).
func Cause(err error) string {
	var (
		own    *OwnError
		shape  *invalidAnswerError
		slow   *timeoutError
		apiErr *promv1.Error
		netErr net.Error
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &own):
		return own.Msg
	case errors.As(err, &shape):
		return shape.msg
	case errors.As(err, &slow):
		return "no answer within " + slow.after.String()
	case errors.As(err, &apiErr):
		switch apiErr.Type {
		case promv1.ErrBadData:
			return "Prometheus refused the query as malformed (bad_data)"
		case promv1.ErrExec:
			return "Prometheus could not evaluate the query (execution error; the manager's log has its text)"
		case promv1.ErrTimeout:
			return "the query timed out in Prometheus"
		case promv1.ErrCanceled:
			return "the query was canceled"
		case promv1.ErrServer:
			return "Prometheus answered with a server error (" + statusOf(apiErr.Msg) + ")"
		case promv1.ErrClient:
			return "Prometheus refused the request (" + statusOf(apiErr.Msg) + "; check the manager's credentials)"
		}
		return "Prometheus answered with an error (" + string(apiErr.Type) + ")"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return "no answer in time"
	case errors.Is(err, context.Canceled):
		return "the query was canceled"
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return "Prometheus is unreachable (" + opErr.Op + " failed)"
	}
	return "no usable answer (the manager's log has the error)"
}

// statusOf is the HTTP status the API client's message names ("server
// error: 503" gives "HTTP 503"), or "HTTP error" when it names none.
func statusOf(msg string) string {
	if i := strings.LastIndexByte(msg, ' '); i >= 0 {
		if code := msg[i+1:]; len(code) == 3 && strings.Trim(code, "0123456789") == "" {
			return "HTTP " + code
		}
	}
	return "HTTP error"
}

// timeoutError is a query that got no answer within the provider's timeout.
type timeoutError struct {
	after time.Duration
	err   error
}

func (e *timeoutError) Error() string { return fmt.Sprintf("no answer within %s: %v", e.after, e.err) }

func (e *timeoutError) Unwrap() error { return e.err }

// bodyErrorType is the errorType of the body of Prometheus's error answer,
// "" when it has none.
func bodyErrorType(apiErr *promv1.Error) promv1.ErrorType {
	var body struct {
		ErrorType string `json:"errorType"`
	}
	if json.Unmarshal([]byte(apiErr.Detail), &body) != nil {
		return ""
	}
	return promv1.ErrorType(body.ErrorType)
}

// TimedOut reports whether err says that a query got no answer in time:
// Prometheus gave up on it at the timeout it was sent with, or the manager
// stopped waiting. Unlike an outage (ProviderFailed), it is the query's
// cost, and asking again costs Prometheus the whole timeout each time: the
// controller spaces out the measurements of a criterion that keeps timing
// out.
func TimedOut(err error) bool {
	var (
		slow   *timeoutError
		apiErr *promv1.Error
	)
	switch {
	case err == nil:
		return false
	case errors.As(err, &slow):
		return true
	case errors.As(err, &apiErr):
		return apiErr.Type == promv1.ErrTimeout || (apiErr.Type == promv1.ErrServer && bodyErrorType(apiErr) == promv1.ErrTimeout)
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// ProviderFailed reports whether err says that Prometheus itself fails
// (unreachable, a server error, the manager has none) rather than that one
// query fails (refused, too slow, too large). Only the former stands for
// every canary's queries: a tenant's slow query must not make the operator
// stop asking for everyone else's.
func ProviderFailed(err error) bool {
	var (
		own    *OwnError
		apiErr *promv1.Error
		opErr  *net.OpError
	)
	switch {
	case err == nil:
		return false
	case errors.As(err, &own):
		return true
	case errors.As(err, &apiErr):
		if apiErr.Type != promv1.ErrServer {
			return false
		}
		// Prometheus answers a query it gave up on with a 503 too; its
		// body's errorType tells that from a server that cannot serve.
		switch bodyErrorType(apiErr) {
		case promv1.ErrTimeout, promv1.ErrCanceled, promv1.ErrExec, promv1.ErrBadData:
			return false
		}
		return true
	case errors.As(err, &opErr):
		return true
	}
	return false
}
