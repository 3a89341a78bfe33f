// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/text"
)

// maxFailureMessage bounds the API server's text a status message carries:
// a Pod Security refusal lists every container's faults, and a status is
// read in one line.
const maxFailureMessage = 512

// podsRefused returns why the pods of a track cannot be created, from the
// ReplicaFailure condition its Deployment's controller copies from the
// ReplicaSet: QuotaExceeded when a ResourceQuota refused them, otherwise
// PodsForbidden (Pod Security, a LimitRange, another admission webhook),
// with the API server's message. Empty when every track's pods can be made.
func podsRefused(ds ...*appsv1.Deployment) (reason, message string) {
	for _, d := range ds {
		if d == nil {
			continue
		}
		for _, c := range d.Status.Conditions {
			if c.Type != appsv1.DeploymentReplicaFailure || c.Status != corev1.ConditionTrue {
				continue
			}
			reason := platformv1.ReasonPodsForbidden
			if strings.Contains(c.Message, "exceeded quota") {
				reason = platformv1.ReasonQuotaExceeded
			}
			return reason, "pods of " + d.Name + " cannot be created: " + text.Truncate(c.Message, maxFailureMessage)
		}
	}
	return "", ""
}

// refusedApply returns the API server's answer when err says it refused a
// child's apply for what it asked (invalid, forbidden, too large, refused
// by admission), which another try of the same apply would not change; ok
// is false for anything else (a conflict, a timeout, a lost connection),
// which the pass retries as any error.
func refusedApply(err error) (message string, ok bool) {
	// Each Is* unwraps err to the API server's status, and is false for an
	// error that carries none.
	switch {
	case apierrors.IsInvalid(err), apierrors.IsForbidden(err), apierrors.IsBadRequest(err),
		apierrors.IsRequestEntityTooLargeError(err), apierrors.IsNotAcceptable(err):
		return text.Truncate(err.Error(), maxFailureMessage), true
	}
	return "", false
}

// releaseStalled reports whether the release has gone without becoming
// Ready for longer than its progress deadline (defaulted by the API
// server, as the canary step's deadline reads it): Ready has been False
// since the release began (the condition's last transition). It returns
// how long until it would be, when it is not yet.
func (p *pass) releaseStalled() (bool, time.Duration) {
	deadline := time.Duration(p.ad.Spec.ProgressDeadlineSeconds) * time.Second
	ready := meta.FindStatusCondition(p.ad.Status.Conditions, platformv1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse {
		return false, deadline
	}
	left := ready.LastTransitionTime.Add(deadline).Sub(p.exact)
	return left <= 0, left
}
