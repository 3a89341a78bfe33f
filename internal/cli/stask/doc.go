// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package stask implements `kubectl stask`, the kubectl plugin for
// ScheduleTasks and their TaskRuns: listing, describing and driving them,
// and checking schedules and manifests offline. What any plugin of the
// project shares (the root command and connection flags, finding and
// listing objects, printers, tables and trees, waiting, errors) is in
// internal/cli/core; this package holds the ScheduleTask commands and their
// columns only, as a descriptor over core (Plugin, and the Kind tasks).
// cmd/kubectl-stask runs Plugin.
package stask
