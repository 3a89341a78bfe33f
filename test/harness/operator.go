/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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
}

// Operator is what the harness runs in place of the manager's Deployment:
// manager processes built from ./cmd, as the operator's ServiceAccount,
// behind one webhook address that forwards to any live replica, as a Service
// would.
type Operator struct {
	// WorkDir holds the manager binary, the replicas' logs and kubeconfig.
	WorkDir string

	cluster            *Cluster
	args, env          []string
	binary, kubeconfig string
	certDir            string
	stopForwarding     context.CancelFunc
	mu                 sync.Mutex
	replicas           []*Manager
	next               int
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
	exited chan struct{}
}

// StartOperator builds the manager, installs what a real install would
// (namespace, ServiceAccount and RBAC from config/default; webhook
// configurations and CRD conversion pointing at a local forwarder, with a
// certificate for it) and starts the replicas.
func StartOperator(ctx context.Context, c *Cluster, o OperatorOptions) (*Operator, error) {
	work, err := os.MkdirTemp("", "operator-")
	if err != nil {
		return nil, err
	}
	d := &Operator{WorkDir: work, cluster: c, args: o.Args, env: o.Env, binary: filepath.Join(work, "manager")}
	build := exec.CommandContext(ctx, "go", "build", "-o", d.binary, "./cmd")
	build.Dir = c.Repo
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the manager: %w\n%s", err, out)
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
// args are extra flags of this replica, after the operator's own.
func (d *Operator) StartReplica(ctx context.Context, args ...string) (*Manager, error) {
	p := &Manager{exited: make(chan struct{})}
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
	go func() { _ = p.cmd.Wait(); logFile.Close(); close(p.exited) }()
	d.mu.Lock()
	d.replicas = append(d.replicas, p)
	d.mu.Unlock()

	if err := p.WaitReady(ctx, time.Minute); err != nil {
		return nil, err
	}
	Logf("%s is ready after %s (log %s)", p.Name, time.Since(p.Started).Round(time.Millisecond), p.LogPath)
	return p, nil
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
func (p *Manager) Ready() bool {
	resp, err := http.Get(fmt.Sprintf("http://%s:%d/readyz", localwebhook.Host, p.ProbePort))
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
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

// forward passes each webhook connection to the first live, ready replica.
func (d *Operator) forward(ctx context.Context, l net.Listener) {
	go func() { <-ctx.Done(); l.Close() }()
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer in.Close()
			for _, p := range d.Live() {
				out, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", localwebhook.Host, p.WebhookPort), time.Second)
				if err != nil {
					continue
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in) }()
				_, _ = io.Copy(in, out)
				return
			}
		}()
	}
}

// stopGrace is how long Stop waits for a replica to exit after SIGTERM:
// the manager's graceful shutdown timeout (30 s) and some.
const stopGrace = 45 * time.Second

// Stop ends every replica gracefully (SIGTERM; SIGKILL for one still
// running after stopGrace, so that a manager that hangs cannot hang the
// test run), stops forwarding and removes the working files, unless
// HARNESS_KEEP_LOGS is set.
func (d *Operator) Stop() {
	for _, p := range d.Live() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(stopGrace):
			Logf("%s did not exit %s after SIGTERM; killing it (log %s)", p.Name, stopGrace, p.LogPath)
			p.Kill(syscall.SIGKILL)
		}
	}
	d.stopForwarding()
	if os.Getenv("HARNESS_KEEP_LOGS") == "" {
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

// FreePort returns a TCP port on the loopback interface that is free now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", localwebhook.Host+":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
