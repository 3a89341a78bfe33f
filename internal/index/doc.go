// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.
// Package index registers the cache's field indexes, all in one place and
// before any controller starts, so no controller depends on another's setup
// for an index it reads. The index keys live beside the API types
// (api/v1), where both the registration and the readers find them.
package index
