// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/cli/core/clitest"
)

// checkOutputs runs each command line against cluster() and compares its
// whole standard output with want.
func checkOutputs(t *testing.T, tests map[string]string) {
	t.Helper()
	for line, want := range tests {
		t.Run(line, func(t *testing.T) {
			r := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", strings.Fields(line)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if diff := cmp.Diff(strings.TrimPrefix(want, "\n"), r.out); diff != "" {
				t.Errorf("kubectl appdeploy %s (-want +got):\n%s", line, diff)
			}
		})
	}
}

func TestList_HumanTables(t *testing.T) {
	checkOutputs(t, map[string]string{
		"list": `
NAME            STRATEGY   STABLE   CURRENT   READY   PHASE      WEIGHT   AGE
checkout        canary     v3.0.0   v3.1.0    3/3     Degraded   -        26h
order-service   canary     v1.2.3   v1.2.4    4/4     Paused     25%      26h
web             rolling    v2.0.0   v2.0.0    2/2     Healthy    -        26h
`,
		"list -o wide": `
NAME            STRATEGY   STABLE   CURRENT   READY   PHASE      WEIGHT   AGE   IMAGE                                     MESSAGE
checkout        canary     v3.0.0   v3.1.0    3/3     Degraded   -        26h   harbor.example.com/checkout:v3.1.0        Canary v3.1.0 (9e8d7c6b5) rolled back: CrashLoopBackOff; stable v3.0.0 (3c4d5e6f7)
order-service   canary     v1.2.3   v1.2.4    4/4     Paused     25%      26h   harbor.example.com/order-service:v1.2.4   canary v1.2.4 (7b9e1a3c2): 1/1 pods (25%), step 1/3 (25%), waiting for promotion
web             rolling    v2.0.0   v2.0.0    2/2     Healthy    -        26h   nginx:1.27                                v2.0.0 (84f6b9c7d): 2/2 pods ready
`,
		"list -A --no-headers": `
other   batch           recreate   -        -        0/1   -          -     26h
team    checkout        canary     v3.0.0   v3.1.0   3/3   Degraded   -     26h
team    order-service   canary     v1.2.3   v1.2.4   4/4   Paused     25%   26h
team    web             rolling    v2.0.0   v2.0.0   2/2   Healthy    -     26h
`,
	})
}

func TestList_NothingFoundSaysSoOnStandardError(t *testing.T) {
	r := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", "list", "-l", "team=nobody")
	if r.err != nil || r.out != "" || r.errOut != "No resources found in team namespace.\n" {
		t.Errorf("got %q, %q, %v", r.out, r.errOut, r.err)
	}
}

func TestList_BadSelectorNamesIt(t *testing.T) {
	r := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", "list", "-l", "team in (a")
	if r.err == nil || !strings.HasPrefix(r.err.Error(), `invalid selector "team in (a"`) {
		t.Errorf("err = %v", r.err)
	}
}

func TestList_ColoursEachPhase(t *testing.T) {
	var b strings.Builder
	if err := core.PrintTable(&b, appTable([]platformv1.AppDeployment{*checkout(), *web()}, now),
		core.TableOptions{Color: true, Palette: palette}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{core.Red + "Degraded", core.Green + "Healthy"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%q", want, b.String())
		}
	}
	for _, phase := range []platformv1.Phase{platformv1.PhaseHealthy, platformv1.PhaseProgressing, platformv1.PhasePaused, platformv1.PhaseDegraded} {
		if palette[string(phase)] == "" {
			t.Errorf("phase %s has no colour", phase)
		}
	}
}

func TestList_ObjectFormats(t *testing.T) {
	checkOutputs(t, map[string]string{
		"list -o name": `
appdeployment.platform.example.com/checkout
appdeployment.platform.example.com/order-service
appdeployment.platform.example.com/web
`,
		"list -o jsonpath={.items[*].status.phase}": "Degraded Paused Healthy",
		"list -o custom-columns=NAME:.metadata.name,CANARY:.status.canary.version": `
NAME            CANARY
checkout        <none>
order-service   v1.2.4
web             <none>
`,
	})
}

func TestGet_ObjectFormats(t *testing.T) {
	checkOutputs(t, map[string]string{
		"get web -o wide": `
NAME   STRATEGY   STABLE   CURRENT   READY   PHASE     WEIGHT   AGE   IMAGE        MESSAGE
web    rolling    v2.0.0   v2.0.0    2/2     Healthy   -        26h   nginx:1.27   v2.0.0 (84f6b9c7d): 2/2 pods ready
`,
		"get web -o name": "appdeployment.platform.example.com/web\n",
		"get order-service -o jsonpath={.status.canary.step.total}":        "3",
		"history order-service -o jsonpath={.status.revisions[*].version}": "v1.2.3 v1.2.2 v1.2.1",
	})
}

// The fake client sets resourceVersions of its own.
var ignoreResourceVersion = cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion")

// withKind is obj with the apiVersion and kind that -o json must print.
func withKind(ad *platformv1.AppDeployment) platformv1.AppDeployment {
	ad.SetGroupVersionKind(platformv1.GroupVersion.WithKind(kind))
	return *ad
}

func TestListAndGet_JSONAndYAMLPrintTheObjects(t *testing.T) {
	type list struct {
		APIVersion string                     `json:"apiVersion"`
		Kind       string                     `json:"kind"`
		Metadata   metav1.ListMeta            `json:"metadata"`
		Items      []platformv1.AppDeployment `json:"items"`
	}
	wantList := list{APIVersion: "v1", Kind: "List",
		Items: []platformv1.AppDeployment{withKind(checkout()), withKind(orderService()), withKind(web())}}
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			checkDecoded(t, wantList, "list", "-o", format)
			checkDecoded(t, withKind(orderService()), "get", "order-service", "-o", format)
		})
	}
}

// checkDecoded runs a command and compares its output, decoded as JSON or
// YAML, with want.
func checkDecoded[T any](t *testing.T, want T, args ...string) {
	t.Helper()
	r := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", args...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	var got T
	if err := yaml.UnmarshalStrict([]byte(r.out), &got); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, r.out)
	}
	if diff := cmp.Diff(want, got, ignoreResourceVersion); diff != "" {
		t.Errorf("%v (-want +got):\n%s", args, diff)
	}
}

func TestCommands_RejectUnknownOutputBeforeTouchingTheCluster(t *testing.T) {
	calls := 0
	count := func() error { calls++; return errors.New("the cluster was reached") }
	c := newClient(t, interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return count()
		},
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return count() },
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return count()
		},
	})
	for _, args := range [][]string{
		{"list", "-o", "xml"}, {"get", "x", "-o", "xml"}, {"history", "x", "-o", "xml"},
		{"promote", "x", "-o", "xml"}, {"pause", "x", "-o", "xml"}, {"undo", "x", "-o", "xml"},
	} {
		r := execute(t, c, "", args...)
		if r.err == nil || !strings.Contains(r.err.Error(), "xml") {
			t.Errorf("%v: err = %v, want one about the output format", args, r.err)
		}
	}
	if calls != 0 {
		t.Errorf("the cluster was reached %d times", calls)
	}
}

func TestGet_MissingAppSaysWhereItLooked(t *testing.T) {
	r := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", "get", "batch")
	if r.err == nil || r.err.Error() != `appdeployment "batch" not found in namespace "team"` {
		t.Errorf("err = %v", r.err)
	}
}

func TestCompletion_OffersTheNamesOfTheNamespace(t *testing.T) {
	c := newClient(t, interceptor.Funcs{}, cluster()...)
	for _, verb := range []string{"get", "status", "history", "promote", "abort", "retry", "pause", "resume", "undo"} {
		r := execute(t, c, "", "__complete", verb, "")
		// The names, then cobra's directive: 4 is "no file completion".
		if want := "checkout\norder-service\nweb\n:4\n"; r.err != nil || r.out != want {
			t.Errorf("completion of %s = %q, %v; want %q", verb, r.out, r.err, want)
		}
	}
	if r := execute(t, c, "", "__complete", "get", "web", ""); r.out != ":4\n" {
		t.Errorf("completion after the name = %q, want nothing", r.out)
	}
}

func TestHelp_EveryPageIsACommands(t *testing.T) {
	clitest.EveryHelpPageUsed(t, Plugin)
}
