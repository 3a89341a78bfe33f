// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/cli/core/clitest"
)

// configMaps is a Kind over ConfigMaps, which every scheme knows, so that
// the plugin core is tested without the project's kinds.
var configMaps = &core.Kind[*corev1.ConfigMap, *corev1.ConfigMapList]{
	Explainer: core.Explainer{Install: "it is built in"},
	Plural:    "ConfigMaps",
	Label:     "app=web",
	Rows: func(ctx context.Context, _ *core.Options, c client.Client, list *corev1.ConfigMapList, namespaces []client.ListOption) (*metav1.Table, error) {
		// What a table may read besides the listed objects: every
		// ConfigMap of the namespace scope, whatever -l says.
		var all corev1.ConfigMapList
		if err := c.List(ctx, &all, namespaces...); err != nil {
			return nil, err
		}
		t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name"}, {Name: "In Scope", Type: "integer"}}}
		for i := range list.Items {
			t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{list.Items[i].Name, len(all.Items)},
				Object: runtime.RawExtension{Object: &list.Items[i]}})
		}
		return t, nil
	},
}

// plugin is a small plugin over configMaps: list, show and a command on one
// ConfigMap that says which it read.
var plugin = &core.Plugin{
	Help: core.Help{Pages: fstest.MapFS{"root.md": {Data: []byte("# kubectl cm\n\nConfigMaps\n")}}},
	Commands: func(o *core.Options) []*cobra.Command {
		list := configMaps.List(o, &cobra.Command{Short: "List ConfigMaps"})
		show := configMaps.Show(o, &cobra.Command{Use: "get NAME"},
			func(_ context.Context, _ client.WithWatch, cm *corev1.ConfigMap, pf *core.PrintFlags) error {
				_, err := fmt.Fprintf(o.Out(), "%s/%s wide=%t\n", cm.Namespace, cm.Name, pf.Wide())
				return err
			})
		describe := configMaps.Describe(o, &cobra.Command{Use: "describe NAME"},
			func(_ context.Context, _ client.WithWatch, cm *corev1.ConfigMap) error {
				_, err := fmt.Fprintf(o.Out(), "described %s/%s\n", cm.Namespace, cm.Name)
				return err
			})
		touch := configMaps.On(o, &cobra.Command{Use: "touch NAME"}, func() error { return nil },
			func(_ context.Context, _ client.WithWatch, cm *corev1.ConfigMap) error {
				_, err := fmt.Fprintf(o.Out(), "touched %s\n", cm.Name)
				return err
			})
		return []*cobra.Command{list, show, describe, touch}
	},
}

func configMap(ns, name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func newClient(t *testing.T) client.WithWatch {
	scheme, err := plugin.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return clitest.NewClient(t, scheme, interceptor.Funcs{}, []client.Object{
		configMap(clitest.Namespace, "web", map[string]string{"app": "web"}),
		configMap(clitest.Namespace, "db", map[string]string{"app": "db"}),
		configMap("other", "elsewhere", map[string]string{"app": "web"}),
	})
}

func TestPlugin_ListsInTheScopeOfNamespaceAndSelector(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		out     string
		errOut  string
		wantErr string
	}{
		{args: []string{"list"}, out: "NAME   IN SCOPE\ndb     2\nweb    2\n"},
		{args: []string{"ls", "-l", "app=web"}, out: "NAME   IN SCOPE\nweb    2\n"},
		{args: []string{"list", "-A", "-l", "app=web"}, out: "NAMESPACE   NAME        IN SCOPE\nother       elsewhere   3\nteam        web         3\n"},
		{args: []string{"list", "-l", "app=none"}, errOut: "No resources found in team namespace.\n"},
		{args: []string{"list", "-A", "-l", "app=none"}, errOut: "No resources found\n"},
		{args: []string{"list", "-l", "app in (a"}, wantErr: `invalid selector "app in (a"`},
		{args: []string{"list", "-l", "app=db", "-o", "name"}, out: "configmap/db\n"},
		{args: []string{"list", "extra"}, wantErr: `unknown command "extra"`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := clitest.Execute(t, plugin, newClient(t), "", tt.args...)
			if tt.wantErr != "" {
				if r.Err == nil || !strings.Contains(r.Err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one with %q", r.Err, tt.wantErr)
				}
				return
			}
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if diff := cmp.Diff(tt.out, r.Out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if r.ErrOut != tt.errOut {
				t.Errorf("standard error %q, want %q", r.ErrOut, tt.errOut)
			}
		})
	}
}

func TestPlugin_ResolvesTheNamedObjectInTheNamespace(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		out     string
		wantErr string
		code    int
	}{
		{args: []string{"get", "web"}, out: "team/web wide=false\n"},
		{args: []string{"get", "web", "-o", "wide"}, out: "team/web wide=true\n"},
		{args: []string{"get", "web", "-o", "name"}, out: "configmap/web\n"},
		// Describe's -o wide is the object's row of list, its rows read in
		// its namespace alone.
		{args: []string{"describe", "web"}, out: "described team/web\n"},
		{args: []string{"describe", "web", "-o", "wide"}, out: "NAME   IN SCOPE\nweb    2\n"},
		{args: []string{"describe", "web", "-o", "name"}, out: "configmap/web\n"},
		{args: []string{"touch", "db"}, out: "touched db\n"},
		// Not in -n's namespace, so not found, with an error that says where.
		{args: []string{"touch", "elsewhere"}, wantErr: `configmap "elsewhere" not found in namespace "team"`, code: 1},
		{args: []string{"get", "web", "-o", "bogus"}, wantErr: "bogus", code: 1},
		{args: []string{"touch"}, wantErr: "accepts 1 arg(s), received 0", code: 1},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := clitest.Execute(t, plugin, newClient(t), "", tt.args...)
			if r.Code() != tt.code {
				t.Errorf("exit code %d (%v), want %d", r.Code(), r.Err, tt.code)
			}
			if tt.wantErr != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want one with %q", r.Err, tt.wantErr)
			}
			if r.Out != tt.out {
				t.Errorf("output %q, want %q", r.Out, tt.out)
			}
		})
	}
}

func TestPlugin_CompletesNamesOfTheKindInTheNamespace(t *testing.T) {
	r := clitest.Execute(t, plugin, newClient(t), "", "__complete", "touch", "")
	if want := "db\nweb\n:4\n"; !strings.HasPrefix(r.Out, want) {
		t.Errorf("completion %q, want it to start with %q", r.Out, want)
	}
}

func TestPlugin_RootHasKubectlsFlagsAndPrintsNoUsageOnErrors(t *testing.T) {
	root := plugin.Root(core.NewOptions(genericiooptions.NewTestIOStreamsDiscard(), nil))
	for _, flag := range []string{"kubeconfig", "context", "namespace", "server", "token"} {
		if root.PersistentFlags().Lookup(flag) == nil {
			t.Errorf("the root has no --%s", flag)
		}
	}
	if !root.SilenceUsage || !root.SilenceErrors {
		t.Errorf("SilenceUsage %t, SilenceErrors %t: want both, so that core.Execute prints an error once", root.SilenceUsage, root.SilenceErrors)
	}
	r := clitest.Execute(t, plugin, newClient(t), "", "touch", "ghost")
	if r.Err == nil || r.Out != "" || r.ErrOut != "" {
		t.Errorf("a failed command wrote %q and %q (error %v); want nothing, the error left to core.Execute", r.Out, r.ErrOut, r.Err)
	}
}
