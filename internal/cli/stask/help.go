// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"embed"

	"github.com/example/platform-operator/internal/cli/core"
)

// helpPages are the commands' help, a Markdown page a command (see
// core.Help): the plugin's reference as much as its --help.
//
//go:embed help/*.md
var helpPages embed.FS

// help is the ScheduleTask commands' help.
var help = core.Help{Pages: helpPages, Dir: "help"}
