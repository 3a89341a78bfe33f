// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.
// Package predicates decides which watch events wake a reconciler and how
// urgently: status-only updates and a recorded child leaving the cache wake
// nothing, and a new object goes ahead of the queue (UrgentOnCreate). Under
// a burst every needless pass queues ahead of the passes that matter.
package predicates
