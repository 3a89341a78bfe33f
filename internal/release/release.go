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

// Progressive reports whether the strategy releases a new version beside
// the old one, step by step: a canary or a blue-green release.
func Progressive(s *platformv1.Strategy) bool {
	return s.Type == platformv1.StrategyCanary || s.Type == platformv1.StrategyBlueGreen
}

// Track is the track of a progressive release's new pods: the canary's, or
// a blue-green release's preview; "" for the other strategies.
func Track(s *platformv1.Strategy) string {
	switch s.Type {
	case platformv1.StrategyCanary:
		return platformv1.TrackCanary
	case platformv1.StrategyBlueGreen:
		return platformv1.TrackPreview
	}
	return ""
}

// Suffix ends the name of the Deployment, and of the Service of a
// weighted release, of the new track's pods: -canary, or a blue-green
// release's -preview.
func Suffix(s *platformv1.Strategy) string {
	if s.Type == platformv1.StrategyBlueGreen {
		return platformv1.PreviewSuffix
	}
	return platformv1.CanarySuffix
}

// Blue-green steps: the preview runs beside the stable pods, then the
// Service selects it while the old pods wait.
const (
	BlueGreenPreview  int32 = 0
	BlueGreenSwitched int32 = 1
)

// Steps are the release's steps as the controller follows them: a canary's
// canaryPercent is one step of that weight, and each step's approval is
// filled in (Manual when nothing judges the step, that is no criteria and
// no pause; Auto otherwise). A blue-green release has two: the preview
// (weight 0: no request of the application's Service reaches it), which
// lasts autoPromotionSeconds once ready or, unset, waits for a promote; and
// the switch (weight 100), which lasts scaleDownDelaySeconds. Nil for the
// other strategies.
func Steps(s *platformv1.Strategy) []platformv1.CanaryStep {
	if s.Type == platformv1.StrategyBlueGreen {
		bg := &s.BlueGreen
		preview := platformv1.CanaryStep{Weight: 0, PauseSeconds: bg.AutoPromotionSeconds, Approval: platformv1.ApprovalAuto}
		if bg.AutoPromotionSeconds == nil {
			preview.Approval = platformv1.ApprovalManual
		}
		delay := ptr.Deref(bg.ScaleDownDelaySeconds, platformv1.DefaultScaleDownDelaySeconds)
		return []platformv1.CanaryStep{preview,
			{Weight: 100, PauseSeconds: &delay, Approval: platformv1.ApprovalAuto}}
	}
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

// Criteria are the checks step i of the release must pass: a canary's
// canaryCriteria at every step, a blue-green release's prePromotionAnalysis
// on the preview and postPromotionAnalysis after the switch.
func Criteria(s *platformv1.Strategy, i int32) []platformv1.CanaryCriterion {
	switch {
	case s.Type == platformv1.StrategyCanary:
		return s.CanaryCriteria
	case s.Type != platformv1.StrategyBlueGreen:
		return nil
	case i == BlueGreenPreview:
		return s.BlueGreen.PrePromotionAnalysis.Criteria
	case i == BlueGreenSwitched:
		return s.BlueGreen.PostPromotionAnalysis.Criteria
	}
	return nil
}

// AnalysisOf is how step i's criteria are measured: a canary's analysis,
// or a blue-green release's of the analysis that holds them.
func AnalysisOf(s *platformv1.Strategy, i int32) *platformv1.Analysis {
	if s.Type == platformv1.StrategyBlueGreen {
		if i == BlueGreenSwitched {
			return &s.BlueGreen.PostPromotionAnalysis.Analysis
		}
		return &s.BlueGreen.PrePromotionAnalysis.Analysis
	}
	return &s.Analysis
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
