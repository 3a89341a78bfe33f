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
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

var (
	pluginOnce sync.Once
	pluginPath string
	pluginErr  error
)

// stask runs the kubectl plugin against the cluster in namespace ns and
// returns its output and exit code.
func stask(t *testing.T, ns string, args ...string) (string, int) {
	t.Helper()
	pluginOnce.Do(func() {
		// In the operator's working directory, which lives as long as the suite.
		pluginPath = filepath.Join(operator.WorkDir, "kubectl-stask")
		build := exec.Command("go", "build", "-o", pluginPath, "./cmd/kubectl-stask")
		build.Dir = cluster.Repo
		if out, err := build.CombinedOutput(); err != nil {
			pluginErr = errors.New(string(out))
		}
	})
	if pluginErr != nil {
		t.Fatalf("build kubectl-stask: %v", pluginErr)
	}
	cmd := exec.CommandContext(t.Context(), pluginPath, append([]string{"--kubeconfig", cluster.Kubeconfig, "-n", ns}, args...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("kubectl-stask %v: %v", args, err)
		return "", -1
	}
}

func TestCLI_RunWaitExitsWithTheRunsOutcome(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	never := testutil.WithSchedule("0 0 1 1 *")
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "works", never))).To(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "breaks", never, testutil.WithBackoffLimit(0), kwokPod(3, "")))).To(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "lingers", never, kwokPod(0, "10m")))).To(Succeed())

	out, code := stask(t, ns, "run", "works", "--wait", "--timeout", "60s")
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(ContainSubstring("succeeded"))

	out, code = stask(t, ns, "run", "breaks", "--wait", "--timeout", "60s")
	g.Expect(code).To(Equal(1), out)
	g.Expect(out).To(And(ContainSubstring("BackoffLimitExceeded"), ContainSubstring("exit code 3")))

	out, code = stask(t, ns, "run", "lingers", "--wait", "--timeout", "3s")
	g.Expect(code).To(Equal(2), out)

	out, code = stask(t, ns, "run", "ghost")
	g.Expect(code).To(Equal(1))
	g.Expect(out).To(ContainSubstring(`scheduletask "ghost" not found in namespace "` + ns + `"`))

	out, code = stask(t, ns, "list")
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(And(ContainSubstring("works"), ContainSubstring("breaks"), ContainSubstring("NEXT RUN")))

	out, code = stask(t, ns, "history", "breaks")
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(And(ContainSubstring("BackoffLimitExceeded"), ContainSubstring("0/1 succeeded")))

	out, code = stask(t, ns, "get", "works")
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(And(ContainSubstring("Ready=True"), ContainSubstring("Next runs:"), ContainSubstring("RunSucceeded")))
}

func TestCLI_SuspendAndResume(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "toggled"))).To(Succeed())
	for _, step := range []struct {
		verb string
		want bool
	}{{"suspend", true}, {"resume", false}} {
		out, code := stask(t, ns, step.verb, "toggled")
		g.Expect(code).To(Equal(0), out)
		st := &platformv1.ScheduleTask{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "toggled"}, st)).To(Succeed())
		g.Expect(ptr.Deref(st.Spec.Suspend, !step.want)).To(Equal(step.want))
	}
}

func TestCLI_LogsShowsTheRunsPodLog(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "talker", testutil.WithSchedule("0 0 1 1 *"), kwokPod(0, "5m")))).To(Succeed())
	out, code := stask(t, ns, "run", "talker")
	g.Expect(code).To(Equal(0), out)
	g.Eventually(func(g Gomega) {
		out, code := stask(t, ns, "logs", "talker", "--last")
		g.Expect(code).To(Equal(0), out)
		g.Expect(out).To(ContainSubstring("starting task"))
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())

	out, code = stask(t, ns, "logs", "no-such-run")
	g.Expect(code).To(Equal(1))
	g.Expect(out).To(ContainSubstring(`taskrun "no-such-run" not found`))
}
