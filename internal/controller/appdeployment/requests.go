// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Requests are annotations with a new value each time (GitOps-safe: no one
// patches status). Each value is acted on once, when it can be, and
// acknowledged in status.handledRequests in the same write as the change it
// causes; a request that cannot apply is acknowledged with a Warning event,
// so it does not act later by surprise.

// pending returns the value of a request annotation that has not been acted
// on, and who made it (as admission recorded).
func (p *pass) pending(annotation, handled string) (value, by string, ok bool) {
	v := p.ad.Annotations[annotation]
	if v == "" || v == handled {
		return "", "", false
	}
	by = p.ad.Annotations[annotation+platformv1.RequestedBySuffix]
	if by == "" {
		by = "an unknown user"
	}
	return v, by, true
}

// ignore acknowledges a request that cannot apply.
func (p *pass) ignore(handled *string, value, action, by, why string) {
	*handled = value
	p.transition(corev1.EventTypeWarning, EventRequestIgnored, action,
		fmt.Sprintf("%s requested by %s ignored: %s", action, by, why))
}

// handleAbort ends the canary in progress as Aborted; the children wind it
// down like a rollback.
func (p *pass) handleAbort() {
	v, by, ok := p.pending(platformv1.AbortAnnotation, p.next.handled.Abort)
	if !ok {
		return
	}
	c := p.next.canary
	if c == nil {
		p.ignore(&p.next.handled.Abort, v, "Abort", by, "no canary is in progress")
		return
	}
	p.next.handled.Abort = v
	p.end(platformv1.OutcomeAborted, platformv1.ReasonAborted,
		fmt.Sprintf("%s %s aborted by %s%s", p.noun(), describe(c.Version, c.Revision), by, p.switchBack(c)))
}

// handleRetry starts again a canary that was rolled back, aborted or held on
// a failure, from its first step and with new pods. A retry that comes while
// a rolled-back canary is still being removed waits for that.
func (p *pass) handleRetry() {
	v, by, ok := p.pending(platformv1.RetryAnnotation, p.next.handled.Retry)
	if !ok {
		return
	}
	switch c := p.next.canary; {
	case failed(c):
		p.next.handled.Retry = v
		p.next.canary = p.newCanary()
	case c == nil && p.progressive() && p.blocked(&p.next):
		if p.obs.canary != nil {
			return // still winding down
		}
		p.next.handled.Retry = v
		p.next.canary = p.newCanary()
	default:
		p.ignore(&p.next.handled.Retry, v, "Retry", by, "nothing was rolled back, aborted or failed for the current spec")
		return
	}
	started := EventCanaryStarted
	if p.isBlueGreen() {
		started = EventPreviewStarted
	}
	p.transition(corev1.EventTypeNormal, started, "Retry",
		fmt.Sprintf("%s %s retried by %s, from step 1 with new pods", p.noun(), describe(p.version(), p.revision), by))
}

// handlePromote completes the current step of a running canary: its pause
// and any approval it waits for. It waits until the step's canary pods are
// ready, since stable pods go only when they are.
func (p *pass) handlePromote() {
	v, by, ok := p.pending(platformv1.PromoteAnnotation, p.next.handled.Promote)
	if !ok {
		return
	}
	c := p.next.canary
	switch {
	case c == nil || !p.running(&p.next):
		p.ignore(&p.next.handled.Promote, v, "Promote", by, "no canary is in progress")
	case failed(c):
		p.ignore(&p.next.handled.Promote, v, "Promote", by, "the canary failed; retry or abort it")
	case stepIndex(c) >= int32(len(p.steps)):
		p.ignore(&p.next.handled.Promote, v, "Promote", by, "the canary is already being promoted")
	case c.Step.ReadyAt == nil || p.ad.Spec.Paused:
		// Acted on once the step's pods are ready and the canary not paused.
	default:
		p.next.handled.Promote = v
		p.completeStep(by)
	}
}
