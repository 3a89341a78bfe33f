// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"github.com/spf13/cobra"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

// kind is the kind's name in messages and in the events' regarding.kind.
const kind = "AppDeployment"

// apps is what core needs to know of AppDeployments to find one by name,
// list them and explain the API's errors about them.
var apps = &core.Kind[*platformv1.AppDeployment, *platformv1.AppDeploymentList]{
	Plural:  "AppDeployments",
	Label:   "team=payments",
	Palette: palette,
	Rows:    appRows,
}

// Colours that core has no name for. Paused asks a person for something;
// Progressing is on its way.
const (
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
)

// palette colours the phases in tables and in get.
var palette = core.Palette{
	string(platformv1.PhaseHealthy):     core.Green,
	string(platformv1.PhaseProgressing): cyan,
	string(platformv1.PhasePaused):      yellow,
	string(platformv1.PhaseDegraded):    core.Red,
}

// options are core's, for the AppDeployment commands.
type options struct {
	*core.Options
}

// Plugin is `kubectl appdeploy` as core runs it: its help and the
// AppDeployment commands. cmd/kubectl-appdeploy runs it with Main.
var Plugin = &core.Plugin{
	Help:     help,
	Commands: commands,
}

// commands are the AppDeployment commands on o.
func commands(co *core.Options) []*cobra.Command {
	o := &options{Options: co}
	cmds := []*cobra.Command{
		apps.List(co, help.Command("list")),
		newGetCommand(o),
		newStatusCommand(o),
		newHistoryCommand(o),
	}
	cmds = append(cmds, newRequestCommands(o)...)
	return append(cmds,
		newPauseCommand(o, true),
		newPauseCommand(o, false),
		newUndoCommand(o),
		newLintCommand(o),
	)
}
