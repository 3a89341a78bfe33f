//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/test/harness"
)

// clientCATest is the test whose cluster's API server presents a client
// certificate to admission webhooks, through an AdmissionConfiguration.
const clientCATest = "TestWebhookClientCA_APIServerPresentingACertificateIsServedOthersAreRefused"

// clientCAFile is the CA that signed the certificate clientCATest's API
// server presents; the operator is started with it as --webhook-client-ca.
var clientCAFile string

// startClientCA writes a CA, a client certificate it signed, a kubeconfig
// that gives the certificate to every webhook ("*": the harness's webhook
// address has a port chosen later) and an AdmissionConfiguration naming it
// for both webhook admission plugins, and gives clientCATest's cluster an
// API server started with that configuration. The returned function
// removes the files.
func startClientCA() (stop func(), err error) {
	dir, err := os.MkdirTemp("", "e2e-clientca-")
	if err != nil {
		return nil, err
	}
	stop = func() { _ = os.RemoveAll(dir) }
	defer func() {
		if err != nil {
			stop()
		}
	}()
	ca, err := testutil.NewCA("e2e-webhook-client-ca")
	if err != nil {
		return nil, err
	}
	cert, err := ca.Issue("kube-apiserver", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := testutil.PEMs(cert)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"ca.crt":     ca.PEM,
		"client.crt": certPEM,
		"client.key": keyPEM,
		"webhook-kubeconfig.yaml": fmt.Appendf(nil, `apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %s
    client-key: %s
`, filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")),
		"admission.yaml": fmt.Appendf(nil, `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
`, filepath.Join(dir, "webhook-kubeconfig.yaml")),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	clientCAFile = filepath.Join(dir, "ca.crt")
	ownClusterOptions[clientCATest] = harness.ClusterOptions{KwokctlArgs: []string{
		"--extra-args=kube-apiserver=admission-control-config-file=" + filepath.Join(dir, "admission.yaml"),
	}}
	return stop, nil
}

// TestWebhookClientCA_APIServerPresentingACertificateIsServedOthersAreRefused
// runs the operator with --webhook-client-ca on a cluster whose API server
// presents a certificate of that CA to admission webhooks: writes go
// through both webhooks (they fail closed, so a refused call would fail the
// write), while a direct call without a certificate is refused, and
// /convert, to which the API server sends no certificate, is still served.
func TestWebhookClientCA_APIServerPresentingACertificateIsServedOthersAreRefused(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	own := ownCluster(t)
	op, err := harness.StartOperator(ctx, own, harness.OperatorOptions{
		Replicas: 1, Args: []string{"--webhook-client-ca=" + clientCAFile},
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(op.Stop)
	ns := harness.Namespace(t, own)

	// A create and an update, each through the mutating and the validating
	// webhook of ScheduleTask.
	manifest := func(image string) []byte {
		return fmt.Appendf(nil, `apiVersion: platform.example.com/v1
kind: ScheduleTask
metadata:
  name: admitted
  namespace: %s
spec:
  schedule: "* * * * *"
  image: %s
  command: ["sh", "-c", "true"]
`, ns, image)
	}
	g.Expect(own.Kubectl(ctx, manifest("busybox:1.36"), "apply", "-f", "-")).To(Succeed())
	g.Expect(own.Kubectl(ctx, manifest("busybox:1.37"), "apply", "-f", "-")).To(Succeed())
	st := &platformv1.ScheduleTask{}
	g.Expect(own.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "admitted"}, st)).To(Succeed())
	g.Expect(st.Spec.Image).To(Equal("busybox:1.37"))
	// The mutating webhook ran: it adds the finalizer on create.
	g.Expect(st.Finalizers).To(ContainElement(platformv1.ScheduleTaskFinalizer))

	// Anyone else who reaches the webhook port is refused.
	replica := op.Live()[0]
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the test calls its own server
	}}
	post := func(path string) int {
		resp, err := insecure.Post(fmt.Sprintf("https://127.0.0.1:%d%s", replica.WebhookPort, path), "application/json", nil)
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{
		"/validate-platform-example-com-v1-scheduletask",
		"/mutate-platform-example-com-v1-scheduletask",
		"/validate-platform-example-com-v1-taskrun",
	} {
		g.Expect(post(path)).To(Equal(http.StatusUnauthorized), path)
	}
	// /convert answers (an empty body is a bad request), not 401.
	g.Expect(post("/convert")).NotTo(Equal(http.StatusUnauthorized))
}
