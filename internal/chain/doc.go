// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.
// Package chain builds the chain every reconciler of the project runs in:
// waiting for the whole cache to sync, a timeout per pass, metrics, a trace
// span, and a log line with the pass's duration and result at V(1). A kind
// adds its reconciler once, through Wrap, instead of writing the chain out.
package chain
