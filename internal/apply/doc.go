// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.
// Package apply keeps a reconciler's children as it wants them, with
// server-side apply under the controller's own field manager: it writes
// only when the configuration changed or someone changed a field the
// operator sets (a repair), never takes over an object another owner
// controls, and backs off repairing a child someone keeps changing
// (RepairBackoff), reporting it with a ChildContested condition. Its hash
// annotation on each child lets it tell the three apart without reading
// past the cache.
package apply
