// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package core is what every kubectl plugin of this project shares, so that
// `kubectl stask` and the plugins that follow it connect, print, wait and
// fail in one way, the way kubectl does:
//
//   - Options: kubectl's connection flags (genericclioptions.ConfigFlags),
//     the streams, a clock, and a controller-runtime client built with the
//     plugin's scheme.
//   - PrintFlags: -o json|yaml|name|jsonpath|go-template|custom-columns|wide
//     through cli-runtime's printers, and PrintTable for the human tables
//     (metav1.Table through cli-runtime's table printer).
//   - Relative, UseColor, Colorize: ages through duration.HumanDuration,
//     colour only where a person reads it.
//   - WaitFor and Progress: waiting on one object through a watch.
//   - Explainer and ExitError: errors that say what to do, and exit codes.
//   - EventsAbout and WriteEvents: the events of one object.
//   - Plugin: the root command (kubectl's flags, streams, errors left to
//     Execute) and Main for the binary.
//   - Kind: finding the object a command names (On, Show, Describe),
//     listing a kind as kubectl get does (List, Scope) with its table
//     (Rows), which get -o wide prints too, and its error explanations.
//   - ObjectTable, Tree and Columns: the tables and trees commands draw.
//   - Help: the commands' help, a Markdown page each in the plugin's
//     help folder.
//
// A plugin's own package is a descriptor over these: its Plugin, its Kinds,
// and its commands, columns and descriptions. clitest runs a plugin in
// tests against a fake cluster.
package core
