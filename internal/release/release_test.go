// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package release

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
)

func TestIsVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.2.3": true, "v1.10.0": true, "v0.0.1": true, "v12.345.6789": true,
		"latest": false, "1.2.3": false, "v1.2": false, "v1.2.3.4": false, "v01.2.3": false,
		"v1.2.3-rc1": false, "V1.2.3": false, "": false,
	} {
		if got := IsVersion(v); got != want {
			t.Errorf("IsVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestVersion_FromSpecElseFromTheImageTag(t *testing.T) {
	cases := []struct {
		image, version, want string
	}{
		{"harbor.example.com/order-service:v1.2.3", "", "v1.2.3"},
		{"harbor.example.com/order-service:v1.2.3", "v1.2.4", "v1.2.4"},
		{"harbor.example.com:5000/order-service:v1.10.0", "", "v1.10.0"},
		{"order-service:latest", "", ""},
		{"order-service", "", ""},
		{"order-service@sha256:" + sha, "", ""},
		{"order-service:v1.2.3@sha256:" + sha, "", "v1.2.3"},
	}
	for _, c := range cases {
		spec := &platformv1.AppDeploymentSpec{Image: c.image, Version: c.version}
		if got := Version(spec); got != c.want {
			t.Errorf("Version(image %q, version %q) = %q, want %q", c.image, c.version, got, c.want)
		}
	}
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestCanaryReplicas_BothVersionsAlwaysRun(t *testing.T) {
	cases := []struct {
		weight, replicas, want int32
	}{
		{30, 3, 1},  // 0.9 rounds to 1: 33 %
		{30, 10, 3}, // exact
		{50, 3, 2},  // 1.5 rounds to 2
		{1, 10, 1},  // at least one canary pod
		{99, 10, 9}, // at least one stable pod
		{90, 2, 1},  // 1.8 rounds to 2, capped at replicas - 1
		{30, 1, 1},  // a surge pod beside the only stable one
		{30, 0, 0},  // nothing to canary
		{25, 100, 25},
	}
	for _, c := range cases {
		if got := CanaryReplicas(c.weight, c.replicas); got != c.want {
			t.Errorf("CanaryReplicas(%d%%, %d) = %d, want %d", c.weight, c.replicas, got, c.want)
		}
	}
}

func TestWeightAndStableReplicas(t *testing.T) {
	if got := Weight(1, 3); got != 33 {
		t.Errorf("Weight(1 of 3) = %d, want 33", got)
	}
	if got := Weight(1, 2); got != 50 {
		t.Errorf("Weight(1 of 2) = %d, want 50", got)
	}
	if got := Weight(0, 0); got != 0 {
		t.Errorf("Weight(0 of 0) = %d, want 0", got)
	}
	if got := StableReplicas(1, 3); got != 2 {
		t.Errorf("StableReplicas(1 canary, 3) = %d, want 2", got)
	}
	if got := StableReplicas(1, 1); got != 1 {
		t.Errorf("StableReplicas(1 canary, 1) = %d, want 1: the canary is a surge pod", got)
	}
}

func TestSteps_ShorthandAndDefaultApproval(t *testing.T) {
	criteria := []platformv1.CanaryCriterion{{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)}}
	cases := map[string]struct {
		strategy platformv1.Strategy
		want     []platformv1.CanaryStep
	}{
		"not a canary": {platformv1.Strategy{Type: platformv1.StrategyRolling}, nil},
		"canaryPercent, nothing judges it: a person approves": {
			platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30},
			[]platformv1.CanaryStep{{Weight: 30, Approval: platformv1.ApprovalManual}},
		},
		"canaryPercent with criteria: approved by the analysis": {
			platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30, CanaryCriteria: criteria},
			[]platformv1.CanaryStep{{Weight: 30, Approval: platformv1.ApprovalAuto}},
		},
		"a paused step is approved by its pause; an explicit approval stays": {
			platformv1.Strategy{Type: platformv1.StrategyCanary, Steps: []platformv1.CanaryStep{
				{Weight: 10, PauseSeconds: ptr.To[int32](60)},
				{Weight: 50},
				{Weight: 80, PauseSeconds: ptr.To[int32](60), Approval: platformv1.ApprovalManual},
			}},
			[]platformv1.CanaryStep{
				{Weight: 10, PauseSeconds: ptr.To[int32](60), Approval: platformv1.ApprovalAuto},
				{Weight: 50, Approval: platformv1.ApprovalManual},
				{Weight: 80, PauseSeconds: ptr.To[int32](60), Approval: platformv1.ApprovalManual},
			},
		},
	}
	for name, c := range cases {
		if diff := cmp.Diff(c.want, Steps(&c.strategy)); diff != "" {
			t.Errorf("%s: steps (-want +got):\n%s", name, diff)
		}
	}
}
