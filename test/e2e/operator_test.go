//go:build e2e

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

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/example/platform-operator/internal/testutil/localwebhook"
)

const (
	// operatorNamespace and operatorServiceAccount are where config/default
	// installs the manager and whom it runs as.
	operatorNamespace      = "platform-operator-system"
	operatorServiceAccount = "platform-operator-controller-manager"
)

// operatorUser is the user the manager processes authenticate as: its own
// ServiceAccount, by impersonation, so they hold exactly the generated RBAC.
var operatorUser = "system:serviceaccount:" + operatorNamespace + ":" + operatorServiceAccount

// installCRDs applies the project's CRDs to the cluster and waits until the
// API server serves them.
func installCRDs(ctx context.Context, repo, kubeconfig string) error {
	crds := filepath.Join(repo, "config", "crd", "bases")
	if err := kubectl(ctx, repo, kubeconfig, nil, "apply", "--server-side", "-f", crds); err != nil {
		return err
	}
	return kubectl(ctx, repo, kubeconfig, nil, "wait", "--for", "condition=Established", "--timeout", "60s", "-f", crds)
}

// kubectl runs bin/kubectl against the cluster, with stdin when given.
func kubectl(ctx context.Context, repo, kubeconfig string, stdin []byte, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "bin", "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// installOperatorRBAC applies, from config/default as it renders, the
// manager's namespace, ServiceAccount and every RBAC object: the same rights
// a real install grants, and no more.
func installOperatorRBAC(ctx context.Context, repo, kubeconfig string) error {
	rendered, err := exec.CommandContext(ctx, filepath.Join(repo, "bin", "kubectl"), "kustomize", filepath.Join(repo, "config", "default")).Output()
	if err != nil {
		return fmt.Errorf("kubectl kustomize config/default: %w", err)
	}
	keep := map[string]bool{"Namespace": true, "ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true}
	var out bytes.Buffer
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(rendered), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		if kind, _ := obj["kind"].(string); keep[kind] {
			y, err := sigsyaml.Marshal(obj)
			if err != nil {
				return err
			}
			out.WriteString("---\n")
			out.Write(y)
		}
	}
	return kubectl(ctx, repo, kubeconfig, out.Bytes(), "apply", "--server-side", "-f", "-")
}

// installWebhooks makes a serving certificate for this machine, points the
// project's webhook configurations and the CRDs' conversion at port with it,
// applies them, and returns the certificate's directory.
func installWebhooks(ctx context.Context, repo, kubeconfig string, port int) (string, error) {
	dir, err := os.MkdirTemp("", "e2e-webhook-certs-")
	if err != nil {
		return "", err
	}
	ca, err := localwebhook.EnsureCerts(dir)
	if err != nil {
		return "", err
	}
	manifests, err := localwebhook.Render(filepath.Join(repo, "config", "webhook", "manifests.yaml"), port, ca)
	if err != nil {
		return "", err
	}
	crds, err := localwebhook.RenderCRDs(filepath.Join(repo, "config", "crd", "bases"), port, ca)
	if err != nil {
		return "", err
	}
	return dir, kubectl(ctx, repo, kubeconfig, append(crds, manifests...), "apply", "--server-side", "-f", "-")
}

// impersonatingKubeconfig writes a copy of kubeconfig whose user acts as the
// operator's ServiceAccount.
func impersonatingKubeconfig(kubeconfig, dir string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", err
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = operatorUser
	}
	path := filepath.Join(dir, "operator.kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

// freePort returns a TCP port on the loopback interface that is free now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", localwebhook.Host+":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// operatorDeployment is what the e2e suite runs in place of the manager's
// Deployment: manager processes built from cmd/, as the operator's
// ServiceAccount, behind one webhook address that forwards to any live
// replica, as a Service would.
type operatorDeployment struct {
	repo, binary, kubeconfig, certDir, workDir string

	mu       sync.Mutex
	replicas []*managerProcess
	next     int
}

// managerProcess is one replica.
type managerProcess struct {
	name                                string
	cmd                                 *exec.Cmd
	exited                              chan struct{}
	logPath                             string
	probePort, metricsPort, webhookPort int
}

// startOperator builds the manager, installs what a real install would (RBAC,
// webhooks pointing at a local forwarder) and starts replicas processes.
func startOperator(ctx context.Context, repo, kubeconfig string, replicas int) (*operatorDeployment, error) {
	work, err := os.MkdirTemp("", "e2e-operator-")
	if err != nil {
		return nil, err
	}
	d := &operatorDeployment{repo: repo, workDir: work, binary: filepath.Join(work, "manager")}
	build := exec.CommandContext(ctx, "go", "build", "-o", d.binary, "./cmd")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the manager: %w\n%s", err, out)
	}
	if err := installOperatorRBAC(ctx, repo, kubeconfig); err != nil {
		return nil, err
	}
	if d.kubeconfig, err = impersonatingKubeconfig(kubeconfig, work); err != nil {
		return nil, err
	}
	front, err := net.Listen("tcp", localwebhook.Host+":0")
	if err != nil {
		return nil, err
	}
	go d.forward(ctx, front)
	if d.certDir, err = installWebhooks(ctx, repo, kubeconfig, front.Addr().(*net.TCPAddr).Port); err != nil {
		return nil, err
	}
	for range replicas {
		if _, err := d.startReplica(ctx); err != nil {
			d.stop()
			return nil, err
		}
	}
	return d, nil
}

// startReplica starts one more manager process and waits until it is ready.
func (d *operatorDeployment) startReplica(ctx context.Context) (*managerProcess, error) {
	p := &managerProcess{exited: make(chan struct{})}
	var err error
	for _, port := range []*int{&p.probePort, &p.metricsPort, &p.webhookPort} {
		if *port, err = freePort(); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	d.next++
	p.name = fmt.Sprintf("manager-%d", d.next)
	d.mu.Unlock()
	p.logPath = filepath.Join(d.workDir, p.name+".log")
	logFile, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(d.binary,
		"--kubeconfig="+d.kubeconfig,
		"--leader-elect=true",
		"--leader-election-namespace="+operatorNamespace,
		fmt.Sprintf("--health-probe-bind-address=%s:%d", localwebhook.Host, p.probePort),
		fmt.Sprintf("--metrics-bind-address=%s:%d", localwebhook.Host, p.metricsPort),
		fmt.Sprintf("--webhook-port=%d", p.webhookPort),
		"--webhook-cert-path="+d.certDir,
		"--cert-rotation=false",
	)
	p.cmd.Env = append(os.Environ(), "POD_NAMESPACE="+operatorNamespace)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); logFile.Close(); close(p.exited) }()
	d.mu.Lock()
	d.replicas = append(d.replicas, p)
	d.mu.Unlock()

	deadline := time.Now().Add(60 * time.Second)
	for !p.ready() {
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s exited before it was ready; its log: %s\n%s", p.name, p.logPath, tail(p.logPath))
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s not ready after a minute; its log: %s\n%s", p.name, p.logPath, tail(p.logPath))
		}
	}
	logf("%s is ready (log %s)", p.name, p.logPath)
	return p, nil
}

// ready asks the replica's /readyz.
func (p *managerProcess) ready() bool {
	resp, err := http.Get(fmt.Sprintf("http://%s:%d/readyz", localwebhook.Host, p.probePort))
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// alive reports whether the process still runs.
func (p *managerProcess) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// isLeader reports whether the replica has said it acquired the Lease.
func (p *managerProcess) isLeader() bool {
	f, err := os.Open(p.logPath)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		if strings.Contains(strings.ToLower(s.Text()), "successfully acquired lease") {
			return true
		}
	}
	return false
}

// kill ends the replica with sig and waits for it.
func (p *managerProcess) kill(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig)
	<-p.exited
}

// live returns the replicas still running.
func (d *operatorDeployment) live() []*managerProcess {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*managerProcess
	for _, p := range d.replicas {
		if p.alive() {
			out = append(out, p)
		}
	}
	return out
}

// forward passes each webhook connection to the first live, ready replica.
func (d *operatorDeployment) forward(ctx context.Context, l net.Listener) {
	go func() { <-ctx.Done(); l.Close() }()
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer in.Close()
			for _, p := range d.live() {
				out, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", localwebhook.Host, p.webhookPort), time.Second)
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

// stop ends every replica gracefully and removes the working files, unless
// E2E_KEEP_LOGS is set.
func (d *operatorDeployment) stop() {
	for _, p := range d.live() {
		p.kill(syscall.SIGTERM)
	}
	if os.Getenv("E2E_KEEP_LOGS") == "" {
		_ = os.RemoveAll(d.workDir)
		_ = os.RemoveAll(d.certDir)
	} else {
		logf("manager logs kept in %s", d.workDir)
	}
}

// tail returns the end of a log file, for error messages.
func tail(path string) string {
	data, _ := os.ReadFile(path)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}
