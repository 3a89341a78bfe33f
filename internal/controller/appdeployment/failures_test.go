// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// podSecurityRefusal is what the Deployment controller copies from a
// ReplicaSet whose pods Pod Security admission refuses.
const podSecurityRefusal = `pods "order-service-6d5f-x" is forbidden: violates PodSecurity "restricted:latest": ` +
	`allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)`

// refuse gives a track's Deployment the ReplicaFailure condition its
// controller sets when the ReplicaSet cannot create pods.
func (w *world) refuse(track, message string) {
	d := w.deployments[track]
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure,
		Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: message}}
}

func TestRelease_PodsRefusedByAdmissionAreSaidUntilTheyClear(t *testing.T) {
	ad := app()
	w := newWorld(t, ad)
	w.pass()
	w.refuse(platformv1.TrackStable, podSecurityRefusal)
	w.pass()
	w.expectPhase(platformv1.PhaseProgressing, platformv1.ReasonPodsForbidden)
	if !strings.Contains(w.ad.Status.Message, `violates PodSecurity "restricted:latest"`) {
		t.Errorf("message %q does not carry the API server's", w.ad.Status.Message)
	}
	progressing := meta.FindStatusCondition(w.ad.Status.Conditions, platformv1.ConditionProgressing)
	if progressing.Reason != platformv1.ReasonPodsForbidden || progressing.Status != metav1.ConditionTrue {
		t.Errorf("Progressing %+v, want True with reason PodsForbidden", progressing)
	}
	w.expectEvents(platformv1.ReasonPodsForbidden)
	// Said once, not on every pass.
	w.pass()
	if len(w.events) != 0 {
		t.Errorf("events %v on a pass that changed nothing", w.events)
	}

	w.refuse(platformv1.TrackStable, `pods "order-service-6d5f-y" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1`)
	w.pass()
	w.expectPhase(platformv1.PhaseProgressing, platformv1.ReasonQuotaExceeded)
	w.expectEvents(platformv1.ReasonQuotaExceeded)

	// The quota is freed: the condition goes, the pods come.
	w.deployments[platformv1.TrackStable].Status.Conditions = nil
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
}

func TestRelease_PodsRefusedPastTheDeadlineDegradeWithTheReason(t *testing.T) {
	w := newWorld(t, app())
	w.pass()
	w.refuse(platformv1.TrackStable, podSecurityRefusal)
	d := w.deployments[platformv1.TrackStable]
	d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing,
		Status: corev1.ConditionFalse, Reason: deploymentDeadlineExceeded})
	w.pass()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonProgressDeadlineExceeded)
	if !strings.Contains(w.ad.Status.Message, "violates PodSecurity") {
		t.Errorf("message %q does not say why", w.ad.Status.Message)
	}
}

func TestRelease_ARefusedApplyIsSaidAndDegradesAtTheDeadline(t *testing.T) {
	ad := app()
	ad.Spec.ProgressDeadlineSeconds = 60
	w := newWorld(t, ad)
	w.pass()
	refusal := `Deployment.apps "order-service" is invalid: spec.template.spec.containers[0].volumeMounts[0].name: Not found: "cache"`
	pass := func() {
		p := newPass(w.ad, w.observation(), w.now)
		p.decide()
		p.applyRefused = refusal
		w.ad.Status = p.status()
		for _, e := range p.events {
			w.events = append(w.events, e.reason)
		}
	}
	pass()
	w.expectPhase(platformv1.PhaseProgressing, platformv1.ReasonApplyFailed)
	if !strings.Contains(w.ad.Status.Message, refusal) {
		t.Errorf("message %q, want the API server's answer", w.ad.Status.Message)
	}
	w.expectEvents(platformv1.ReasonApplyFailed)
	w.now = w.now.Add(61 * time.Second)
	pass()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonApplyFailed)
}

func TestRefusedApply_OnlyWhatAnotherTryWouldNotChange(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
		field.ErrorList{field.NotFound(field.NewPath("spec", "template"), "cache")})
	for _, tt := range []struct {
		name    string
		err     error
		refused bool
	}{
		{"invalid", fmt.Errorf("apply Deployment web: %w", invalid), true},
		{"forbidden by a webhook", apierrors.NewForbidden(gr, "web", errors.New("denied by policy")), true},
		{"conflict", apierrors.NewConflict(gr, "web", errors.New("changed")), false},
		{"timeout", apierrors.NewTimeoutError("slow", 1), false},
		{"no API answer", errors.New("connection refused"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg, refused := refusedApply(tt.err)
			if refused != tt.refused || (refused && msg == "") {
				t.Errorf("refused %t (%q), want %t", refused, msg, tt.refused)
			}
		})
	}
}
