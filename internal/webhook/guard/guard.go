// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package guard

import (
	"bytes"
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/example/platform-operator/internal/metrics"
)

// DefaultMaxInFlight is --webhook-max-in-flight unless set: well above what
// the API server sends a healthy manager (a write takes milliseconds to
// admit), low enough that a flood cannot hold thousands of decoded objects
// in memory at once.
const DefaultMaxInFlight = 64

// DefaultMaxBodyReadsPerSource is Options.MaxBodyReadsPerSource unless
// set. A body is read whole before its request takes a slot, so that a slow
// client holds no slot; this bounds how many bodies one address may be
// sending at once, and so the memory its partial bodies hold (at most 7 MiB
// each), however many connections it holds. The API server sends a body in
// one go, so its reads overlap only for the instant of a burst, and one
// beyond the bound is answered 429, which it retries.
const DefaultMaxBodyReadsPerSource = 64

// Default body caps. An AdmissionReview carries the object and, on an
// update, the old one, each at most the API server's 3 MiB request limit;
// controller-runtime reads at most 7 MiB of it anyway. A ConversionReview
// carries every object of a list that needs converting in one request, so
// its cap is a list's, not an object's.
const (
	DefaultMaxAdmissionBody  = 7 << 20
	DefaultMaxConversionBody = 64 << 20
)

// Reasons of a rejection, the values of the reason label.
const (
	// ReasonTooManyRequests: the limit of requests in flight was reached.
	ReasonTooManyRequests = "TooManyRequests"
	// ReasonNoClientCertificate: an admission path was called without a
	// client certificate of the configured CA.
	ReasonNoClientCertificate = "NoClientCertificate"
	// ReasonBodyTooLarge: the body was larger than its path's cap.
	ReasonBodyTooLarge = "BodyTooLarge"
	// ReasonBodyIncomplete: the body did not arrive whole within the
	// server's read deadline (or the client went away).
	ReasonBodyIncomplete = "BodyIncomplete"
	// ReasonTooManyConnections: a source already held the most connections
	// one source may hold (the path label is "connection").
	ReasonTooManyConnections = "TooManyConnections"
	// ReasonTooManyBodies: a source was already sending the most request
	// bodies one source may send at once.
	ReasonTooManyBodies = "TooManyBodies"
)

// Kinds of path, the values of the path label: the admission paths share
// one limit, the conversion path has its own.
const (
	PathAdmission  = "admission"
	PathConversion = "conversion"
	// PathConnection labels connections refused before any request.
	PathConnection = "connection"
)

// Rejected counts the requests the webhook server refused before any
// webhook saw them, by kind of path and reason.
var Rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: metrics.Namespace,
	Name:      "webhook_rejected_total",
	Help: "Webhook requests and connections refused before any webhook saw them, by path (admission, conversion, " +
		"connection) and reason (TooManyRequests, NoClientCertificate, BodyTooLarge, BodyIncomplete, TooManyConnections, " +
		"TooManyBodies).",
}, []string{"path", "reason"})

func init() {
	metrics.Registry.MustRegister(Rejected)
	for _, path := range []string{PathAdmission, PathConversion} {
		for _, reason := range []string{ReasonTooManyRequests, ReasonBodyTooLarge, ReasonBodyIncomplete, ReasonTooManyBodies} {
			Rejected.WithLabelValues(path, reason)
		}
	}
	Rejected.WithLabelValues(PathAdmission, ReasonNoClientCertificate)
	Rejected.WithLabelValues(PathConnection, ReasonTooManyConnections)
}

// Options say how the server defends itself.
type Options struct {
	// MaxInFlight is how many admission requests are served at once, and,
	// separately, how many conversion requests; a request beyond it is
	// answered 429 with Retry-After: 1 at once. Zero or less: no limit.
	MaxInFlight int
	// RequireClientCert makes the admission paths (/mutate-*, /validate-*)
	// refuse a request whose TLS connection presented no client
	// certificate that verified against the server's ClientCAs (see
	// ClientCATLSOption). The conversion path stays open: the API server
	// sends no client certificate to conversion webhooks.
	RequireClientCert bool
	// MaxAdmissionBody and MaxConversionBody cap a request's body on each
	// kind of path; a larger one is answered 413. Zero: the defaults.
	MaxAdmissionBody, MaxConversionBody int64
	// MaxBodyReadsPerSource bounds the request bodies one remote address
	// may be sending at once, on every path together; a request beyond it
	// is answered 429 with Retry-After: 1. Zero:
	// DefaultMaxBodyReadsPerSource; below zero, no bound.
	MaxBodyReadsPerSource int
}

// Server returns s with every handler registered on it behind the
// defences of opts. Wrap it before anything that should not run for a
// refused request (tracing spans, for instance).
func Server(s webhook.Server, opts Options) webhook.Server {
	return &guardedServer{
		Server:     s,
		opts:       opts,
		admission:  newLimiter(opts.MaxInFlight),
		conversion: newLimiter(opts.MaxInFlight),
		reads:      newSources(cmp.Or(opts.MaxBodyReadsPerSource, DefaultMaxBodyReadsPerSource)),
	}
}

// guardedServer wraps handlers as they are registered; everything else is
// the wrapped server's.
type guardedServer struct {
	webhook.Server
	opts Options
	// admission is shared by every admission path, since they share the
	// memory and the CPU a limit protects; conversion is apart, so that a
	// flood of writes cannot stop reads of v1alpha1 objects.
	admission, conversion limiter
	// reads counts the bodies each source is sending, on every path.
	reads *sources
}

// Register registers hook at path behind the server's defences.
func (s *guardedServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, s.Handler(path, hook))
}

// Handler is hook behind the defences that apply to path: the client
// certificate check on an admission path when it is required, then the
// limit of its kind of path.
//
// The body is read whole before a slot is taken: a client that sends its
// body slowly, or never, holds a connection until the server's read
// deadline, but no slot, so it cannot make the API server's own requests
// wait. The body cap bounds what each such read holds in memory.
func (s *guardedServer) Handler(path string, hook http.Handler) http.Handler {
	kind, l, maxBody := PathConversion, s.conversion, cmp.Or(s.opts.MaxConversionBody, DefaultMaxConversionBody)
	if isAdmission(path) {
		kind, l, maxBody = PathAdmission, s.admission, cmp.Or(s.opts.MaxAdmissionBody, DefaultMaxAdmissionBody)
	}
	h := readBody(kind, maxBody, s.reads, limit(kind, l, hook))
	if kind == PathAdmission && s.opts.RequireClientCert {
		h = requireClientCert(h)
	}
	return h
}

// readBody reads the request's body whole, at most maxBody bytes, and
// hands next the request with that body. A larger body is answered 413
// naming the cap; one that does not arrive whole (the server's read
// deadline passed, the client went away) 400; one from a source already
// sending as many bodies as reads allows 429, before any of it is read.
func readBody(kind string, maxBody int64, reads *sources, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		source := hostOf(r.RemoteAddr)
		if !reads.take(source) {
			Rejected.WithLabelValues(kind, ReasonTooManyBodies).Inc()
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many request bodies being sent from "+source+" at once; retry",
				http.StatusTooManyRequests)
			return
		}
		body, err := ReadBody(http.MaxBytesReader(w, r.Body, maxBody), r.ContentLength, maxBody)
		reads.give(source)
		if err != nil {
			if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
				Rejected.WithLabelValues(kind, ReasonBodyTooLarge).Inc()
				http.Error(w, fmt.Sprintf("request body larger than %d bytes, the most this webhook reads", maxBody),
					http.StatusRequestEntityTooLarge)
				return
			}
			Rejected.WithLabelValues(kind, ReasonBodyIncomplete).Inc()
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// ReadBody reads a request's body of size bytes (its Content-Length; -1
// when not known) whole, in one buffer of that size when it is known and
// at most max, so that a webhook's body costs one allocation rather than
// io.ReadAll's doublings. It fails as r fails: an *http.MaxBytesError from
// an http.MaxBytesReader past its cap, io.ErrUnexpectedEOF on a body
// shorter than its size.
func ReadBody(r io.Reader, size, max int64) ([]byte, error) {
	if size < 0 || size > max {
		return io.ReadAll(r)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	// The body must end where its size says.
	var more [1]byte
	if n, err := r.Read(more[:]); n > 0 || (err != nil && err != io.EOF) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("request body longer than its Content-Length of %d bytes", size)
		}
		return nil, err
	}
	return body, nil
}

// sources counts something each remote address holds, up to max each; a
// nil *sources counts nothing and refuses nothing.
type sources struct {
	max  int
	mu   sync.Mutex
	held map[string]int
}

// newSources returns a count of up to max per source, or nil (no bound)
// when max is below one.
func newSources(max int) *sources {
	if max < 1 {
		return nil
	}
	return &sources{max: max, held: map[string]int{}}
}

// take counts one more for source, unless it holds max already.
func (s *sources) take(source string) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[source] >= s.max {
		return false
	}
	s.held[source]++
	return true
}

// give gives back one that take counted.
func (s *sources) give(source string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[source]--; s.held[source] <= 0 {
		delete(s.held, source)
	}
}

// hostOf is the address of a remote "host:port", the source a bound is
// kept by.
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// isAdmission reports whether path is one of the builder's admission paths.
func isAdmission(path string) bool {
	return strings.HasPrefix(path, "/mutate-") || strings.HasPrefix(path, "/validate-")
}

// limiter holds a slot per request in flight; nil means no limit.
type limiter chan struct{}

func newLimiter(n int) limiter {
	if n <= 0 {
		return nil
	}
	return make(limiter, n)
}

// limit serves a request only while l has a free slot, and answers 429
// Too Many Requests with Retry-After: 1 otherwise, without waiting: the
// API server retries, and meanwhile the queue is its, shared fairly by API
// Priority and Fairness, not the manager's.
func limit(kind string, l limiter, next http.Handler) http.Handler {
	if l == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case l <- struct{}{}:
			defer func() { <-l }()
			next.ServeHTTP(w, r)
		default:
			Rejected.WithLabelValues(kind, ReasonTooManyRequests).Inc()
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many webhook requests in flight; retry", http.StatusTooManyRequests)
		}
	})
}

// requireClientCert serves only requests whose connection presented a
// client certificate that the TLS handshake verified against the server's
// ClientCAs (tls.VerifyClientCertIfGiven leaves VerifiedChains empty when
// none was presented); others get 401 Unauthorized.
func requireClientCert(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			Rejected.WithLabelValues(PathAdmission, ReasonNoClientCertificate).Inc()
			http.Error(w, "a client certificate of the configured CA is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ClientCATLSOption reads the PEM CA bundle at path and returns a TLS
// option for the webhook server that verifies a client certificate against
// it when one is presented. A certificate is not required at the TLS
// layer, since /convert must stay reachable without one; the admission
// paths require it (Options.RequireClientCert). The bundle is read once:
// a new CA takes a restart of the manager (a rolling one, see
// docs/operations.md).
func ClientCATLSOption(path string) (func(*tls.Config), error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the webhook client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("the webhook client CA file " + path + " holds no PEM certificate")
	}
	return func(c *tls.Config) {
		c.ClientCAs = pool
		c.ClientAuth = tls.VerifyClientCertIfGiven
	}, nil
}
