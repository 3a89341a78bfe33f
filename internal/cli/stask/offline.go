// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	sigsyaml "sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/schedule"
	"github.com/example/platform-operator/internal/validation"
	"github.com/example/platform-operator/internal/yamldoc"
)

func newNextCommand(o *options) *cobra.Command {
	var zone, task string
	var count int
	cmd := help.Set("next", &cobra.Command{
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			expr := args[0]
			if schedule.HasSpread(expr) {
				ns, name, ok := strings.Cut(task, "/")
				if !ok || ns == "" || name == "" {
					return fmt.Errorf("%q spreads with H, which picks its values from the task's namespace and name: "+
						"give them with --task NAMESPACE/NAME", expr)
				}
				var err error
				if expr, err = schedule.Effective(expr, ns, name); err != nil {
					return err
				}
				fmt.Fprintf(o.Out(), "effective schedule: %s\n", expr)
			}
			s, err := schedule.Parse(expr, zone)
			if err != nil {
				return err
			}
			now := o.Now()
			times := s.NextN(now, count)
			if len(times) == 0 {
				return fmt.Errorf("%q never fires", expr)
			}
			for _, t := range times {
				fmt.Fprintf(o.Out(), "%s  (%s)\n", t.Format(time.RFC3339), core.Relative(t, now))
			}
			return nil
		},
	})
	cmd.Flags().StringVar(&zone, "time-zone", "", "IANA time zone the schedule is read in (UTC when empty)")
	cmd.Flags().IntVarP(&count, "count", "c", 5, "how many run times to print")
	cmd.Flags().StringVar(&task, "task", "", "NAMESPACE/NAME of the task an expression with H is for")
	return cmd
}

func newLintCommand(o *options) *cobra.Command {
	return help.Set("lint", &cobra.Command{
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			problems := 0
			for _, file := range args {
				n, err := lintFile(o, file)
				if err != nil {
					return err
				}
				problems += n
			}
			if problems > 0 {
				return &core.ExitError{Code: 1, Err: fmt.Errorf("%d problem(s) found", problems)}
			}
			fmt.Fprintf(o.Out(), "%d file(s) OK\n", len(args))
			return nil
		},
	})
}

// lintFile checks every ScheduleTask in one file and prints each problem as
// `file: name: field: what is wrong (value)`; each document of another kind
// is reported as skipped, so that a file lint passed is never taken for one
// it checked.
func lintFile(o *options, file string) (int, error) {
	in, err := o.Open(file)
	if err != nil {
		return 0, err
	}
	defer func() { _ = in.Close() }()
	docs, err := yamldoc.Decode(in)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", file, err)
	}
	problems := 0
	for i, raw := range docs {
		if why := notChecked(raw); why != "" {
			what := strings.TrimSpace(yamldoc.Kind(raw) + " " + yamldoc.Name(raw))
			if what == "" {
				what = fmt.Sprintf("document %d", i+1)
			}
			fmt.Fprintf(o.Out(), "%s: skipped: %s (%s)\n", file, what, why)
			continue
		}
		doc, _ := sigsyaml.Marshal(raw)
		var st platformv1.ScheduleTask
		if err := sigsyaml.UnmarshalStrict(doc, &st); err != nil {
			fmt.Fprintf(o.Out(), "%s: %v\n", file, err)
			problems++
			continue
		}
		for _, line := range validation.Format(validation.ScheduleTask(&st)) {
			fmt.Fprintf(o.Out(), "%s: %s: %s\n", file, st.Name, line)
			problems++
		}
	}
	return problems, nil
}

// notChecked says why lint does not check a document, or "" for a
// ScheduleTask. TaskRuns are not checked offline: admission checks them
// against the cluster (their task, the user's right to run it).
func notChecked(raw map[string]any) string {
	switch yamldoc.Kind(raw) {
	case "ScheduleTask":
		return ""
	case "AppDeployment":
		return "not a ScheduleTask; use kubectl appdeploy lint"
	case "":
		return "no kind: not a Kubernetes object"
	}
	return "not a ScheduleTask"
}
