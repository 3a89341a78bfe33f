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

package appdeploy

import (
	"fmt"

	"github.com/spf13/cobra"
	sigsyaml "sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/validation"
	"github.com/example/platform-operator/internal/yamldoc"
)

func newLintCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "lint FILE...",
		Short: "Check AppDeployment manifests offline, with the admission webhook's rules",
		Long: `Check AppDeployment manifests without a cluster, with the rules the operator's
admission webhook applies: the name, image references and versions, ranges,
the health check, which strategy fields go together, a canary's steps and
criteria. Every document of each file is read ("-" reads standard input);
documents of other kinds are reported as skipped. Warnings (a canary weight
that the replica count cannot give) are printed and do not fail.
Exits 1 when a manifest has a problem.`,
		Example: `  kubectl appdeploy lint deploy/order-service.yaml
  kustomize build deploy/ | kubectl appdeploy lint -`,
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
	}
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
	var docs []map[string]any
	var err error
	if file == "-" {
		docs, err = yamldoc.Decode(o.IOStreams.In)
	} else {
		docs, err = yamldoc.ReadFile(file)
	}
	if err != nil {
		return lintCount{}, fmt.Errorf("%s: %w", file, err)
	}
	var n lintCount
	say := func(name, format string, args ...any) {
		fmt.Fprintf(o.Out(), "%s: %s: %s\n", file, name, fmt.Sprintf(format, args...))
	}
	for i, raw := range docs {
		name := yamldoc.Name(raw)
		if name == "" {
			name = fmt.Sprintf("document %d", i+1)
		}
		if why := notAnAppDeployment(raw); why != "" {
			fmt.Fprintf(o.Out(), "%s: skipped: %s %s (%s)\n", file, core.OrDash(yamldoc.Kind(raw)), name, why)
			n.skipped++
			continue
		}
		n.checked++
		doc, err := sigsyaml.Marshal(raw)
		if err != nil {
			return n, fmt.Errorf("%s: %s: %w", file, name, err)
		}
		var ad platformv1.AppDeployment
		// Strict, so that a misspelt field, which the API server would
		// drop, is a problem rather than a setting silently lost.
		if err := sigsyaml.UnmarshalStrict(doc, &ad); err != nil {
			say(name, "%v", err)
			n.problems++
			continue
		}
		errs, warnings := validation.AppDeployment(&ad)
		for _, line := range validation.Format(errs) {
			say(name, "%s", line)
			n.problems++
		}
		for _, w := range warnings {
			say(name, "warning: %s", w)
			n.warnings++
		}
	}
	return n, nil
}

// notAnAppDeployment says why a document is not one lint checks, or "".
func notAnAppDeployment(raw map[string]any) string {
	apiVersion, _ := raw["apiVersion"].(string)
	switch k := yamldoc.Kind(raw); {
	case k == "ScheduleTask":
		return "not an AppDeployment; use kubectl stask lint"
	case k != kind:
		return "not an AppDeployment"
	case apiVersion != platformv1.GroupVersion.String():
		return fmt.Sprintf("apiVersion %q, not %s", apiVersion, platformv1.GroupVersion)
	}
	return ""
}
