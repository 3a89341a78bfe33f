// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"github.com/spf13/cobra"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

// tasks is what core needs to know of ScheduleTasks to find one by name,
// list them and explain the API's errors about them (ExplainAbout serves
// for TaskRuns and pods too).
var tasks = &core.Kind[*platformv1.ScheduleTask, *platformv1.ScheduleTaskList]{
	Plural:  "tasks",
	Label:   "team=data",
	Palette: palette,
	Rows:    taskRows,
}

// palette colours the outcomes of runs in tables.
var palette = core.Palette{
	string(platformv1.TaskRunSucceeded): core.Green,
	string(platformv1.TaskRunFailed):    core.Red,
}

// options are core's, for the ScheduleTask commands.
type options struct {
	*core.Options
}

// Plugin is `kubectl stask` as core runs it: its help and the ScheduleTask
// commands. cmd/kubectl-stask runs it with Main.
var Plugin = &core.Plugin{
	Help: help,
	Commands: func(co *core.Options) []*cobra.Command {
		o := &options{Options: co}
		return []*cobra.Command{
			tasks.List(co, help.Command("list")),
			newGetCommand(o),
			newHistoryCommand(o),
			newLogsCommand(o),
			newRunCommand(o),
			newBackfillCommand(o),
			newSuspendCommand(o, true),
			newSuspendCommand(o, false),
			newNextCommand(o),
			newLintCommand(o),
		}
	},
}
