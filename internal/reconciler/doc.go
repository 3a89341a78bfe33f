// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package reconciler holds what every kind's reconciler is built on: Base,
// with the manager's client (every write of the kind tracked, see
// expectations.OwnWrites), the reader past the cache, the event recorder and
// the clock; the first step of every pass, reading the object and skipping
// a version this manager's own write replaced (Base.Read); and the start of
// the kind's controller, which drops the echoes of those writes
// (Base.Controller). A kind's reconciler embeds Base and adds what only it
// needs.
package reconciler
