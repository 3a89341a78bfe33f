//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/example/platform-operator/test/harness"
)

// slowClientsTest holds the webhook server's connections open, which would
// stall the shared operator's admission for every other test: it runs on a
// cluster and an operator of its own.
const slowClientsTest = "TestWebhook_SlowClientsHoldingConnectionsStallNoAdminsWrite"

func init() { ownClusterOptions[slowClientsTest] = harness.ClusterOptions{} }

// slowClients is how many connections the attack holds, and
// slowClientDeclared the body each of them announces and never sends.
const (
	slowClients        = 200
	slowClientDeclared = 7_000_000
)

// TestWebhook_SlowClientsHoldingConnectionsStallNoAdminsWrite is the attack
// of a pod holding the webhook server's connections (the NetworkPolicy
// admits the webhook port from anywhere): 200 TLS connections, each
// sending the headers of an admission request that announces a 7 MB body,
// then one byte of it, then nothing. Meanwhile a cluster admin's apply of
// each of the three kinds must go through the webhooks (they fail closed)
// within 2 s, as it does without them. Before the server read a body
// before taking a slot and capped connections per source, the apply
// failed with "context deadline exceeded".
func TestWebhook_SlowClientsHoldingConnectionsStallNoAdminsWrite(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	own := ownCluster(t)
	op, err := harness.StartOperator(ctx, own, harness.OperatorOptions{Replicas: 1})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(op.Stop)
	ns := harness.Namespace(t, own)
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

	// The attacker is a pod: its address is not the API server's. Here
	// the API server reaches the replica from 127.0.0.1 (through the
	// harness's forwarder), so the attack comes from 127.0.0.2.
	addr := fmt.Sprintf("127.0.0.1:%d", replica.WebhookPort)
	dialer := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	held := make([]net.Conn, 0, slowClients)
	t.Cleanup(func() {
		for _, c := range held {
			_ = c.Close()
		}
	})
	refused := 0
	for range slowClients {
		c, err := tls.DialWithDialer(dialer, "tcp", addr,
			&tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}) //nolint:gosec // the attacker's client
		if err != nil {
			// A server that closes a source's connections beyond a cap
			// defends itself; the applies below say whether enough.
			refused++
			continue
		}
		held = append(held, c)
		if _, err := fmt.Fprintf(c, "POST /validate-platform-example-com-v1-scheduletask HTTP/1.1\r\nHost: %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n{", addr, slowClientDeclared); err != nil {
			refused++
		}
	}
	t.Logf("%d connections opened and held, each with a request whose body never comes; %d refused",
		len(held), refused)

	took := apply("during")
	t.Logf("during the attack: %v", took)
	for kind, d := range took {
		g.Expect(d).To(BeNumerically("<=", 2*time.Second),
			"an admin's apply of a %s took %s while slow clients held the webhook", kind, d)
	}
}
