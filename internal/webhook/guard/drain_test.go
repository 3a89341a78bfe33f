// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package guard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/example/platform-operator/internal/testutil"
)

func TestServer_ServesItsShutdownDelayOutOnceTheDrainBegins(t *testing.T) {
	const delay = 600 * time.Millisecond
	drain := &Drain{Delay: delay}
	srv, addr := startServer(t, drain)
	ready := drain.Checker()
	if err := ready(nil); err != nil {
		t.Fatalf("ready before the drain: %v", err)
	}
	if resp := postNew(t, addr); resp.Close {
		t.Error("an answer before the drain closes its connection")
	}

	// As the manager does: SIGTERM begins the drain, and the webhook
	// server's own context ends later, once the controllers have stopped.
	drain.Begin()
	began := time.Now()
	srv.cancel()
	if err := ready(nil); err == nil {
		t.Error("still ready once the drain began")
	}
	// A connection the Service sent a moment before it saw the replica
	// not ready is still served, and told to close.
	if resp := postNew(t, addr); !resp.Close {
		t.Error("an answer during the drain keeps its connection open")
	}
	select {
	case err := <-srv.done:
		t.Fatalf("the server stopped %s into a drain of %s (%v)", time.Since(began), delay, err)
	case <-time.After(delay / 2):
	}
	select {
	case err := <-srv.done:
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took < delay {
			t.Errorf("the server stopped after %s, before its delay of %s", took, delay)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop after its drain")
	}
}

func TestServer_StopsAtOnceWhenItStopsWithoutADrain(t *testing.T) {
	srv, _ := startServer(t, &Drain{Delay: time.Hour})
	stopped := time.Now()
	srv.cancel()
	select {
	case err := <-srv.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the server waited for a drain that never began (%s)", time.Since(stopped))
	}
}

// running is a server started by startServer.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

// startServer starts NewServer with drain on a free port of the loopback
// with a certificate of its own, and a webhook path that answers 200; it
// returns once the server serves, and its address.
func startServer(t *testing.T, drain *Drain) (*running, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	ca, err := testutil.NewCA("drain-test")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue("127.0.0.1", x509.ExtKeyUsageServerAuth, net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerOptions{
		Webhook: webhook.Options{Host: "127.0.0.1", Port: port, TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
		}}},
		Drain: drain,
	})
	s.Register(validatePath, ok)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Start(ctx) }()
	t.Cleanup(func() { cancel(); drain.Begin() })
	started := s.StartedChecker()
	deadline := time.Now().Add(10 * time.Second)
	for started(nil) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start: %v", started(nil))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// postNew sends an admission request on a new connection and returns the
// answer, which must be 200.
func postNew(t *testing.T, addr string) *http.Response {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a test's own certificate
	}}
	defer c.CloseIdleConnections()
	resp, err := c.Post("https://"+addr+validatePath, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("answered %s", resp.Status)
	}
	return resp
}
