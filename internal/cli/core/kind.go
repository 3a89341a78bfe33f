// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"context"
	"reflect"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kind describes the kind a plugin's commands act on, T its objects and L
// its lists, so that core can find one object by the name a command was
// given, list them as kubectl get does, and explain the API's errors about
// them. A plugin holds one Kind per kind it drives.
//
// What the types say already (the kind's name, an empty object or list)
// Kind derives from T and L; a plugin writes only what is its own.
type Kind[T client.Object, L client.ObjectList] struct {
	// Explainer says what to do about the API's errors; its Install says how
	// to get the kind's CRD into a cluster that lacks it. The zero value is
	// CRDExplainer, right for every kind of this project.
	Explainer Explainer
	// Plural and Label name the kind in list's flags: "list Plural in every
	// namespace", "label selector, e.g. Label".
	Plural, Label string
	// Palette paints the words of the kind's tables that name a state.
	Palette Palette
	// Rows is the kind's table, a row an object of list: what list prints,
	// and get -o wide of one object. namespaces is the namespace part of
	// the scope (Scope.Namespaces), for reading what belongs to the
	// objects, which a selector written for this kind would not match.
	Rows func(ctx context.Context, o *Options, c client.Client, list L, namespaces []client.ListOption) (*metav1.Table, error)
}

// Name is the kind as the API spells it ("ScheduleTask"): the name of T's
// type, which the API's kinds share with their Go types. It names the kind
// in messages and is the regarding.kind of its events.
func (k *Kind[T, L]) Name() string {
	return reflect.TypeFor[T]().Elem().Name()
}

// New returns an empty object to read into.
func (k *Kind[T, L]) New() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}

// NewList returns an empty list to read into.
func (k *Kind[T, L]) NewList() L {
	return reflect.New(reflect.TypeFor[L]().Elem()).Interface().(L)
}

// Explain rewrites err, met while working on the object name in ns (""
// for a list), into one that says what to do (see Explainer).
func (k *Kind[T, L]) Explain(err error, name, ns string) error {
	return k.ExplainAbout(err, k.Name(), name, ns)
}

// ExplainAbout is Explain for an object of another kind the commands of
// this one read (a task's TaskRuns, a run's pod).
func (k *Kind[T, L]) ExplainAbout(err error, kind, name, ns string) error {
	e := k.Explainer
	if e == (Explainer{}) {
		e = CRDExplainer
	}
	return e.Explain(err, kind, name, ns)
}

// Get reads the object ns/name, with an error that says what to do.
func (k *Kind[T, L]) Get(ctx context.Context, c client.Client, ns, name string) (T, error) {
	obj := k.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		var none T
		return none, k.Explain(err, name, ns)
	}
	return obj, nil
}

// On makes cmd a command on the one object its argument names, which is
// what most commands are: it completes the argument with the names of the
// kind in the namespace, runs check (the -o flags, say) before reaching
// the cluster, so that a wrong command line costs no request, reads the
// object with Get and hands it to run. The object's namespace is the one
// to work in.
func (k *Kind[T, L]) On(o *Options, cmd *cobra.Command, check func() error,
	run func(ctx context.Context, c client.WithWatch, obj T) error) *cobra.Command {
	cmd.Args = cobra.ExactArgs(1)
	cmd.ValidArgsFunction = o.CompleteNames(func() client.ObjectList { return k.NewList() })
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		c, ns, err := o.Connect()
		if err != nil {
			return err
		}
		obj, err := k.Get(cmd.Context(), c, ns, args[0])
		if err != nil {
			return err
		}
		return run(cmd.Context(), c, obj)
	}
	return cmd
}

// Show makes cmd a command that shows the one object its argument names
// (see On), as kubectl get NAME does: with -o json, yaml, name, jsonpath
// and the like, the object itself through cli-runtime's printers; with no
// -o or -o wide, what human writes of it (pf tells it which).
func (k *Kind[T, L]) Show(o *Options, cmd *cobra.Command,
	human func(ctx context.Context, c client.WithWatch, obj T, pf *PrintFlags) error) *cobra.Command {
	printFlags := NewPrintFlags()
	cmd = k.On(o, cmd, printFlags.Validate, func(ctx context.Context, c client.WithWatch, obj T) error {
		if !printFlags.Human() {
			return printFlags.Print(o.Out(), o.Scheme, obj)
		}
		return human(ctx, c, obj, printFlags)
	})
	printFlags.AddFlags(cmd)
	return cmd
}

// Describe makes cmd a command that shows the one object its argument
// names as kubectl get NAME does (see Show): -o wide prints its row of the
// kind's table (Rows), as list would; no -o, what describe writes of it.
func (k *Kind[T, L]) Describe(o *Options, cmd *cobra.Command,
	describe func(ctx context.Context, c client.WithWatch, obj T) error) *cobra.Command {
	return k.Show(o, cmd, func(ctx context.Context, c client.WithWatch, obj T, pf *PrintFlags) error {
		if !pf.Wide() {
			return describe(ctx, c, obj)
		}
		list := k.NewList()
		if err := meta.SetList(list, []runtime.Object{obj}); err != nil {
			return err
		}
		t, err := k.Rows(ctx, o, c, list, []client.ListOption{client.InNamespace(obj.GetNamespace())})
		if err != nil {
			return err
		}
		return o.PrintTable(t, pf, false, k.Palette)
	})
}

// List makes cmd (its help; Use is "list", alias "ls") list the kind as
// kubectl get lists: in the namespace, or in every one with -A, the objects
// that -l selects; with -o, the list itself; for a person, the kind's
// table (Rows) of it, or kubectl's "No resources found" on standard error.
func (k *Kind[T, L]) List(o *Options, cmd *cobra.Command) *cobra.Command {
	var scope Scope
	printFlags := NewPrintFlags()
	cmd.Use, cmd.Aliases, cmd.Args = "list", []string{"ls"}, cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := printFlags.Validate(); err != nil {
			return err
		}
		c, ns, err := o.Connect()
		if err != nil {
			return err
		}
		scope.Namespace = ns
		opts, err := scope.ListOptions()
		if err != nil {
			return err
		}
		list := k.NewList()
		if err := c.List(cmd.Context(), list, opts...); err != nil {
			return k.Explain(err, "", ns)
		}
		if !printFlags.Human() {
			return printFlags.Print(o.Out(), o.Scheme, list)
		}
		if meta.LenList(list) == 0 {
			NoResources(o.IOStreams.ErrOut, ns, scope.AllNamespaces)
			return nil
		}
		t, err := k.Rows(cmd.Context(), o, c, list, scope.Namespaces())
		if err != nil {
			return err
		}
		return o.PrintTable(t, printFlags, scope.AllNamespaces, k.Palette)
	}
	cmd.Flags().BoolVarP(&scope.AllNamespaces, "all-namespaces", "A", false, "list "+k.Plural+" in every namespace")
	cmd.Flags().StringVarP(&scope.Selector, "selector", "l", "", "label selector, e.g. "+k.Label)
	printFlags.AddFlags(cmd)
	return cmd
}
