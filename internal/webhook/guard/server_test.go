// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package guard

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
)

func TestServer_ASlowBodyHoldsNoSlotAndALargeOneGets413(t *testing.T) {
	started, release := make(chan struct{}, 4), make(chan struct{})
	srv := httptest.NewUnstartedServer(guarded(Options{MaxInFlight: 1, MaxAdmissionBody: 1024},
		map[string]http.Handler{validatePath: blocking(started, release), mutatePath: ok}))
	srv.Config.ReadTimeout = 2 * time.Second
	srv.Start()
	defer srv.Close()
	defer close(release) // before Close, which waits for the handlers

	// A client announces a body and never sends it, on the path whose one
	// slot the request below needs.
	slow, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = slow.Close() }()
	fmt.Fprintf(slow, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{", mutatePath)
	time.Sleep(200 * time.Millisecond) // the server has its headers

	// The one slot is free: a whole request takes it at once.
	go func() {
		if resp, err := http.Post(srv.URL+validatePath, "application/json", strings.NewReader("{}")); err == nil {
			_ = resp.Body.Close()
		}
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("a whole request waited behind one whose body never came")
	}

	// Past the read deadline the slow request is answered 400 and counted.
	before := promtestutil.ToFloat64(Rejected.WithLabelValues(PathAdmission, ReasonBodyIncomplete))
	_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	reply, _ := io.ReadAll(slow)
	if !strings.HasPrefix(string(reply), "HTTP/1.1 400") {
		t.Errorf("the slow request got %q, want 400", firstLine(reply))
	}
	if got := promtestutil.ToFloat64(Rejected.WithLabelValues(PathAdmission, ReasonBodyIncomplete)) - before; got != 1 {
		t.Errorf("incomplete bodies counted: %v, want 1", got)
	}

	// A body over the cap is refused, saying the cap.
	resp, err := http.Post(srv.URL+mutatePath, "application/json", strings.NewReader(strings.Repeat("x", 2048)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "1024 bytes") {
		t.Errorf("a 2048-byte body: got %d %q, want 413 naming the cap of 1024 bytes", resp.StatusCode, body)
	}
}

func TestSourceLimitListener_ClosesASourcesConnectionsBeyondItsCapAndGivesPlacesBack(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &sourceLimitListener{Listener: inner, open: newSources(2)}
	defer func() { _ = ln.Close() }()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// closed reports whether the server closed c (reading gets EOF).
	closed := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		return err == io.EOF
	}
	before := promtestutil.ToFloat64(Rejected.WithLabelValues(PathConnection, ReasonTooManyConnections))

	a1, a2, a3 := dial("127.0.0.2"), dial("127.0.0.2"), dial("127.0.0.2")
	b1 := dial("127.0.0.3")
	if closed(a1) || closed(a2) || closed(b1) {
		t.Fatal("a connection within its source's cap was closed")
	}
	if !closed(a3) {
		t.Error("the third connection of a source with a cap of two stayed open")
	}
	if got := promtestutil.ToFloat64(Rejected.WithLabelValues(PathConnection, ReasonTooManyConnections)) - before; got != 1 {
		t.Errorf("connections refused, counted: %v, want 1", got)
	}
	// The server closing one of the source's gives its place back.
	(<-accepted).(*countedConn).Close() //nolint:errcheck // closing is the test
	a4 := dial("127.0.0.2")
	if closed(a4) {
		t.Error("a connection after one of its source's closed was refused")
	}
}

func TestServer_ASourceSendingTooManyBodiesAtOnceGets429OthersAreServed(t *testing.T) {
	srv := httptest.NewServer(guarded(Options{MaxBodyReadsPerSource: 2},
		map[string]http.Handler{validatePath: ok, convertPath: ok}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	// post sends a whole request from the address from, on a connection of
	// its own, and returns the status.
	post := func(from, path string) int {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
		c := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
		resp, err := c.Post("http://"+addr+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	before := promtestutil.ToFloat64(Rejected.WithLabelValues(PathAdmission, ReasonTooManyBodies))

	// Two bodies from 127.0.0.2 that never come, one on each kind of path:
	// the bound is the source's, on every path together.
	slow := make([]net.Conn, 0, 2)
	defer func() { // before srv.Close, which waits for their handlers
		for _, c := range slow {
			_ = c.Close()
		}
	}()
	for _, path := range []string{validatePath, convertPath} {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		slow = append(slow, c)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{", path)
	}
	deadline := time.Now().Add(5 * time.Second)
	for post("127.0.0.2", validatePath) != http.StatusTooManyRequests {
		if time.Now().After(deadline) {
			t.Fatal("a third body from a source sending two at once, with a bound of two, was read")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := promtestutil.ToFloat64(Rejected.WithLabelValues(PathAdmission, ReasonTooManyBodies)) - before; got < 1 {
		t.Errorf("bodies refused, counted: %v, want at least 1", got)
	}
	// Another address is served meanwhile.
	if code := post("127.0.0.3", validatePath); code != http.StatusOK {
		t.Errorf("another address's request got %d, want 200", code)
	}
	// Once the slow bodies end, the source is served again.
	for _, c := range slow {
		_ = c.Close()
	}
	deadline = time.Now().Add(5 * time.Second)
	for post("127.0.0.2", validatePath) != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the source was not served again once its bodies ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// firstLine is the first line of an HTTP reply, for messages.
func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\r\n")
	return s
}

// TestIdleTimeout_OutlastsTheAPIServersIdleConnections: the API server's
// webhook client keeps idle connections for net/http's default transport's
// IdleConnTimeout (client-go's SetTransportDefaults); the server must keep
// them longer, or a call sent as it closes one fails with EOF.
func TestIdleTimeout_OutlastsTheAPIServersIdleConnections(t *testing.T) {
	client := http.DefaultTransport.(*http.Transport).IdleConnTimeout
	if idleTimeout <= client {
		t.Fatalf("the webhook server closes idle connections after %s, the API server's transport after %s", idleTimeout, client)
	}
}
