// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/validation"
	"github.com/example/platform-operator/internal/yamldoc"
)

func newLintCommand(o *options) *cobra.Command {
	return help.Set("lint", &cobra.Command{
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			var total lintCount
			for _, file := range args {
				n, err := o.lintFile(file)
				if err != nil {
					return err
				}
				total.add(n)
			}
			if total.problems > 0 {
				return &core.ExitError{Code: 1, Err: fmt.Errorf("%d problem(s) found", total.problems)}
			}
			fmt.Fprintf(o.Out(), "%d file(s) OK: %d AppDeployment(s) checked, %d warning(s), %d document(s) skipped\n",
				len(args), total.checked, total.warnings, total.skipped)
			return nil
		},
	})
}

// lintCount counts what lint found.
type lintCount struct {
	checked, problems, warnings, skipped int
}

func (c *lintCount) add(n lintCount) {
	c.checked += n.checked
	c.problems += n.problems
	c.warnings += n.warnings
	c.skipped += n.skipped
}

// lintFile checks every AppDeployment in one file, "-" for standard input,
// and prints each finding as `file: name: field: what is wrong (value)`,
// `file: name: warning: ...` or `file: skipped: Kind name (why)`.
func (o *options) lintFile(file string) (lintCount, error) {
	in, err := o.Open(file)
	if err != nil {
		return lintCount{}, fmt.Errorf("%s: %w", file, err)
	}
	defer func() { _ = in.Close() }()
	docs, err := yamldoc.Decode(in)
	if err != nil {
		return lintCount{}, fmt.Errorf("%s: %w", file, err)
	}
	// Strict, so that a misspelt or repeated field, which the API server
	// would drop or take the last of, is a problem rather than a setting
	// silently lost; its errors name the field's path.
	decoder := serializer.NewCodecFactory(o.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var n lintCount
	for i, raw := range docs {
		name := yamldoc.Name(raw)
		if name == "" {
			name = fmt.Sprintf("document %d", i+1)
		}
		if why := notAnAppDeployment(raw); why != "" {
			fmt.Fprintf(o.Out(), "%s: skipped: %s (%s)\n", file, strings.TrimSpace(yamldoc.Kind(raw)+" "+name), why)
			n.skipped++
			continue
		}
		n.checked++
		var findings []string
		var ad platformv1.AppDeployment
		doc, err := json.Marshal(raw)
		if err == nil {
			_, _, err = decoder.Decode(doc, nil, &ad)
		}
		if strict, ok := runtime.AsStrictDecodingError(err); ok {
			for _, e := range strict.Errors() {
				findings = append(findings, e.Error())
			}
		} else if err != nil {
			findings = append(findings, err.Error())
		}
		if err == nil || runtime.IsStrictDecodingError(err) {
			if ad.Namespace == "" {
				// Where kubectl apply would put it: the criteria may
				// read that namespace's series only.
				ad.Namespace = o.lintNamespace()
			}
			errs, warnings := validation.AppDeployment(&ad, analysis.Scope{})
			findings = append(findings, validation.Format(errs)...)
			n.warnings += len(warnings)
			for _, w := range warnings {
				fmt.Fprintf(o.Out(), "%s: %s: warning: %s\n", file, name, w)
			}
		}
		for _, f := range findings {
			fmt.Fprintf(o.Out(), "%s: %s: %s\n", file, name, f)
		}
		n.problems += len(findings)
	}
	return n, nil
}

// lintNamespace is the namespace of a manifest that names none: the
// current context's, as kubectl apply would use, or default when there is
// no kubeconfig to read it from (lint needs no cluster).
func (o *options) lintNamespace() string {
	if ns, err := o.Namespace(); err == nil && ns != "" {
		return ns
	}
	return "default"
}

// notAnAppDeployment says why a document is not one lint checks, or "".
func notAnAppDeployment(raw map[string]any) string {
	apiVersion, _ := raw["apiVersion"].(string)
	switch k := yamldoc.Kind(raw); {
	case k == "":
		return "no kind: not a Kubernetes object"
	case k == "ScheduleTask":
		return "not an AppDeployment; use kubectl stask lint"
	case k != kind:
		return "not an AppDeployment"
	case apiVersion != platformv1.GroupVersion.String():
		return fmt.Sprintf("apiVersion %q, not %s", apiVersion, platformv1.GroupVersion)
	}
	return ""
}
