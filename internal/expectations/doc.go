// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.
// Package expectations remembers what this manager has just done and its
// cache cannot show yet: Expectations holds keys with a time to live (a Job
// deleted, a run recorded), and OwnWrites the updates this manager made, so
// a pass that starts from a version its own write replaced is skipped and
// the watch event echoing that write wakes nothing. TrackWrites wraps a
// client so every update of the reconciled kind is recorded, with no
// bookkeeping at the call sites.
package expectations
