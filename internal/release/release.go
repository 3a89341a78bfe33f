// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package release holds the rules of an AppDeployment's release that the
// controller, the admission webhook and `kubectl appdeploy` must agree on:
// which version a spec names, how a canary's steps read, and how many pods
// a canary weight comes to. Nothing here talks to a cluster.
package release

import (
	"math"
	"regexp"

	"github.com/distribution/reference"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// versionPattern is the form of spec.version (the schema repeats it): v and
// three numbers, each of any number of digits without leading zeros.
var versionPattern = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// IsVersion reports whether s is a version as spec.version takes it.
func IsVersion(s string) bool { return versionPattern.MatchString(s) }

// Version is the version a spec names: spec.version, else the image's tag
// when it is a version, else "".
func Version(spec *platformv1.AppDeploymentSpec) string {
	if spec.Version != "" {
		return spec.Version
	}
	named, err := reference.ParseNormalizedNamed(spec.Image)
	if err != nil {
		return ""
	}
	if tagged, ok := named.(reference.Tagged); ok && IsVersion(tagged.Tag()) {
		return tagged.Tag()
	}
	return ""
}

// Replicas is spec.replicas with its default.
func Replicas(spec *platformv1.AppDeploymentSpec) int32 {
	return ptr.Deref(spec.Replicas, 1)
}

// Steps are the canary's steps as the controller follows them: canaryPercent
// is one step of that weight, and each step's approval is filled in (Manual
// when nothing judges the step, that is no criteria and no pause; Auto
// otherwise). Nil when the strategy is not a canary.
func Steps(s *platformv1.Strategy) []platformv1.CanaryStep {
	if s.Type != platformv1.StrategyCanary {
		return nil
	}
	steps := s.Steps
	if len(steps) == 0 && s.CanaryPercent > 0 {
		steps = []platformv1.CanaryStep{{Weight: s.CanaryPercent}}
	}
	out := make([]platformv1.CanaryStep, len(steps))
	for i, st := range steps {
		out[i] = st
		if st.Approval == "" {
			out[i].Approval = platformv1.ApprovalAuto
			if len(s.CanaryCriteria) == 0 && ptr.Deref(st.PauseSeconds, 0) == 0 {
				out[i].Approval = platformv1.ApprovalManual
			}
		}
	}
	return out
}

// CanaryReplicas is how many canary pods a weight (percent) of replicas
// comes to: the nearest whole number, at least 1 and at most replicas - 1,
// so that both versions run. With one replica the canary is one pod beside
// it (a surge), and with none there is no canary.
func CanaryReplicas(weight, replicas int32) int32 {
	switch {
	case replicas <= 0:
		return 0
	case replicas == 1:
		return 1
	}
	n := int32(math.Round(float64(weight) * float64(replicas) / 100))
	return min(max(n, 1), replicas-1)
}

// StableReplicas is how many stable pods run beside canary canary pods once
// the canary's pods are ready: the rest of replicas, and all of them while
// the canary is a surge pod (one replica).
func StableReplicas(canary, replicas int32) int32 {
	if replicas <= 1 {
		return replicas
	}
	return replicas - canary
}

// Weight is the share, in whole percent, that canary pods have of all pods.
func Weight(canary, total int32) int32 {
	if total <= 0 {
		return 0
	}
	return int32(math.Round(float64(canary) * 100 / float64(total)))
}
