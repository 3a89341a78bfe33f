// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package clitest

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/example/platform-operator/internal/cli/core"
)

// Now is the time of every plugin test: the plugins' clock says it, and
// fixtures are written relative to it (At).
var Now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// Namespace is the namespace a command runs in (-n): the one fixtures put
// their objects in, unless they test another.
const Namespace = "team"

// At is Now moved by d, as the API's time.
func At(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(Now.Add(d))) }

// NoWatchList is a fake client that says it cannot stream a watch's
// initial list, so that core.WaitFor's informer lists first, as client-go's
// fakes ask.
type NoWatchList struct{ client.WithWatch }

// IsWatchListSemanticsUnSupported tells client-go's reflector to list, then
// watch.
func (NoWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// NewClient is a fake cluster of scheme's kinds holding objs, with funcs in
// front of it. It answers field selectors on events' regarding.kind and
// regarding.name as the API server does, which core.EventsAbout relies on.
// The kinds of statusSubresource write their status only through the
// status subresource, as kinds with one do on a real server.
func NewClient(t testing.TB, scheme *runtime.Scheme, funcs interceptor.Funcs, objs []client.Object,
	statusSubresource ...client.Object) client.WithWatch {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(funcs)
	if len(statusSubresource) > 0 {
		b = b.WithStatusSubresource(statusSubresource...)
	}
	return b.
		WithIndex(&eventsv1.Event{}, "regarding.name", func(o client.Object) []string { return []string{o.(*eventsv1.Event).Regarding.Name} }).
		WithIndex(&eventsv1.Event{}, "regarding.kind", func(o client.Object) []string { return []string{o.(*eventsv1.Event).Regarding.Kind} }).
		Build()
}

// Result is the outcome of one command line.
type Result struct {
	// Out and ErrOut are what the command wrote to its standard output and
	// standard error.
	Out, ErrOut string
	// Err is what the root command returned.
	Err error
}

// Code is the exit code core.Execute would give the command line.
func (r Result) Code() int { return ExitCode(r.Err) }

// ExitCode is the exit code core.Execute gives for err: 0 for none, an
// ExitError's code, else 1.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	if exit, ok := errors.AsType[*core.ExitError](err); ok {
		return exit.Code
	}
	return 1
}

// Execute runs plugin p in process against c, in Namespace at Now, with
// stdin as its standard input and args after the plugin's name.
func Execute(t testing.TB, p *core.Plugin, c client.WithWatch, stdin string, args ...string) Result {
	t.Helper()
	scheme, err := p.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	o := core.NewOptions(genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, scheme)
	o.NewClient = func() (client.WithWatch, error) { return NoWatchList{c}, nil }
	o.Clock = clocktesting.NewFakePassiveClock(Now)
	// An empty kubeconfig, so the namespace comes from -n and nothing from
	// the machine the test runs on.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := p.Root(o)
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig, "-n", Namespace}, args...))
	err = cmd.Execute()
	return Result{Out: out.String(), ErrOut: errOut.String(), Err: err}
}

// EveryHelpPageUsed fails t unless each of the plugin's help pages is a
// command's (or the plugin's root.md): a page left behind by a renamed or
// removed command would read as reference for nothing. Pages a command
// lacks fail when the root is made.
func EveryHelpPageUsed(t testing.TB, p *core.Plugin) {
	t.Helper()
	scheme, err := p.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	root := p.Root(core.NewOptions(genericiooptions.NewTestIOStreamsDiscard(), scheme))
	used := map[string]bool{"root.md": true}
	for _, cmd := range root.Commands() {
		used[cmd.Name()+".md"] = true
	}
	pages, err := fs.Glob(p.Help.Pages, path.Join(p.Help.Dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatalf("no help pages in %q", p.Help.Dir)
	}
	for _, page := range pages {
		if !used[path.Base(page)] {
			t.Errorf("help page %s is no command's", page)
		}
	}
}
