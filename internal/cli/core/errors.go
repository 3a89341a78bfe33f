// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// ExitError ends a command with a chosen exit code, for commands whose code
// carries meaning to scripts (a run that failed, a wait that timed out, a
// manifest with problems). Any other error exits 1.
type ExitError struct {
	// Code is the process's exit code.
	Code int
	// Err is what went wrong, printed as "error: ..." before exiting.
	Err error
}

// Error is the wrapped error's message.
func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error, so errors.Is and errors.As see through.
func (e *ExitError) Unwrap() error { return e.Err }

// Execute runs a plugin's root command and returns the process's exit code:
// 0, an ExitError's code, or 1. It prints the error itself, as kubectl does
// ("error: ..."), because plugins silence cobra's own printing to keep usage
// text out of runtime failures.
func Execute(root *cobra.Command) int {
	err := root.Execute()
	if err == nil {
		return 0
	}
	// Errors quote status messages and the API server's answers, which
	// quote what a tenant wrote: escaped, line by line.
	fmt.Fprintln(root.ErrOrStderr(), "error:", SafeLines(err.Error()))
	if exit, ok := errors.AsType[*ExitError](err); ok {
		return exit.Code
	}
	return 1
}

// Explainer turns the API server's errors into messages that say what to do
// next: the bare errors name REST paths and RBAC verbs that a user of the
// plugin never typed.
type Explainer struct {
	// Install says how to install the plugin's CRDs, for when the API is
	// missing from the cluster.
	Install string
}

// CRDExplainer is the Explainer of every kind of this project: one Helm
// chart, or make install, installs all of their CRDs, so a missing API is
// fixed the same way whichever plugin meets it.
var CRDExplainer = Explainer{Install: "install the CRDs first (make install, or the Helm chart charts/platform-operator)"}

// Explain rewrites err, met while working on the kind's object name in ns
// (name is empty for a list), and returns other errors unchanged.
func (e Explainer) Explain(err error, kind, name, ns string) error {
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && name == "":
		// A list that is not found is a resource the server does not serve.
		return fmt.Errorf("the %s API is not installed in this cluster: %s", kind, e.Install)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s %q not found in namespace %q", strings.ToLower(kind), name, ns)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%w\nyour user may not do this: ask a cluster admin for a Role that grants it "+
			"(`kubectl auth can-i --list -n %s` shows what you may do)", err, ns)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w\nthe cluster did not accept your credentials: check the context "+
			"(`kubectl config current-context`) or log in again", err)
	}
	return err
}
