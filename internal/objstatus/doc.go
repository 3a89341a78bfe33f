// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.
// Package objstatus writes an object's status the way every reconciler of
// the project does: rebuilt from observation, written once at the end of a
// pass and only when it changed, as an Update conditioned on the version
// read; and stamps conditions with the generation they describe.
package objstatus
