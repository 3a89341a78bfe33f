// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package provenance proves that a Job came from a ScheduleTask. The
// operator signs the pod template it renders into a task's CronJob: an
// HMAC-SHA256, under a key only the operator holds, of the task's UID and a
// hash of the template as the API server stores it. The signature sits on
// the CronJob's job template, so every Job made from the template (by the
// CronJob controller on schedule, or by the operator for a manual run)
// carries it; a Job whose pod template differs from one the operator
// rendered for that task, or that carries no signature, does not verify.
// Nothing is remembered: a Job made from the template of a minute ago, just
// before the task changed, still carries the signature of that template.
//
// The template is compared as the API server stores it, with the labels the
// API server adds to every Job's pod template (job-name, controller-uid and
// their batch.kubernetes.io forms) left out. What the operator renders is
// not what the API server stores (it defaults imagePullPolicy, dnsPolicy,
// schedulerName and more), so the operator signs its rendering with those
// defaults applied (Defaulted), and checks what the API server returned.
//
// Compare Tekton's CVE-2023-37264, where a result could be forged by a pod
// that the controller trusted for its labels alone.
package provenance
