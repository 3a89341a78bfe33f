// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/testutil/localwebhook"
	"github.com/example/platform-operator/internal/yamldoc"
)

const (
	// OperatorNamespace and OperatorServiceAccount are where config/default
	// installs the manager and whom it runs as.
	OperatorNamespace      = "platform-operator-system"
	OperatorServiceAccount = "platform-operator-controller-manager"
	// LeaseName is the replicas' leader-election Lease in OperatorNamespace
	// (the manager's LeaderElectionID).
	LeaseName = "platform-operator.platform.example.com"
	// OperatorUser is the user the manager processes authenticate as: its
	// own ServiceAccount, by impersonation, so they hold exactly the
	// generated RBAC.
	OperatorUser = "system:serviceaccount:" + OperatorNamespace + ":" + OperatorServiceAccount
)

// OperatorOptions say how to run the operator.
type OperatorOptions struct {
	// Replicas is how many manager processes to start at once.
	Replicas int
	// Args are extra manager flags; they come after the harness's own, so
	// they win (e.g. --leader-elect=false).
	Args []string
	// ChartValues, when not nil, take the manager's RBAC from the Helm
	// chart rendered with these --set values (e.g. watchNamespaces={a,b})
	// instead of from config/default. The chart's roles have the names
	// config/default's have, so this suits a cluster of its own.
	ChartValues []string
	// Env are extra NAME=value variables of the manager processes (e.g.
	// OTLPReceiver.Env), after the harness's own.
	Env []string
	// Restart starts a replica again when it exits without the harness
	// stopping it, as the kubelet restarts a pod's container: a manager
	// exits by design when it cannot renew its Lease in time, which a
	// machine starved by a whole test layer at once can cause. Every such
	// exit is still logged with the end of the replica's log, and Exits
	// lists them, so that a crash is never hidden.
	Restart bool
	// Source, when set, is a source tree of the project (an earlier
	// version, for an upgrade test) to build the manager from instead of
	// the cluster's repository. The RBAC, webhooks and CRDs stay the
	// repository's.
	Source string
	// ProbePeriod is how often the balancer asks each replica's /readyz;
	// DefaultProbePeriod when zero. A benchmark that stops no replica
	// probes as a kubelet does, every second at the most often: each
	// probe of a webhook server is a TLS handshake, work that a 2-core
	// machine would otherwise count against whatever it measures.
	ProbePeriod time.Duration
}

// Operator is what the harness runs in place of the manager's Deployment:
// manager processes built from ./cmd, as the operator's ServiceAccount,
// behind one webhook address that balances over the live, ready replicas
// as their Service would (see forward).
type Operator struct {
	// WorkDir holds the manager binary, the replicas' logs and kubeconfig.
	WorkDir string

	cluster   *Cluster
	args, env []string
	restart   bool
	// probePeriod is OperatorOptions.ProbePeriod, defaulted.
	probePeriod time.Duration
	// stopping is set by Stop, so that no replica is restarted then.
	stopping atomic.Bool
	// exits are the replicas' exits the harness did not cause.
	exits              []Exit
	binary, kubeconfig string
	certDir            string
	stopForwarding     context.CancelFunc
	mu                 sync.Mutex
	replicas           []*Manager
	next               int
	// droppedLive counts the webhook connections closed because a replica
	// that had been ready was not, or could not be reached; lastDropLog is
	// when that was last logged.
	droppedLive int
	lastDropLog time.Time
	// turn takes the serving replicas in turn (see pick).
	turn atomic.Uint64
	// noopPort, when not 0, is where every webhook connection goes in
	// place of the replicas (see ServeNoOpWebhooks); noop is that
	// server's process once started (mu).
	noopPort atomic.Int32
	noop     *noOpServer
	// piped are the webhook connections the forwarder holds open, each
	// with whether it goes to the no-op server, so that a switch between
	// the replicas and the no-op server closes the side left: the API
	// server keeps its connections to a webhook open, and would go on
	// calling the side it had dialled.
	pipedMu sync.Mutex
	piped   map[net.Conn]bool
	// accepted counts the webhook connections the forwarder took, to the
	// replicas and to the no-op server (see WebhookConnections).
	accepted, acceptedNoOp atomic.Int64
	// answers are the webhook servers' answer times, by name (pipedMu).
	answers map[string]*answerTimes
}

// NoOpName names the no-op webhook server in WebhookAnswers.
const NoOpName = "no-op"

// WebhookConnections are the connections the API server has opened to the
// webhooks so far, to the replicas and to the no-op server: each is a TLS
// handshake on both ends, which a webhook's answers taking longer can
// make more of (the API server keeps only so many idle connections to a
// host, and opens another for a call beyond them).
func (d *Operator) WebhookConnections() (replicas, noop int64) {
	return d.accepted.Load(), d.acceptedNoOp.Load()
}

// Manager is one replica: a manager process.
type Manager struct {
	// Name tells replicas apart in logs ("manager-3").
	Name string
	// LogPath is the file its stdout and stderr go to.
	LogPath string
	// ProbePort, MetricsPort and WebhookPort are its ports on 127.0.0.1.
	ProbePort, MetricsPort, WebhookPort int
	// Started is when the process was started.
	Started time.Time

	cmd    *exec.Cmd
	args   []string
	exited chan struct{}
	// signalled is set before the harness stops the process, so that an
	// exit of its own (a lost leader election, a crash) is told apart.
	signalled atomic.Bool
	// wasReady is set once WaitReady in StartReplica has passed.
	wasReady atomic.Bool
	// serving is the balancer's view of the replica: alive, and ready as
	// its last probe said (see probe); notReady is that probe's answer
	// when it was not.
	serving  atomic.Bool
	notReady atomic.Pointer[string]
	// readyAt is when StartReplica saw it ready (Unix nanoseconds): a
	// probe begun before says nothing newer.
	readyAt atomic.Int64
	// toldUnanswered is set once its log's end has been shown for a
	// connection it closed with a request unanswered (Operator.mu).
	toldUnanswered bool
}

// builds holds the manager binaries this process built, by source folder:
// every operator of a test run starts the same build, so it is linked once
// (an 80 MB link is seconds of both cores, taken from the running tests)
// rather than once per operator. They live in the temporary folder, which
// the test layer removes (hack/test-layer.sh).
var builds struct {
	sync.Mutex
	dir  string
	bins map[string]string
}

// buildManager returns the manager built from the module in src, building
// it the first time.
func buildManager(ctx context.Context, src string) (string, error) {
	return build(ctx, src, "./cmd", "manager")
}

// build returns the command pkg of the module in src, building it the
// first time; what names it in the binary's name and the log.
func build(ctx context.Context, src, pkg, what string) (string, error) {
	builds.Lock()
	defer builds.Unlock()
	key := src + " " + pkg
	if bin, ok := builds.bins[key]; ok {
		return bin, nil
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "manager-builds-")
		if err != nil {
			return "", err
		}
		builds.dir, builds.bins = dir, map[string]string{}
	}
	bin := filepath.Join(builds.dir, fmt.Sprintf("%s-%d", what, len(builds.bins)))
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the %s: %w\n%s", what, err, out)
	}
	Logf("built the %s from %s in %s; every operator of this run starts it",
		what, src, time.Since(start).Round(time.Millisecond))
	builds.bins[key] = bin
	return bin, nil
}

// StartOperator builds the manager (once per source folder and process), installs what a real install would
// (namespace, ServiceAccount and RBAC from config/default; webhook
// configurations and CRD conversion pointing at a local forwarder, with a
// certificate for it) and starts the replicas.
func StartOperator(ctx context.Context, c *Cluster, o OperatorOptions) (*Operator, error) {
	work, err := os.MkdirTemp("", "operator-")
	if err != nil {
		return nil, err
	}
	d := &Operator{WorkDir: work, cluster: c, args: o.Args, env: o.Env, restart: o.Restart,
		probePeriod: cmp.Or(o.ProbePeriod, DefaultProbePeriod)}
	if o.Source == "" {
		// Several of the balancer's probe periods (see forward), and
		// short, since every replica stopped waits it out; an earlier
		// version's manager may not know the flag.
		delay := max(ShutdownDelay, 10*d.probePeriod)
		d.args = append([]string{"--shutdown-delay=" + delay.String()}, o.Args...)
	}
	if d.binary, err = buildManager(ctx, cmp.Or(o.Source, c.Repo)); err != nil {
		return nil, err
	}
	if err := installOperatorRBAC(ctx, c, o.ChartValues); err != nil {
		return nil, err
	}
	if d.kubeconfig, err = impersonatingKubeconfig(c.Kubeconfig, work); err != nil {
		return nil, err
	}
	front, err := net.Listen("tcp", localwebhook.Host+":0")
	if err != nil {
		return nil, err
	}
	fwdCtx, cancel := context.WithCancel(context.Background())
	d.stopForwarding = cancel
	go d.forward(fwdCtx, front)
	if d.certDir, err = installWebhooks(ctx, c, front.Addr().(*net.TCPAddr).Port); err != nil {
		d.Stop()
		return nil, err
	}
	for range o.Replicas {
		if _, err := d.StartReplica(ctx); err != nil {
			d.Stop()
			return nil, err
		}
	}
	return d, nil
}

// StartReplica starts one more manager process and waits until it is ready.
// args are extra flags of this replica, after the operator's own. A replica
// that could not listen on a port FreePort picked, taken meanwhile by
// another process of the machine (kwokctl picks its components' ports the
// same way), is started once more on new ports.
func (d *Operator) StartReplica(ctx context.Context, args ...string) (*Manager, error) {
	p, err := d.startReplica(ctx, args...)
	// An operator that restarts its replicas restarts this one anyway.
	if err != nil && p != nil && !d.restart && strings.Contains(tail(p.LogPath), "address already in use") {
		Logf("%s found a port it was given taken; starting a replica on new ports", p.Name)
		p, err = d.startReplica(ctx, args...)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// startReplica is StartReplica's one attempt; it returns the replica that
// did not become ready with the error.
func (d *Operator) startReplica(ctx context.Context, args ...string) (*Manager, error) {
	p := &Manager{exited: make(chan struct{}), args: args}
	var err error
	for _, port := range []*int{&p.ProbePort, &p.MetricsPort, &p.WebhookPort} {
		if *port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	d.next++
	p.Name = fmt.Sprintf("manager-%d", d.next)
	d.mu.Unlock()
	p.LogPath = filepath.Join(d.WorkDir, p.Name+".log")
	logFile, err := os.Create(p.LogPath)
	if err != nil {
		return nil, err
	}
	flags := []string{
		"--kubeconfig=" + d.kubeconfig,
		"--leader-elect=true",
		"--leader-election-namespace=" + OperatorNamespace,
		fmt.Sprintf("--health-probe-bind-address=%s:%d", localwebhook.Host, p.ProbePort),
		fmt.Sprintf("--metrics-bind-address=%s:%d", localwebhook.Host, p.MetricsPort),
		fmt.Sprintf("--webhook-port=%d", p.WebhookPort),
		"--webhook-cert-path=" + d.certDir,
		"--cert-rotation=false",
	}
	flags = append(append(flags, d.args...), args...)
	p.cmd = exec.Command(d.binary, flags...)
	// argv[0] becomes the first word of the replica's user agent and so the
	// field manager of its writes, which is how Leader tells the replicas
	// apart on the Lease.
	p.cmd.Args[0] = p.Name
	p.cmd.Env = append(append(os.Environ(), "POD_NAMESPACE="+OperatorNamespace), d.env...)
	// A replica dies with the process that started it, even one killed
	// without a chance to call Stop, as its pod would with its node.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.Started = time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		err := p.cmd.Wait()
		// A dead process leaves the balancer at once, as a pod whose
		// container the kubelet saw exit leaves its Service.
		p.serving.Store(false)
		logFile.Close()
		close(p.exited)
		if !p.signalled.Load() {
			d.exitedByItself(p, err)
		}
	}()
	go p.probe(d.probePeriod)
	d.mu.Lock()
	d.replicas = append(d.replicas, p)
	d.mu.Unlock()
	if d.stopping.Load() {
		// Stop has begun and may not have seen this replica.
		p.Kill(syscall.SIGTERM)
		return nil, fmt.Errorf("%s: the operator is stopping", p.Name)
	}

	if err := p.WaitReady(ctx, time.Minute); err != nil {
		return p, err
	}
	// The balancer's probe says so too within a period; the callers of
	// StartReplica write at once.
	p.readyAt.Store(time.Now().UnixNano())
	p.serving.Store(true)
	p.wasReady.Store(true)
	Logf("%s is ready after %s (log %s)", p.Name, time.Since(p.Started).Round(time.Millisecond), p.LogPath)
	return p, nil
}

// Exit is a replica's exit that the harness did not cause.
type Exit struct {
	// Replica is the replica's name.
	Replica string
	// Err is how the process ended.
	Err error
	// LogTail is the end of its log.
	LogTail string
}

// Panicked reports whether the replica died of a panic rather than by
// choice (a lost Lease, a failed start).
func (e Exit) Panicked() bool {
	return strings.Contains(e.LogTail, "panic:") || strings.Contains(e.LogTail, "fatal error:")
}

// exitedByItself records p's exit, logs it and, when the operator restarts
// its replicas, starts a replacement with the same flags.
func (d *Operator) exitedByItself(p *Manager, err error) {
	e := Exit{Replica: p.Name, Err: err, LogTail: tail(p.LogPath)}
	d.mu.Lock()
	d.exits = append(d.exits, e)
	d.mu.Unlock()
	Logf("%s exited and the harness did not stop it (%v); the end of its log %s:\n%s",
		p.Name, err, p.LogPath, e.LogTail)
	if !d.restart || d.stopping.Load() {
		return
	}
	// The kubelet waits 10 s before the first restart of a container; a
	// second is enough here and keeps the tests waiting less.
	time.Sleep(time.Second)
	if d.stopping.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if q, err := d.StartReplica(ctx, p.args...); err != nil {
		Logf("restarting %s: %v", p.Name, err)
	} else {
		Logf("%s restarted as %s", p.Name, q.Name)
	}
}

// Exits returns the replicas' exits that the harness did not cause.
func (d *Operator) Exits() []Exit {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Exit(nil), d.exits...)
}

// WaitReady polls the replica's /readyz until it passes, the process exits
// or timeout passes.
func (p *Manager) WaitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !p.Ready() {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready; its log: %s\n%s", p.Name, p.LogPath, tail(p.LogPath))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s; its log: %s\n%s", p.Name, timeout, p.LogPath, tail(p.LogPath))
		}
	}
	return nil
}

// Ready asks the replica's /readyz.
func (p *Manager) Ready() bool { return p.readiness() == nil }

// readiness asks the replica's /readyz and says why it is not ready: the
// request's error, or the status and the checks that failed.
func (p *Manager) readiness() error {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://%s:%d/readyz?verbose", localwebhook.Host, p.ProbePort))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var failed []string
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, strings.TrimSpace(line))
		}
	}
	return fmt.Errorf("/readyz answered %s: %s", resp.Status, strings.Join(failed, "; "))
}

// Alive reports whether the process still runs.
func (p *Manager) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// PID is the process's ID.
func (p *Manager) PID() int {
	return p.cmd.Process.Pid
}

// Kill sends sig to the replica and waits for it to exit.
func (p *Manager) Kill(sig syscall.Signal) {
	p.signalled.Store(true)
	_ = p.cmd.Process.Signal(sig)
	<-p.exited
}

// Live returns the replicas still running.
func (d *Operator) Live() []*Manager {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*Manager
	for _, p := range d.replicas {
		if p.Alive() {
			out = append(out, p)
		}
	}
	return out
}

// Leader returns the live replica that holds the leader-election Lease, as
// the API server has it, or nil when none does: the Lease is released, has
// expired, or names a replica that has died.
func (d *Operator) Leader(ctx context.Context) (*Manager, error) {
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: OperatorNamespace, Name: LeaseName}
	if err := d.cluster.Client.Get(ctx, key, lease); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	spec := lease.Spec
	if ptr.Deref(spec.HolderIdentity, "") == "" || spec.RenewTime == nil ||
		time.Since(spec.RenewTime.Time) > time.Duration(ptr.Deref(spec.LeaseDurationSeconds, 0))*time.Second {
		return nil, nil
	}
	// holderIdentity is the hostname and a random UUID, the same hostname
	// for every replica here; which replica it is shows in managedFields:
	// the one whose write set the holder owns the field.
	writer, err := holderWriter(lease)
	if err != nil {
		return nil, err
	}
	for _, p := range d.Live() {
		if p.Name == writer {
			return p, nil
		}
	}
	return nil, nil
}

// holderWriter returns the field manager that owns the Lease's
// spec.holderIdentity: the replica that last acquired it. The API server
// names a client's writes after the first word of its user agent, which
// client-go takes from argv[0], and StartReplica starts each replica with its
// name as argv[0].
func holderWriter(lease *coordinationv1.Lease) (string, error) {
	for _, mf := range lease.ManagedFields {
		if mf.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Spec map[string]json.RawMessage `json:"f:spec"`
		}
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			return "", fmt.Errorf("managedFields of Lease %s: %w", lease.Name, err)
		}
		if _, ok := fields.Spec["f:holderIdentity"]; ok {
			return mf.Manager, nil
		}
	}
	return "", nil
}

// ShutdownDelay is the replicas' --shutdown-delay, with the default probe
// period: how long one asked to stop keeps serving webhooks while not
// ready.
const ShutdownDelay = time.Second

// DefaultProbePeriod is how often the balancer asks each replica's
// /readyz, as a kubelet's readiness probe does (its periodSeconds, here far
// shorter than a pod's 10 s so that tests wait less); the replicas'
// shutdown delay (ShutdownDelay) is several of it.
const DefaultProbePeriod = 100 * time.Millisecond

// probe keeps p.serving to what p's /readyz says, every period, until the
// process exits.
func (p *Manager) probe(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		began := time.Now().UnixNano()
		err := p.readiness()
		if err != nil {
			why := err.Error()
			p.notReady.Store(&why)
		}
		select {
		case <-p.exited:
			return
		default:
			if err == nil || began > p.readyAt.Load() {
				p.serving.Store(err == nil)
			}
		}
		select {
		case <-p.exited:
			return
		case <-t.C:
		}
	}
}

// forward is the replicas' Service, which kwok has no kube-proxy to be:
// it passes each webhook connection to one replica that is alive and
// ready (as its last probe said, see probe), taking them in turn, and
// never retries: a connection the chosen replica does not take is closed,
// which the API server reports as EOF, as a connection sent to a pod that
// just died fails in a cluster. The balancer follows readiness as
// endpoints do, a probe period late, so a replica that is stopped
// gracefully, and fails its readiness before it stops serving
// (--shutdown-delay), gets no new connection before it stops. A replica
// not ready yet is expected to be passed over; one that was ready and no
// longer is (or cannot be reached) is not, unless the harness stopped it:
// the harness logs why (at most once a second), and Stop keeps the
// replicas' logs.
func (d *Operator) forward(ctx context.Context, l net.Listener) {
	go func() { <-ctx.Done(); l.Close() }()
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer in.Close()
			port := d.noopPort.Load()
			defer d.hold(in, port != 0)()
			if port != 0 {
				d.acceptedNoOp.Add(1)
				if out, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", localwebhook.Host, port), time.Second); err == nil {
					pipe(in, out, d.answersOf(NoOpName))
				}
				return
			}
			d.accepted.Add(1)
			p, why := d.pick()
			if p == nil {
				d.dropped(why)
				return
			}
			out, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", localwebhook.Host, p.WebhookPort), time.Second)
			if err != nil {
				if !p.signalled.Load() {
					d.dropped([]string{fmt.Sprintf("%s, ready, not reached: %v", p.Name, err)})
				}
				return
			}
			if end := pipe(in, out, d.answersOf(p.Name)); end.unanswered && !p.signalled.Load() {
				d.unanswered(p, end)
			}
		}()
	}
}

// hold keeps in among the piped connections, of the no-op server's side
// or the replicas', until the returned function is called.
func (d *Operator) hold(in net.Conn, noop bool) func() {
	d.pipedMu.Lock()
	defer d.pipedMu.Unlock()
	if d.piped == nil {
		d.piped = map[net.Conn]bool{}
	}
	d.piped[in] = noop
	return func() {
		d.pipedMu.Lock()
		defer d.pipedMu.Unlock()
		delete(d.piped, in)
	}
}

// closePiped closes the piped connections of one side, the no-op server's
// or the replicas'.
func (d *Operator) closePiped(noop bool) {
	d.pipedMu.Lock()
	defer d.pipedMu.Unlock()
	for c, side := range d.piped {
		if side == noop {
			_ = c.Close()
		}
	}
}

// pipe copies in to out and back until either closes, then closes out,
// and says how it ended.
func pipe(in, out net.Conn, answers *answerTimes) pipeEnd {
	defer out.Close()
	began := time.Now()
	fromClient, fromServer := &stamped{w: out}, &stamped{w: in}
	if answers != nil {
		var asked atomic.Int64
		fromClient.before = func() { asked.CompareAndSwap(0, time.Now().UnixNano()) }
		fromServer.before = func() {
			if t := asked.Swap(0); t != 0 {
				answers.add(time.Duration(time.Now().UnixNano() - t))
			}
		}
	}
	clientDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(fromClient, in)
		close(clientDone)
		// The client closed: pass the close on, as a Service's NAT does,
		// or the replica holds the connection (and counts it against the
		// source) until its idle timeout.
		_ = out.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(fromServer, out)
	end := pipeEnd{age: time.Since(began), sent: fromClient.n.Load(), answered: fromServer.n.Load()}
	select {
	case <-clientDone:
	default:
		// The server closed first: bytes the client sent after the
		// server's last are a request it will see fail (EOF).
		end.serverClosed = true
		end.unanswered = fromClient.last.Load() > fromServer.last.Load()
	}
	return end
}

// pipeEnd is how a piped connection ended.
type pipeEnd struct {
	age            time.Duration
	sent, answered int64
	// serverClosed is set when the server's side closed while the
	// client's was open; unanswered when the client had sent bytes after
	// the server's last.
	serverClosed, unanswered bool
}

// stamped counts the bytes written through it to w and stamps the last
// write.
type stamped struct {
	w    io.Writer
	n    atomic.Int64
	last atomic.Int64
	// before, when set, is called before each write.
	before func()
}

// Write writes b to w.
func (s *stamped) Write(b []byte) (int, error) {
	if s.before != nil {
		s.before()
	}
	s.n.Add(int64(len(b)))
	s.last.Store(time.Now().UnixNano())
	return s.w.Write(b)
}

// AnswerTimes sums the time a webhook server took from the first byte of
// each request (a TLS handshake's message among them) to the first byte
// of its answer, as the forwarder in front of it saw them: the server's
// time to be scheduled, read, handle and start writing, without the API
// server's part of a call.
type AnswerTimes struct {
	Count int64
	Sum   time.Duration
}

// answerTimes are AnswerTimes being counted.
type answerTimes struct {
	mu sync.Mutex
	AnswerTimes
}

// add counts one answer that took d.
func (a *answerTimes) add(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.Count++
	a.Sum += d
}

// answersOf is the answer times of the webhook server named so.
func (d *Operator) answersOf(name string) *answerTimes {
	d.pipedMu.Lock()
	defer d.pipedMu.Unlock()
	if d.answers == nil {
		d.answers = map[string]*answerTimes{}
	}
	if d.answers[name] == nil {
		d.answers[name] = &answerTimes{}
	}
	return d.answers[name]
}

// WebhookAnswers are the answer times so far of each webhook server the
// forwarder has sent requests to, by replica name ("no-op" for the no-op
// server): count and sum.
func (d *Operator) WebhookAnswers() map[string]AnswerTimes {
	d.pipedMu.Lock()
	defer d.pipedMu.Unlock()
	out := make(map[string]AnswerTimes, len(d.answers))
	for name, a := range d.answers {
		a.mu.Lock()
		out[name] = a.AnswerTimes
		a.mu.Unlock()
	}
	return out
}

// pick is the next replica serving, in turn, or none and why not: the
// replicas that had been ready, the harness did not stop and are not.
func (d *Operator) pick() (*Manager, []string) {
	var serving []*Manager
	var why []string
	for _, p := range d.Live() {
		switch {
		case p.serving.Load():
			serving = append(serving, p)
		case p.wasReady.Load() && !p.signalled.Load():
			last := "unknown"
			if w := p.notReady.Load(); w != nil {
				last = *w
			}
			why = append(why, fmt.Sprintf("%s, ready before, not ready: %s", p.Name, last))
		}
	}
	if len(serving) == 0 {
		return nil, why
	}
	return serving[int(d.turn.Add(1)%uint64(len(serving)))], nil
}

// dropped notes a webhook connection that no replica took, and why.
func (d *Operator) dropped(why []string) {
	if len(why) == 0 || d.stopping.Load() {
		return // no replica has been ready yet, or the operator is stopping
	}
	d.mu.Lock()
	d.droppedLive++
	n, last := d.droppedLive, d.lastDropLog
	if time.Since(last) >= time.Second {
		d.lastDropLog = time.Now()
	}
	d.mu.Unlock()
	if time.Since(last) >= time.Second {
		Logf("webhook forwarder of %s closed a connection no replica took (%d so far): %s",
			d.WorkDir, n, strings.Join(why, "; "))
	}
}

// unanswered notes a connection a replica closed with a request on it
// unanswered, which the API server reports as EOF, with the end of the
// replica's log (the first time of each replica: CI removes the kept logs
// with the rest of its run).
func (d *Operator) unanswered(p *Manager, end pipeEnd) {
	if d.stopping.Load() {
		return
	}
	d.mu.Lock()
	d.droppedLive++
	first := !p.toldUnanswered
	p.toldUnanswered = true
	d.mu.Unlock()
	Logf("%s closed a webhook connection with a request on it unanswered (the API server sees EOF): "+
		"the connection was %s old, %d bytes sent, %d answered",
		p.Name, end.age.Round(time.Millisecond), end.sent, end.answered)
	if first {
		Logf("the end of %s's log %s:\n%s", p.Name, p.LogPath, tail(p.LogPath))
	}
}

// stopGrace is how long Stop waits for a replica to exit after SIGTERM:
// the manager's graceful shutdown timeout (30 s) and some.
const stopGrace = 45 * time.Second

// Stop ends every replica gracefully (SIGTERM; SIGKILL for one still
// running after stopGrace, so that a manager that hangs cannot hang the
// test run), stops forwarding and removes the working files, unless
// HARNESS_KEEP_LOGS is set or the forwarder closed a connection because a
// replica that had been ready was not (the logs then say why).
func (d *Operator) Stop() {
	d.stopping.Store(true)
	// All at once, as a Deployment's pods are deleted: each serves its
	// shutdown delay out before it exits.
	live := d.Live()
	for _, p := range live {
		p.signalled.Store(true)
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range live {
		select {
		case <-p.exited:
		case <-time.After(stopGrace):
			Logf("%s did not exit %s after SIGTERM; killing it (log %s)", p.Name, stopGrace, p.LogPath)
			p.Kill(syscall.SIGKILL)
		}
	}
	d.stopForwarding()
	d.stopNoOp()
	d.mu.Lock()
	dropped := d.droppedLive
	d.mu.Unlock()
	if os.Getenv("HARNESS_KEEP_LOGS") == "" && dropped == 0 {
		_ = os.RemoveAll(d.WorkDir)
		_ = os.RemoveAll(d.certDir)
	} else {
		Logf("manager logs kept in %s", d.WorkDir)
	}
}

// installOperatorRBAC applies, from config/default as it renders (or the
// chart, when chartValues is not nil), the manager's namespace,
// ServiceAccount and every RBAC object: the same rights a real install
// grants, and no more.
func installOperatorRBAC(ctx context.Context, c *Cluster, chartValues []string) error {
	source := "kubectl kustomize config/default"
	rendered, err := c.KubectlOutput(ctx, nil, "kustomize", filepath.Join(c.Repo, "config", "default"))
	if chartValues != nil {
		source = "helm template charts/platform-operator"
		rendered, err = renderChart(ctx, c, chartValues)
	}
	if err != nil {
		return err
	}
	objs, err := yamldoc.Decode(bytes.NewReader(rendered))
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if chartValues != nil {
		// Helm makes the release's namespace itself (--create-namespace).
		objs = append([]map[string]any{{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": OperatorNamespace}}}, objs...)
	}
	keep := map[string]bool{
		"Namespace": true, "ServiceAccount": true,
		"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
	}
	var kept []any
	for _, obj := range objs {
		// The signing key Secret ships empty, and the operator, which may
		// not create Secrets, fills it.
		signingKey := yamldoc.Kind(obj) == "Secret" && yamldoc.Name(obj) == provenance.KeySecretName
		if keep[yamldoc.Kind(obj)] || signingKey {
			kept = append(kept, obj)
		}
	}
	out, err := yamldoc.Encode(kept...)
	if err != nil {
		return err
	}
	return c.Kubectl(ctx, out, "apply", "--server-side", "-f", "-")
}

// renderChart renders the project's chart as a release in
// OperatorNamespace with values (helm template --set).
func renderChart(ctx context.Context, c *Cluster, values []string) ([]byte, error) {
	args := []string{"template", "platform-operator", filepath.Join(c.Repo, "charts", "platform-operator"),
		"--namespace", OperatorNamespace}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	cmd := exec.CommandContext(ctx, c.Bin("helm"), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %v: %w\n%s", args, err, stderr.Bytes())
	}
	return out, nil
}

// installWebhooks makes a serving certificate for this machine, points the
// project's webhook configurations and the CRDs' conversion at port with it,
// applies them, and returns the certificate's directory.
func installWebhooks(ctx context.Context, c *Cluster, port int) (string, error) {
	dir, err := os.MkdirTemp("", "webhook-certs-")
	if err != nil {
		return "", err
	}
	ca, err := localwebhook.EnsureCerts(dir)
	if err != nil {
		return "", err
	}
	manifests, err := localwebhook.Render(filepath.Join(c.Repo, "config", "webhook", "manifests.yaml"), port, ca)
	if err != nil {
		return "", err
	}
	crds, err := localwebhook.RenderCRDs(filepath.Join(c.Repo, "config", "crd", "bases"), port, ca)
	if err != nil {
		return "", err
	}
	return dir, c.Kubectl(ctx, append(crds, manifests...), "apply", "--server-side", "-f", "-")
}

// impersonatingKubeconfig writes a copy of kubeconfig whose user acts as the
// operator's ServiceAccount.
func impersonatingKubeconfig(kubeconfig, dir string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", err
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = OperatorUser
	}
	path := filepath.Join(dir, "operator.kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

// handedOut holds the ports FreePort returned in this process. The kernel
// may give the port just closed to the next listen on port 0, so two calls
// in a row could return the same port: a replica once got it for both its
// probes and its metrics and exited with "bind: address already in use".
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// FreePort returns a TCP port on the loopback interface that is free now
// and that it has not returned before in this process.
func FreePort() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for range 100 {
		l, err := net.Listen("tcp", localwebhook.Host+":0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port on %s that was not handed out before", localwebhook.Host)
}
