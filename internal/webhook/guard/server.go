// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package guard

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Defaults of ServerOptions.
const (
	// DefaultReadTimeout is how long a request's headers and body may take
	// to arrive: the longest the API server waits for a webhook (10 s), so
	// a client slower than any call of the API server holds a connection
	// no longer than that call could.
	DefaultReadTimeout = 10 * time.Second
	// DefaultMaxConnsPerSource is how many connections one address may
	// hold open. The API server calls a webhook Service over HTTP/1.1 (it
	// turns HTTP/2 off for them, so that calls spread over the Service's
	// endpoints), one connection per call in flight, and keeps up to 25
	// idle per webhook it calls: its requests in flight (600 by default)
	// and the idle ones of our six admission webhooks and /convert stay
	// below this. A pod
	// holding connections open gets no more, and the bodies it sends at
	// once are bounded apart (DefaultMaxBodyReadsPerSource).
	DefaultMaxConnsPerSource = 1024
)

// ServerOptions say where and how NewServer serves.
type ServerOptions struct {
	// Webhook is where it listens and its certificate, as for
	// controller-runtime's webhook server (Host, Port, CertDir, CertName,
	// KeyName, TLSOpts; ClientCAName is not supported: use
	// ClientCATLSOption).
	Webhook webhook.Options
	// Guard are the defences of every handler (see Server).
	Guard Options
	// ReadTimeout bounds the time a request's headers and body take to
	// arrive; DefaultReadTimeout when zero.
	ReadTimeout time.Duration
	// MaxConnsPerSource bounds the connections one remote address holds
	// open; a connection beyond it is closed at once.
	// DefaultMaxConnsPerSource when zero; below zero, no bound.
	MaxConnsPerSource int
	// Drain, when set, keeps the server serving for its delay once it
	// has begun, before the server stops (see Drain).
	Drain *Drain
}

// idleTimeout is how long the server keeps a connection no request
// uses: longer than the API server's transport keeps one (client-go's
// IdleConnTimeout, net/http's default of 90 s), so that the API server
// closes its idle connections and not the server. Were it the server, a
// call the API server sends on a connection at the moment the server
// closes it would fail, reported as EOF, and a webhook that fails closed
// would refuse the write.
const idleTimeout = 2 * time.Minute

// NewServer returns a webhook server that defends itself against slow
// and hostile clients, which controller-runtime's own server (a read
// header timeout of 32 s, no read timeout, no bound on connections, all
// set inside its Start) cannot be told to do: every request must arrive
// whole within the read timeout, each source may hold only so many
// connections, and every handler registered on it is behind Server's
// defences (the body read before a slot is taken, the body cap, the
// limit of requests in flight, the client certificate). Registration,
// the mux and controller-runtime's webhook metrics are its server's.
func NewServer(o ServerOptions) webhook.Server {
	base := webhook.NewServer(o.Webhook).(*webhook.DefaultServer)
	s := &defendedServer{base: base, opts: o}
	s.Server = Server(base, o.Guard)
	return s
}

// defendedServer is NewServer's: Register and WebhookMux are the guarded
// base server's; Start and StartedChecker are its own.
type defendedServer struct {
	webhook.Server
	base    *webhook.DefaultServer
	opts    ServerOptions
	started atomic.Bool
}

// options are the server's options with controller-runtime's defaults.
func (s *defendedServer) options() webhook.Options {
	o := s.opts.Webhook
	o.Port = cmp.Or(o.Port, webhook.DefaultPort)
	o.CertName = cmp.Or(o.CertName, "tls.crt")
	o.KeyName = cmp.Or(o.KeyName, "tls.key")
	return o
}

// Start serves the registered webhooks until ctx ends.
func (s *defendedServer) Start(ctx context.Context) error {
	o := s.options()
	log := logf.FromContext(ctx).WithName("webhook-server")
	if o.Port < 0 {
		log.Info("Webhook server is disabled")
		return nil
	}
	cfg := &tls.Config{NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12}
	for _, op := range o.TLSOpts {
		op(cfg)
	}
	if cfg.GetCertificate == nil {
		w, err := certwatcher.New(filepath.Join(o.CertDir, o.CertName), filepath.Join(o.CertDir, o.KeyName))
		if err != nil {
			return err
		}
		cfg.GetCertificate = w.GetCertificate
		go func() {
			if err := w.Start(ctx); err != nil {
				log.Error(err, "Certificate watcher stopped")
			}
		}()
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.Host, strconv.Itoa(o.Port)))
	if err != nil {
		return err
	}
	maxConns := cmp.Or(s.opts.MaxConnsPerSource, DefaultMaxConnsPerSource)
	if maxConns > 0 {
		ln = &sourceLimitListener{Listener: ln, open: newSources(maxConns)}
	}
	readTimeout := cmp.Or(s.opts.ReadTimeout, DefaultReadTimeout)
	srv := &http.Server{
		Handler: s.handler(),
		// Not ctx itself: once it ends, the server still serves its
		// shutdown delay and finishes the calls in flight, whose TLS
		// handshakes and handlers (access reviews, reads) a cancelled
		// context would fail.
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		MaxHeaderBytes:    1 << 20,
		ReadHeaderTimeout: readTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.opts.Drain.Wait(shutdown)
		if err := srv.Shutdown(shutdown); err != nil {
			log.Error(err, "Shutting down the webhook server")
		}
	}()
	log.Info("Serving webhooks", "address", ln.Addr().String(), "readTimeout", readTimeout, "maxConnsPerSource", maxConns)
	s.started.Store(true)
	if err := srv.Serve(tls.NewListener(ln, cfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-done
	return nil
}

// handler is the mux, behind the drain when there is one.
func (s *defendedServer) handler() http.Handler {
	if s.opts.Drain == nil {
		return s.base.WebhookMux()
	}
	return s.opts.Drain.Handler(s.base.WebhookMux())
}

// StartedChecker is healthy once the server serves: it makes a TLS
// connection to it, as controller-runtime's does.
func (s *defendedServer) StartedChecker() healthz.Checker {
	o := s.options()
	return func(*http.Request) error {
		if o.Port < 0 {
			return nil
		}
		if !s.started.Load() {
			return errors.New("webhook server has not been started yet")
		}
		d := &net.Dialer{Timeout: 10 * time.Second}
		host := cmp.Or(o.Host, "127.0.0.1")
		conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort(host, strconv.Itoa(o.Port)),
			&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only whether it answers
		if err != nil {
			return fmt.Errorf("webhook server is not reachable: %w", err)
		}
		return conn.Close()
	}
}

// NeedLeaderElection: every replica serves webhooks.
func (s *defendedServer) NeedLeaderElection() bool { return false }

// sourceLimitListener closes at once a connection from an address that
// already holds as many open ones as open allows.
type sourceLimitListener struct {
	net.Listener
	open *sources
}

// Accept returns the next connection its source may open.
func (l *sourceLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		source := hostOf(c.RemoteAddr().String())
		if !l.open.take(source) {
			Rejected.WithLabelValues(PathConnection, ReasonTooManyConnections).Inc()
			_ = c.Close()
			continue
		}
		return &countedConn{Conn: c, release: func() { l.open.give(source) }}, nil
	}
}

// countedConn gives its source's place back once, when closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close closes the connection and gives its place back.
func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
