// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package clitest runs a kubectl plugin of the project in a test as its
// binary would run, against a fake cluster, so that every plugin's command
// tests stand on the same harness: a fixed clock (Now), a fake client that
// answers as the API server does where the plugins rely on it (field
// selectors on events, watches that list first), an empty kubeconfig so
// that nothing comes from the machine the test runs on, and the exit code
// core.Execute would give. It also holds the hostile text that every
// plugin's human output must print safely, and the check for it.
//
// It is a package of its own, not a _test.go file of core, because Go
// shares no _test.go code across packages.
package clitest
