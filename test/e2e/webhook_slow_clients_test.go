//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/example/platform-operator/internal/webhook/guard"
	"github.com/example/platform-operator/test/harness"
)

// slowClientsTest holds the webhook server's connections open, which would
// stall the shared operator's admission for every other test: it runs on a
// cluster and an operator of its own.
const slowClientsTest = "TestWebhook_SlowClientsHoldingConnectionsStallNoAdminsWrite"

func init() { ownClusterOptions[slowClientsTest] = harness.ClusterOptions{} }

// slowClients is how many connections the attack holds, from
// slowClientSources addresses, and slowClientDeclared the body each of
// them announces and never sends.
const (
	slowClients        = 200
	slowClientSources  = 4
	slowClientDeclared = 7_000_000
)

// TestWebhook_SlowClientsHoldingConnectionsStallNoAdminsWrite is the attack
// of pods holding the webhook server's connections (the NetworkPolicy
// admits the webhook port from anywhere by default): 200 TLS connections,
// each sending the headers of an admission or conversion request that
// announces a 7 MB body, then one byte of it, then nothing. Meanwhile a
// cluster admin's apply of each of the three kinds must go through the
// webhooks (they fail closed), and a v1alpha1 read through conversion,
// within 2 s, as they do without them. Before the server read a body
// before taking a slot and capped connections per source, the apply
// failed with "context deadline exceeded".
func TestWebhook_SlowClientsHoldingConnectionsStallNoAdminsWrite(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	own, op, ns := ownOperator(t)
	replica := op.Live()[0]

	manifests := func(suffix string) map[string][]byte {
		return map[string][]byte{
			"ScheduleTask": fmt.Appendf(nil, `apiVersion: platform.example.com/v1
kind: ScheduleTask
metadata: {name: task-%[2]s, namespace: %[1]s}
spec:
  schedule: "0 3 * * *"
  image: busybox:1.36
  command: ["sh", "-c", "true"]
`, ns, suffix),
			"AppDeployment": fmt.Appendf(nil, `apiVersion: platform.example.com/v1
kind: AppDeployment
metadata: {name: app-%[2]s, namespace: %[1]s}
spec:
  image: registry.example.com/shop:v1.0.0
  replicas: 1
`, ns, suffix),
			"TaskRun": fmt.Appendf(nil, `apiVersion: platform.example.com/v1
kind: TaskRun
metadata: {name: run-%[2]s, namespace: %[1]s}
spec:
  scheduleTaskName: task-%[2]s
`, ns, suffix),
		}
	}
	apply := func(suffix string) map[string]time.Duration {
		took := map[string]time.Duration{}
		for _, kind := range []string{"ScheduleTask", "AppDeployment", "TaskRun"} {
			start := time.Now()
			g.Expect(own.Kubectl(ctx, manifests(suffix)[kind], "apply", "-f", "-")).To(Succeed(), "apply of a %s", kind)
			took[kind] = time.Since(start)
		}
		return took
	}
	t.Logf("without the attack: %v", apply("before"))

	// The attackers are pods: their addresses are not the API server's.
	// Here the API server reaches the replica from 127.0.0.1 (through the
	// harness's forwarder), so the attack comes from four other addresses,
	// 50 connections from each: under the per-source cap, so the server
	// must hold them all and still serve. Half the requests go to
	// /convert, which every v1alpha1 read needs.
	addr := fmt.Sprintf("127.0.0.1:%d", replica.WebhookPort)
	held := make([]net.Conn, 0, slowClients)
	t.Cleanup(func() {
		for _, c := range held {
			_ = c.Close()
		}
	})
	paths := []string{"/validate-platform-example-com-v1-scheduletask", "/convert"}
	for i := range slowClients {
		source := fmt.Sprintf("127.0.0.%d", 2+i%slowClientSources)
		c, err := holdSlowRequest(addr, source, paths[i%len(paths)])
		g.Expect(err).NotTo(HaveOccurred(), "connection %d from %s", i, source)
		held = append(held, c)
	}
	t.Logf("%d connections opened and held from %d addresses, each with a request whose body never comes",
		len(held), slowClientSources)

	took := apply("during")
	start := time.Now()
	g.Expect(own.Kubectl(ctx, nil, "get", "-n", ns, "scheduletasks.v1alpha1.platform.example.com", "task-during")).
		To(Succeed(), "a v1alpha1 read (through /convert)")
	took["v1alpha1 read"] = time.Since(start)
	t.Logf("during the attack: %v", took)
	for what, d := range took {
		g.Expect(d).To(BeNumerically("<=", 2*time.Second),
			"an admin's %s took %s while slow clients held the webhook", what, d)
	}

	// One address gets no more than its cap of connections: the rest are
	// closed at once. (A request whose body never comes is not how to hold
	// them: beyond 64 bodies at once from one address the server answers
	// 429 and closes the connection.) The attacker only connects, sending
	// nothing: a connection the server keeps waits for its TLS handshake
	// for the read timeout, so until then one the server closed is told
	// apart from one it holds by whether a read ends before the deadline.
	// (Completing 1,044 handshakes instead took past the read timeout on a
	// busy machine, and the server had rightly closed the first ones.)
	opened := heldFrom(t, addr, "127.0.0.9", guard.DefaultMaxConnsPerSource+20)
	t.Logf("one address holds %d of %d connections", opened, guard.DefaultMaxConnsPerSource+20)
	g.Expect(opened).To(Equal(guard.DefaultMaxConnsPerSource), "connections held open from one address")
}

// heldFrom opens n TCP connections to addr from the address source and
// says how many of them the server still holds just before its read
// timeout could close one it accepted: a read that ends earlier (the
// server closed it) counts against it, one that reaches the deadline for.
func heldFrom(t *testing.T, addr, source string, n int) int {
	t.Helper()
	start := time.Now()
	deadline := start.Add(guard.DefaultReadTimeout - time.Second)
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	for range n {
		dialer := &net.Dialer{Deadline: deadline, LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
		c, err := dialer.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connecting from %s: %v", source, err)
		}
		conns = append(conns, c)
	}
	t.Logf("%d connections made from %s in %s", n, source, time.Since(start).Round(time.Millisecond))
	held := make(chan bool, n)
	for _, c := range conns {
		go func() {
			_ = c.SetReadDeadline(deadline)
			_, err := c.Read(make([]byte, 1))
			var ne net.Error
			held <- errors.As(err, &ne) && ne.Timeout()
		}()
	}
	count := 0
	for range n {
		if <-held {
			count++
		}
	}
	return count
}

// holdSlowRequest opens a TLS connection to addr from the address source
// and sends the headers of a POST to path announcing a slowClientDeclared
// body, and one byte of it.
func holdSlowRequest(addr, source, path string) (net.Conn, error) {
	dialer := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	c, err := tls.DialWithDialer(dialer, "tcp", addr,
		&tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}) //nolint:gosec // the attacker's client
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n{", path, addr, slowClientDeclared); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}
