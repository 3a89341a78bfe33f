// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package testutil

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Lengths of each command and args entry in MaxSizeScheduleTask, and of
// each env name; the env values take what is left of the total.
const (
	maxSizeCommandEntry = 16
	maxSizeArgsEntry    = 32
	maxSizeEnvName      = 32
)

// MaxSizeScheduleTask returns a valid task whose command, args and env are
// at their limits: every list holds its maxItems entries, and together they
// hold exactly MaxCommandArgsEnvLength characters, the most a task may.
// The benchmark's memory figure and the bounds tests use it.
func MaxSizeScheduleTask(namespace, name string, opts ...ScheduleTaskOption) *platformv1.ScheduleTask {
	st := NewScheduleTask(namespace, name, opts...)
	st.Spec.Command = padded(platformv1.MaxCommandItems, maxSizeCommandEntry, "c%03d-")
	st.Spec.Args = padded(platformv1.MaxArgsItems, maxSizeArgsEntry, "a%03d-")
	left := platformv1.MaxCommandArgsEnvLength -
		platformv1.MaxCommandItems*maxSizeCommandEntry - platformv1.MaxArgsItems*maxSizeArgsEntry
	names := padded(platformv1.MaxEnvItems, maxSizeEnvName, "VAR_%03d_")
	st.Spec.Env = make([]corev1.EnvVar, platformv1.MaxEnvItems)
	for i := range st.Spec.Env {
		// The last value takes the remainder, so the total is exact.
		n := left/platformv1.MaxEnvItems - maxSizeEnvName
		if i == platformv1.MaxEnvItems-1 {
			n = left - (platformv1.MaxEnvItems-1)*(left/platformv1.MaxEnvItems) - maxSizeEnvName
		}
		st.Spec.Env[i] = corev1.EnvVar{Name: names[i], Value: pad(fmt.Sprintf("v%03d-", i), n)}
	}
	return st
}

// padded returns n strings of length size, each the format applied to its
// index and filled up with "x".
func padded(n, size int, format string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = pad(fmt.Sprintf(format, i), size)
	}
	return out
}

// pad fills s up to size characters with "x".
func pad(s string, size int) string {
	return s + strings.Repeat("x", max(0, size-len(s)))
}
