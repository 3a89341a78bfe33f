// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package guard is the webhook server's own defence, in front of every
// handler registered on it: a bound on the requests served at once, so that
// a burst of writes queues at the API server (where API Priority and
// Fairness shares it between tenants) instead of in the manager's memory,
// and optional client authentication on the admission paths, so that only
// the API server, presenting a certificate of a configured CA, is admitted.
package guard
