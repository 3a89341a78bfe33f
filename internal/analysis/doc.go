// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package analysis measures a canary against Prometheus: it renders a
// criterion's queries for one track of an application (stable or canary),
// asks Prometheus for their value at one instant, and judges the value
// against the criterion's threshold or CEL successCondition and, when the
// criterion compares to stable, against the stable track's value.
//
// Every measurement ends in one of five results, and the split is the
// product's promise: Pass and Fail judge the canary; NoData means there is
// nothing to judge (no traffic, too few samples, NaN); Error means
// Prometheus did not answer, which a controller waits out; Invalid means the
// query itself is wrong, which waiting never fixes. Nothing here talks to
// the cluster, keeps state between measurements, or blocks longer than the
// provider's per-query timeout, so the controller can call it from
// Reconcile, concurrently for many applications.
//
// The admission webhook calls CheckQuery and CheckCondition, so a query that
// does not parse or a condition that is not a bool is refused before it ever
// reaches Prometheus.
package analysis
