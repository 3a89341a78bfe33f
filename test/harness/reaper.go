// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

const (
	// reaperEnv, when set, makes the program act as the reaper of the
	// cluster it names instead of doing its work; see ReapIfAsked.
	reaperEnv = "PLATFORM_HARNESS_REAP_CLUSTER"
	// reaperDone is sent to the reaper once the cluster has been deleted.
	reaperDone = "done"
)

// ReapIfAsked must be the first call of a TestMain or main that uses
// StartCluster: in the copy of the program that StartCluster starts as the
// cluster's reaper, it waits for the parent to exit, deletes the cluster if
// the parent did not, and exits.
func ReapIfAsked() {
	name := os.Getenv(reaperEnv)
	if name == "" {
		return
	}
	msg, _ := io.ReadAll(os.Stdin)
	if string(msg) == reaperDone {
		os.Exit(0)
	}
	Logf("the process that made cluster %s exited without deleting it; deleting it", name)
	c, err := NewCluster(name)
	if err == nil {
		err = c.Down()
	}
	if err != nil {
		Logf("deleting cluster %s: %v", name, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// StartCluster creates the kwok cluster called name and returns it with the
// function that deletes it. The cluster is deleted whatever happens to the
// calling process: by the returned function, on SIGINT or SIGTERM, and by a
// reaper process when this one dies without deleting it (a panic, a test
// timeout or SIGKILL skip deferred calls).
func StartCluster(ctx context.Context, name string, opts ClusterOptions) (*Cluster, func(), error) {
	// The harness's own clients and informers log through controller-runtime;
	// their errors are worth seeing, their chatter is not.
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	c, err := NewCluster(name)
	if err != nil {
		return nil, nil, err
	}
	c.Options = opts
	reaper, err := startReaper(name)
	if err != nil {
		return nil, nil, err
	}
	Logf("if this process dies before deleting cluster %s, a reaper process will; its log: %s", name, reaper.logPath)

	setupCtx, cancelSetup := context.WithCancel(ctx)
	setupDone := make(chan struct{})
	var once sync.Once
	teardown := func() {
		once.Do(func() {
			cancelSetup()
			<-setupDone
			start := time.Now()
			if err := c.Down(); err != nil {
				// Leave the reaper waiting: it retries once this process exits.
				Logf("deleting cluster %s: %v", name, err)
				return
			}
			Logf("deleted cluster %s in %s", name, time.Since(start).Round(time.Millisecond))
			reaper.release()
		})
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		Logf("received %v, deleting cluster %s", sig, name)
		teardown()
		os.Exit(1)
	}()

	err = c.Up(setupCtx)
	close(setupDone)
	if err != nil {
		teardown()
		return nil, nil, err
	}
	return c, teardown, nil
}

// reaper is the handle on the process started by startReaper.
type reaper struct {
	w       *os.File
	logPath string
}

// startReaper starts a copy of this program that deletes the cluster called
// name as soon as this process exits, unless release was called first. It is
// told about the exit by a pipe: the kernel closes this end when the process
// dies, however it dies.
func startReaper(name string) (*reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()

	// The reaper must not hold this process's stdout or stderr open: `go test`
	// waits for them to close before it returns.
	logFile, err := os.CreateTemp("", name+"-reaper-*.log")
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	defer func() { _ = logFile.Close() }()

	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), reaperEnv+"="+name)
	cmd.Stdin = r
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// A session of its own, so that the Ctrl-C that ends the tests does not
	// also end the reaper.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return nil, err
	}
	_ = cmd.Process.Release()
	return &reaper{w: w, logPath: logFile.Name()}, nil
}

// release tells the reaper that the cluster is gone and that it can exit.
func (r *reaper) release() {
	_, _ = io.WriteString(r.w, reaperDone)
	_ = r.w.Close()
	// The log is only written when the reaper has a cluster to delete.
	_ = os.Remove(r.logPath)
}
