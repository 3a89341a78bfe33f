// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ServeNoOpWebhooks sends every webhook connection, from now until the
// returned function is called, to a server that allows every admission
// request at once (package noop), in place of the replicas: a process of
// its own, as the replicas are and as any webhook server is (one in the
// test's process would answer from a process already awake, which a
// webhook server never is), the same TLS certificate and
// protocol (HTTP/1.1, as the replicas serve by default and as the API
// server calls a webhook Service), the same paths and the same way through
// the forwarder, and no work beyond a valid answer (a conversion changes
// only each object's apiVersion). It is the floor the operator's admission is
// measured against. The connections the API server holds open to the side
// left are closed at each switch, so that its calls go where the switch
// says; call it between writes, not during them.
func (d *Operator) ServeNoOpWebhooks() (restore func(), err error) {
	port, err := d.startNoOp()
	if err != nil {
		return nil, err
	}
	d.noopPort.Store(int32(port))
	d.closePiped(false)
	return func() {
		d.noopPort.Store(0)
		d.closePiped(true)
	}, nil
}

// startNoOp starts the no-op server's process the first time (Stop ends
// it) and returns its port.
func (d *Operator) startNoOp() (int, error) {
	// Built before taking d.mu: the forwarder takes it for every
	// connection (Live), and a first build takes seconds. build keeps it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := build(ctx, d.cluster.Repo, "./test/harness/noopwebhook", "no-op webhook server")
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.noop != nil {
		return d.noop.port, nil
	}
	cmd := exec.Command(bin, "--cert-dir="+d.certDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return 0, fmt.Errorf("the no-op webhook server did not tell its port (%q): %w", line, errors.Join(err, perr))
	}
	d.noop = &noOpServer{cmd: cmd, port: port}
	return port, nil
}

// noOpServer is the no-op webhook server's process.
type noOpServer struct {
	cmd  *exec.Cmd
	port int
}

// stopNoOp ends the no-op server's process, if it was started.
func (d *Operator) stopNoOp() {
	d.mu.Lock()
	n := d.noop
	d.noop = nil
	d.mu.Unlock()
	if n != nil {
		_ = n.cmd.Process.Kill()
		_ = n.cmd.Wait()
	}
}
