// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package trafficsim

import (
	"fmt"
	"strings"
	"time"
)

// Behaviour is how the pods of one image answer the requests they get.
type Behaviour struct {
	// Idle pods get no requests at all, as an app nobody calls: the
	// analysis then has no samples to judge.
	Idle bool
	// ErrorRatio is the fraction of requests answered with code 500; the
	// rest are answered 200.
	ErrorRatio float64
	// Latency is how long every request takes.
	Latency time.Duration
}

// The behaviours an image tag can choose. The error ratios sit on either
// side of the thresholds canaries are usually given (0.5 % and up), and the
// latencies on either side of the usual p95 limits (0.25 s to 1 s), so a
// test's verdict does not hang on rounding.
var (
	// Healthy is what an image whose tag says nothing gets.
	Healthy = Behaviour{ErrorRatio: 0.001, Latency: 50 * time.Millisecond}
	// Bad is what an image whose tag contains "bad" gets.
	Bad = Behaviour{ErrorRatio: 0.1, Latency: 2 * time.Second}
	// Idle is what an image whose tag contains "idle" gets.
	Idle = Behaviour{Idle: true}
)

// BehaviourOf returns how the pods of image behave, by its tag: Bad when the
// tag contains "bad", Idle when it contains "idle", Healthy otherwise. Only
// the tag counts, not the repository, so that a marker in the path (the kwok
// Stages' example.com/kwok-unready/app) and a version in the tag combine.
func BehaviourOf(image string) Behaviour {
	tag := imageTag(image)
	switch {
	case strings.Contains(tag, "bad"):
		return Bad
	case strings.Contains(tag, "idle"):
		return Idle
	default:
		return Healthy
	}
}

// imageTag returns the tag of an image reference, "" when it has none. A
// colon before the last slash is a registry's port, not a tag; a digest
// (@sha256:...) is not part of the tag.
func imageTag(image string) string {
	if at := strings.IndexByte(image, '@'); at >= 0 {
		image = image[:at]
	}
	colon := strings.LastIndexByte(image, ':')
	if colon < 0 || strings.ContainsRune(image[colon:], '/') {
		return ""
	}
	return image[colon+1:]
}

// String describes the behaviour for logs: "idle", or the error ratio and
// latency.
func (b Behaviour) String() string {
	if b.Idle {
		return "idle"
	}
	return fmt.Sprintf("%g%% errors, %s latency", b.ErrorRatio*100, b.Latency)
}
