//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// plugin is a kubectl plugin built once for the suite.
type plugin struct {
	once sync.Once
	path string
	err  error
}

// plugins are the built plugins, by command name.
var plugins = map[string]*plugin{"kubectl-stask": {}, "kubectl-appdeploy": {}}

// stask runs the kubectl plugin against the cluster in namespace ns and
// returns its output, standard error after standard output, and exit code.
func stask(t *testing.T, ns string, args ...string) (string, int) {
	t.Helper()
	stdout, stderr, code := staskStreams(t, ns, args...)
	return stdout + stderr, code
}

// staskStreams runs the kubectl plugin like stask and returns its standard
// output and error apart, for output a test decodes.
func staskStreams(t *testing.T, ns string, args ...string) (string, string, int) {
	t.Helper()
	return runPlugin(t, "kubectl-stask", ns, args...)
}

// appdeploy runs kubectl appdeploy like stask.
func appdeploy(t *testing.T, ns string, args ...string) (string, int) {
	t.Helper()
	stdout, stderr, code := runPlugin(t, "kubectl-appdeploy", ns, args...)
	return stdout + stderr, code
}

// runPlugin builds the plugin name (once), runs it against the cluster in
// namespace ns, and returns its standard output, standard error and exit code.
func runPlugin(t *testing.T, name, ns string, args ...string) (string, string, int) {
	t.Helper()
	p := plugins[name]
	p.once.Do(func() {
		// In the operator's working directory, which lives as long as the suite.
		p.path = filepath.Join(operator.WorkDir, name)
		build := exec.Command("go", "build", "-o", p.path, "./cmd/"+name)
		build.Dir = cluster.Repo
		if out, err := build.CombinedOutput(); err != nil {
			p.err = errors.New(string(out))
		}
	})
	if p.err != nil {
		t.Fatalf("build %s: %v", name, p.err)
	}
	var stdout, stderr bytes.Buffer
	args = append([]string{"--kubeconfig", cluster.Kubeconfig, "-n", ns}, args...)
	cmd := exec.CommandContext(t.Context(), p.path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	default:
		t.Fatalf("%s %v: %v", name, args, err)
		return "", "", -1
	}
}

func TestCLI_RunWaitExitsWithTheRunsOutcome(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	never := testutil.WithSchedule("0 0 1 1 *")
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "works", never))).To(Succeed())
	breaks := testutil.NewScheduleTask(ns, "breaks", never, testutil.WithBackoffLimit(0), kwokPod(3, ""))
	g.Expect(cluster.Client.Create(ctx, breaks)).To(Succeed())
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
	talker := testutil.NewScheduleTask(ns, "talker", testutil.WithSchedule("0 0 1 1 *"), kwokPod(0, "5m"))
	g.Expect(cluster.Client.Create(ctx, talker)).To(Succeed())
	out, code := stask(t, ns, "run", "talker")
	g.Expect(code).To(Equal(0), out)
	g.Eventually(func(g Gomega) {
		out, code := stask(t, ns, "logs", "talker", "--last")
		g.Expect(code).To(Equal(0), out)
		g.Expect(out).To(ContainSubstring("starting task"))
	}).WithTimeout(settleTimeout).WithPolling(time.Second).Should(Succeed())

	out, code = stask(t, ns, "logs", "no-such-run")
	g.Expect(code).To(Equal(1))
	g.Expect(out).To(ContainSubstring(`taskrun "no-such-run" not found`))
}

// list is what -o json and -o yaml of a listing decode to.
type list[T any] struct {
	metav1.TypeMeta `json:",inline"`
	Items           []T `json:"items"`
}

// decode decodes a command's JSON or YAML output into a T.
func decode[T any](g Gomega, out string) T {
	var v T
	g.Expect(yaml.Unmarshal([]byte(out), &v)).To(Succeed(), out)
	return v
}

func TestCLI_ListGetAndHistoryPrintObjectsInEveryFormat(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	formats := testutil.NewScheduleTask(ns, "formats", testutil.WithSchedule("0 0 1 1 *"))
	g.Expect(cluster.Client.Create(ctx, formats)).To(Succeed())
	out, code := stask(t, ns, "run", "formats", "--wait", "--timeout", "60s", "-o", "name")
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(HavePrefix("taskrun.platform.example.com/formats-manual-"))
	run := strings.TrimPrefix(strings.Fields(out)[0], "taskrun.platform.example.com/")

	for _, format := range []string{"json", "yaml"} {
		out, stderr, code := staskStreams(t, ns, "list", "-o", format)
		g.Expect(code).To(Equal(0), stderr)
		tasks := decode[list[platformv1.ScheduleTask]](g, out)
		g.Expect(tasks.APIVersion + " " + tasks.Kind).To(Equal("v1 List"))
		g.Expect(tasks.Items).To(HaveLen(1))
		g.Expect(tasks.Items[0].APIVersion + " " + tasks.Items[0].Kind + " " + tasks.Items[0].Name).
			To(Equal("platform.example.com/v1 ScheduleTask formats"))

		out, stderr, code = staskStreams(t, ns, "get", "formats", "-o", format)
		g.Expect(code).To(Equal(0), stderr)
		task := decode[platformv1.ScheduleTask](g, out)
		g.Expect(task.APIVersion + " " + task.Kind + " " + task.Spec.Schedule).
			To(Equal("platform.example.com/v1 ScheduleTask 0 0 1 1 *"))

		out, stderr, code = staskStreams(t, ns, "history", "formats", "-o", format)
		g.Expect(code).To(Equal(0), stderr)
		runs := decode[list[platformv1.TaskRun]](g, out)
		g.Expect(runs.Kind).To(Equal("List"))
		g.Expect(runs.Items).To(HaveLen(1))
		g.Expect(runs.Items[0].Kind + " " + runs.Items[0].Name + " " + string(runs.Items[0].Status.Phase)).
			To(Equal("TaskRun " + run + " Succeeded"))
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "-o", "name"}, "scheduletask.platform.example.com/formats\n"},
		{[]string{"get", "formats", "-o", "name"}, "scheduletask.platform.example.com/formats\n"},
		{[]string{"history", "formats", "-o", "name"}, "taskrun.platform.example.com/" + run + "\n"},
		{[]string{"list", "-o", "jsonpath={.items[*].metadata.name}"}, "formats"},
		{[]string{"get", "formats", "-o", "jsonpath={.kind}/{.spec.schedule}"}, "ScheduleTask/0 0 1 1 *"},
		{[]string{"history", "formats", "-o", "jsonpath={.items[*].status.phase}"}, "Succeeded"},
		{
			[]string{"history", "formats", "-o", "custom-columns=RUN:.metadata.name,TRIGGER:.spec.trigger", "--no-headers"},
			run + "   Manual\n",
		},
	} {
		out, stderr, code := staskStreams(t, ns, tt.args...)
		g.Expect(code).To(Equal(0), stderr)
		g.Expect(out).To(Equal(tt.want), "kubectl stask %v", tt.args)
	}
}
