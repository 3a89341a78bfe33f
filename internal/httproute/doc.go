// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package httproute reads and changes a Gateway API HTTPRoute the way a
// weighted canary needs: which of its rules send to the application's stable
// Service, what share of them the canary Service has, the backend weights
// that give the canary a share, and whether the route's gateways have
// accepted what it says.
//
// The functions are pure: the controller reads the route, changes a copy
// here and writes it back with an update on its resourceVersion. A route's
// rules and backendRefs are atomic lists, which server-side apply cannot
// share between owners, so the update changes only the weights (and the
// backendRef of the canary Service) of the rules it targets and leaves every
// other field as the route's owner wrote it.
package httproute
