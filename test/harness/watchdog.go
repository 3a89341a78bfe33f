// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// clusterComponents are the processes of a kwok cluster, by the names of
// their pid and log files.
var clusterComponents = []string{
	"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller",
}

// watchdogInterval is how often the watchdog looks at the components.
const watchdogInterval = 2 * time.Second

// watchdog says, at once and with the end of its log, when a component of a
// cluster exits that nobody stopped. Without it a dead controller-manager
// shows only as every later test timing out on pods, ServiceAccounts or Job
// pods that never come, and the cluster's logs are gone with the cluster.
type watchdog struct {
	dir  string // the cluster's directory: pids/ and logs/
	name string // the cluster's name, for the log

	mu      sync.Mutex
	stopped map[string]bool // components stopped on purpose (StopComponent)
	dead    []string        // components found dead, in the order found

	done chan struct{}
	wg   sync.WaitGroup

	// revive keeps two Revive calls from starting components at once.
	revive sync.Mutex
}

// startWatchdog starts watching the components of the cluster whose
// kubeconfig is kubeconfig.
func startWatchdog(name, kubeconfig string) *watchdog {
	w := &watchdog{
		dir:     filepath.Dir(kubeconfig),
		name:    name,
		stopped: map[string]bool{},
		done:    make(chan struct{}),
	}
	w.wg.Add(1)
	go w.run()
	return w
}

// run checks every component each interval until stop.
func (w *watchdog) run() {
	defer w.wg.Done()
	reported := map[string]int{} // component → pid already reported dead
	ticker := time.NewTicker(watchdogInterval)
	defer ticker.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-ticker.C:
		}
		for _, name := range clusterComponents {
			pid, err := componentPID(w.dir, name)
			if err != nil || reported[name] == pid || alive(pid) || w.expected(name) {
				continue
			}
			reported[name] = pid
			w.mu.Lock()
			w.dead = append(w.dead, name)
			w.mu.Unlock()
			Logf("cluster %s: %s (pid %d) has exited and nobody stopped it; every test that needs it will now "+
				"time out. The end of its log:\n%s", w.name, name, pid, w.logTail(name, 30))
		}
	}
}

// alive reports whether a process runs (signal 0 checks without sending).
// A zombie counts as alive; kwokctl's processes are not this process's
// children, so none stays a zombie here.
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// expected reports whether a component was stopped on purpose.
func (w *watchdog) expected(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped[name]
}

// stopping and started bracket a deliberate stop of a component.
func (w *watchdog) stopping(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped[name] = true
}

func (w *watchdog) started() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = map[string]bool{}
}

// DeadComponents returns the components of the cluster that exited since Up
// without being stopped by StopComponent, in the order they were found.
func (c *Cluster) DeadComponents() []string {
	if c.watch == nil {
		return nil
	}
	c.watch.mu.Lock()
	defer c.watch.mu.Unlock()
	return append([]string(nil), c.watch.dead...)
}

// stop ends the watching; the cluster is about to be deleted.
func (w *watchdog) stop() {
	close(w.done)
	w.wg.Wait()
}

// logTail returns the last n lines of a component's log.
func (w *watchdog) logTail(name string, n int) string {
	data, err := os.ReadFile(filepath.Join(w.dir, "logs", name+".log"))
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// deadNow returns the components that do not run now, when none was
// stopped on purpose: kwokctl's start would start that one too.
func (w *watchdog) deadNow() []string {
	w.mu.Lock()
	stopping := len(w.stopped) > 0
	w.mu.Unlock()
	if stopping {
		return nil
	}
	var dead []string
	for _, name := range clusterComponents {
		if pid, err := componentPID(w.dir, name); err == nil && !alive(pid) {
			dead = append(dead, name)
		}
	}
	return dead
}

// Revive starts again the components of the cluster that exited though
// nobody stopped them (the watchdog has logged the end of their logs), and
// returns them; nothing while a component is stopped on purpose. A
// controller-manager that died under the load of a whole layer would
// otherwise fail every later test of its cluster.
func (c *Cluster) Revive(ctx context.Context) ([]string, error) {
	if c.watch == nil {
		return nil, nil
	}
	c.watch.revive.Lock()
	defer c.watch.revive.Unlock()
	dead := c.watch.deadNow()
	if len(dead) == 0 {
		return nil, nil
	}
	Logf("cluster %s: starting %v again, which exited unasked", c.Name, dead)
	return dead, c.StartComponents(ctx)
}
