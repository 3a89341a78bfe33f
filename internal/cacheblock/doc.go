// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.
// Package cacheblock says what the manager's cache holds: each kind's
// controllers contribute a Block (the built-in kinds they read, the label
// selecting the operator's children, a transform that slims or stubs each
// object), and Options merges them into the cache's options. Only objects
// the operator's kinds control are kept whole; anything else carrying the
// operator's labels is a Stub. It also starts the informers a controller
// needs before the manager starts (WarmInformers) and makes the
// metadata-only cache of the children the operator did not make
// (NewOthersCache).
package cacheblock
