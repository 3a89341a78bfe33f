// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/objstatus"
	"github.com/example/platform-operator/internal/release"
)

// status is the AppDeployment's status as the pass leaves it: the next
// record, and everything else rebuilt from what the children showed.
func (p *pass) status() platformv1.AppDeploymentStatus {
	ad, obs := p.ad, p.obs
	st := platformv1.AppDeploymentStatus{
		Conditions:         append([]metav1.Condition(nil), ad.Status.Conditions...),
		ObservedGeneration: ad.Generation,
		Selector:           labels.SelectorFromSet(labels.Set{platformv1.AppNameLabel: ad.Name}).String(),
		CurrentVersion:     p.version(),
		CurrentRevision:    p.revision,
		Canary:             p.next.canary.DeepCopy(),
		HandledRequests:    p.next.handled,
		LastOutcome:        p.next.outcome,
		Revisions:          p.next.history,
		Workload:           ptr.Deref(obs.workloadStatus, platformv1.WorkloadStatus{}),
	}
	var replicas, ready, available int32
	for _, d := range []*appsv1.Deployment{obs.stable, obs.canary, obs.leftover} {
		if d != nil {
			replicas += d.Status.Replicas
			ready += d.Status.ReadyReplicas
			available += d.Status.AvailableReplicas
		}
	}
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas = &replicas, &ready, &available
	// Updated pods are the ready pods of the spec's revision, on either track.
	st.UpdatedReplicas = ptr.To(p.podsOf(p.revision))
	if s := obs.stable; s != nil {
		st.StableRevision = p.stableRevision()
		st.StableVersion = s.Spec.Template.Labels[platformv1.AppVersionLabel]
		st.StableImage = appImage(&s.Spec.Template)
	}
	if c := st.Canary; c != nil {
		c.Replicas = ptr.To(replicasOf(obs.canary))
		canaryReady := obs.ready(p.track(), c.Revision)
		c.ReadyReplicas = &canaryReady
		i := stepIndex(c)
		c.Weight = &platformv1.CanaryWeight{
			Desired: ptr.To(release.Weight(p.canaryPods(i), p.stableShare(i))),
			Actual:  ptr.To(release.Weight(canaryReady, canaryReady+obs.ready(platformv1.TrackStable, ""))),
		}
		switch {
		case p.isBlueGreen() && !p.weighted():
			// The share of the Service's requests: all or none, by the
			// track it is seen to select.
			c.Active = obs.active()
			c.Weight.Desired = ptr.To(p.steps[min(i, int32(len(p.steps))-1)].Weight)
			c.Weight.Actual = ptr.To[int32](0)
			if c.Active == platformv1.TrackPreview {
				c.Weight.Actual = ptr.To[int32](100)
			}
		case p.weighted():
			c.Weight.Desired = ptr.To(p.steps[min(i, int32(len(p.steps))-1)].Weight)
			c.Weight.Actual = ptr.To[int32](0)
			if ro := obs.route; ro != nil && ro.problem == "" {
				c.Weight.Actual = ptr.To(ro.weight)
			}
		}
	}
	p.conditions(&st)
	if apply.SetChildContestedCondition(&st.Conditions, p.contests, ad.Generation, p.now.Time) {
		c := meta.FindStatusCondition(st.Conditions, platformv1.ConditionChildContested)
		p.transition(corev1.EventTypeWarning, EventChildContested, "Repair", c.Message)
	}
	p.phaseEvents(&ad.Status, &st)
	return st
}

// phaseEvents records the changes of phase that no step of the release
// makes: a hold by spec.paused and its end, and a canary step starting to
// wait for promotion.
func (p *pass) phaseEvents(old, cur *platformv1.AppDeploymentStatus) {
	// A release that cannot go on says why once, when the reason appears
	// or changes: the pods refused, or a child's apply.
	if reason := readyReason(cur); failureReason(reason) && reason != readyReason(old) {
		action := "Create"
		if reason == platformv1.ReasonApplyFailed {
			action = "Apply"
		}
		p.transition(corev1.EventTypeWarning, reason, action, cur.Message)
	}
	if old.Phase == cur.Phase && old.PauseReason == cur.PauseReason {
		return
	}
	switch {
	case cur.Phase == platformv1.PhasePaused && cur.PauseReason == platformv1.PauseManual:
		p.transition(corev1.EventTypeNormal, EventPaused, "Pause", "Release held by spec.paused: "+cur.Message)
	case cur.Phase == platformv1.PhasePaused && cur.PauseReason == platformv1.PauseApproval:
		p.transition(corev1.EventTypeNormal, EventWaitingForApproval, "Wait", cur.Message)
	case cur.Phase == platformv1.PhasePaused && analysisReason(cur.PauseReason):
		p.transition(corev1.EventTypeWarning, EventAnalysisPaused, "Pause", "Analysis holds the canary: "+cur.Message)
	case old.Phase == platformv1.PhasePaused && old.PauseReason == platformv1.PauseManual:
		p.transition(corev1.EventTypeNormal, EventResumed, "Resume", "Release resumed: "+cur.Message)
	case old.Phase == platformv1.PhasePaused && analysisReason(old.PauseReason) && sameCanary(old.Canary, cur.Canary):
		p.transition(corev1.EventTypeNormal, EventAnalysisResumed, "Resume",
			fmt.Sprintf("Analysis resumed (was %s): %s", old.PauseReason, cur.Message))
	}
}

// readyReason is the reason of a status's Ready condition, if any.
func readyReason(st *platformv1.AppDeploymentStatus) string {
	if c := meta.FindStatusCondition(st.Conditions, platformv1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// sameCanary reports whether two statuses describe one canary: a hold
// ends by itself only for the canary it held. A canary replaced by a newer
// version, rolled back or aborted says so with its own event.
func sameCanary(a, b *platformv1.CanaryStatus) bool {
	return a != nil && b != nil && a.Revision == b.Revision
}

// analysisReason reports whether a pause reason is the analysis's.
func analysisReason(r platformv1.PauseReason) bool {
	return r == platformv1.PauseNoData || r == platformv1.PauseProviderError || r == platformv1.PauseInvalidQuery
}

// stableShare is, at step i, the total of pods the desired weight is a share
// of: the replicas, or one more when the canary is a surge pod.
func (p *pass) stableShare(i int32) int32 {
	canary := p.canaryPods(i)
	return canary + release.StableReplicas(canary, p.replicas)
}

// podsOf counts the ready pods of a revision on every track.
func (p *pass) podsOf(revision string) int32 {
	return p.obs.ready(platformv1.TrackStable, revision) + p.obs.ready(platformv1.TrackCanary, revision) +
		p.obs.ready(platformv1.TrackPreview, revision)
}

// conditions sets Available, Progressing and Ready, and the phase, pause
// reason and message that sum them up.
func (p *pass) conditions(st *platformv1.AppDeploymentStatus) {
	ad, now := p.ad, p.now.Time
	gen := ad.Generation
	set := func(t string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		objstatus.SetCondition(&st.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg}, gen, now)
	}

	ready := ptr.Deref(st.ReadyReplicas, 0)
	if ready >= p.replicas {
		set(platformv1.ConditionAvailable, true, platformv1.ReasonMinimumReplicas,
			fmt.Sprintf("%d of %d pods ready", ready, p.replicas))
	} else {
		set(platformv1.ConditionAvailable, false, platformv1.ReasonMinimumReplicasUnavailable,
			fmt.Sprintf("%d of %d pods ready", ready, p.replicas))
	}

	phase, pause, reason, msg := p.summary(st)
	st.Phase, st.PauseReason, st.Message = phase, pause, msg
	switch phase {
	case platformv1.PhaseHealthy:
		set(platformv1.ConditionProgressing, false, platformv1.ReasonReleased, msg)
		set(platformv1.ConditionReady, true, platformv1.ReasonReleased, msg)
	case platformv1.PhaseDegraded:
		set(platformv1.ConditionProgressing, false, reason, msg)
		set(platformv1.ConditionReady, false, reason, msg)
	default:
		progress := platformv1.ReasonRollingOut
		if p.running(&p.next) {
			progress = platformv1.ReasonCanarying
		}
		if failureReason(reason) {
			progress = reason
		}
		set(platformv1.ConditionProgressing, true, progress, msg)
		set(platformv1.ConditionReady, false, reason, msg)
	}
}

// summary is the phase, pause reason, Ready reason and message of the
// release as the pass leaves it.
func (p *pass) summary(st *platformv1.AppDeploymentStatus) (platformv1.Phase, platformv1.PauseReason, string, string) {
	ad := p.ad
	cur := describe(p.version(), p.revision)
	if p.obs.nameTaken != "" {
		return platformv1.PhaseDegraded, "", platformv1.ReasonNameTaken,
			fmt.Sprintf("%s exists and is not this AppDeployment's; delete or rename it", p.obs.nameTaken)
	}
	if w := p.obs.workloadProblem; w != nil {
		return platformv1.PhaseDegraded, "", w.reason, w.message
	}
	if p.applyRefused != "" {
		msg := fmt.Sprintf("%s: %s", cur, p.applyRefused)
		if stalled, left := p.releaseStalled(); !stalled {
			p.wakeAt(p.exact.Add(left))
			return platformv1.PhaseProgressing, "", platformv1.ReasonApplyFailed, msg
		}
		return platformv1.PhaseDegraded, "", platformv1.ReasonApplyFailed, msg
	}
	refusedReason, refusedMsg := podsRefused(p.obs.canary, p.obs.stable)
	if c := p.next.canary; c != nil && p.running(&p.next) {
		if f := c.Failure; failed(c) {
			return platformv1.PhaseDegraded, "", platformv1.ReasonCanaryFailed,
				fmt.Sprintf("%s %s failed (%s: %s); held: retry or abort", strings.ToLower(p.noun()), cur, f.Reason, f.Message)
		}
		msg := p.canaryMessage(c, st)
		held, why := p.stepPause(c)
		switch {
		case ad.Spec.Paused:
			return platformv1.PhasePaused, platformv1.PauseManual, platformv1.ReasonPaused, msg + ", paused"
		case held != "":
			return platformv1.PhasePaused, held, string(held), msg + ", paused: " + why
		case stepIndex(c) < int32(len(p.steps)) && c.Step.ReadyAt != nil && needsApproval(p.steps[stepIndex(c)]) &&
			(c.Step.PauseUntil == nil || !p.now.Before(c.Step.PauseUntil)):
			return platformv1.PhasePaused, platformv1.PauseApproval, platformv1.ReasonWaitingForApproval, msg + ", waiting for promotion"
		case refusedReason != "":
			return platformv1.PhaseProgressing, "", refusedReason, msg + "; " + refusedMsg
		}
		return platformv1.PhaseProgressing, "", platformv1.ReasonCanarying, msg
	}
	if p.blocked(&p.next) {
		o := p.next.outcome
		reason := platformv1.ReasonRolledBack
		if o.Result == platformv1.OutcomeAborted {
			reason = platformv1.ReasonAborted
		}
		msg := fmt.Sprintf("%s; stable %s", o.Message, describe(st.StableVersion, st.StableRevision))
		if p.obs.canary != nil {
			msg += fmt.Sprintf(", removing the %s once the stable pods are back", p.leftTrack())
		}
		return platformv1.PhaseDegraded, "", reason, msg
	}
	if deadlineExceeded(p.obs.stable) {
		msg := fmt.Sprintf("%s: the rollout made no progress within %ds", cur, ad.Spec.ProgressDeadlineSeconds)
		if refusedReason != "" {
			msg += "; " + refusedMsg
		}
		return platformv1.PhaseDegraded, "", platformv1.ReasonProgressDeadlineExceeded, msg
	}
	if st.StableRevision == p.revision && rolledOut(p.obs.stable, p.replicas) && p.obs.canary == nil && p.obs.leftover == nil {
		return platformv1.PhaseHealthy, "", platformv1.ReasonReleased,
			fmt.Sprintf("%s: %d/%d pods ready", cur, ptr.Deref(st.ReadyReplicas, 0), p.replicas)
	}
	msg := fmt.Sprintf("%s: %d/%d pods updated and ready", cur, ptr.Deref(st.UpdatedReplicas, 0), p.replicas)
	if p.obs.canary != nil && !p.running(&p.next) || p.obs.leftover != nil {
		msg += fmt.Sprintf(", removing the %s once the stable pods are ready", p.leftTrack())
	}
	if ad.Spec.Paused {
		return platformv1.PhasePaused, platformv1.PauseManual, platformv1.ReasonPaused, msg + ", paused"
	}
	if refusedReason != "" {
		return platformv1.PhaseProgressing, "", refusedReason, msg + "; " + refusedMsg
	}
	return platformv1.PhaseProgressing, "", platformv1.ReasonRollingOut, msg
}

// stepPause says why a canary's step is held by something other than a
// person: its analysis, or the route that should carry its weight.
func (p *pass) stepPause(c *platformv1.CanaryStatus) (platformv1.PauseReason, string) {
	if stepIndex(c) < int32(len(p.steps)) {
		if held, why := p.analysisPause(c); held != "" {
			return held, why
		}
	}
	if why := p.routePause(c); why != "" {
		return platformv1.PauseRouteNotAccepted, why
	}
	return "", ""
}

// failureReason reports whether a Ready reason says why a release cannot
// go on: the Progressing condition carries it in place of RollingOut or
// Canarying.
func failureReason(reason string) bool {
	switch reason {
	case platformv1.ReasonPodsForbidden, platformv1.ReasonQuotaExceeded, platformv1.ReasonApplyFailed:
		return true
	}
	return false
}

// leftTrack names the Deployment that goes once the stable pods are
// ready: the canary, or a blue-green release's preview.
func (p *pass) leftTrack() string {
	if d := p.obs.canary; d != nil {
		return d.Labels[platformv1.TrackLabel]
	}
	if d := p.obs.leftover; d != nil {
		return d.Labels[platformv1.TrackLabel]
	}
	return p.track()
}

// canaryMessage is the one line that says where a canary is.
func (p *pass) canaryMessage(c *platformv1.CanaryStatus, st *platformv1.AppDeploymentStatus) string {
	if p.isBlueGreen() {
		return p.blueGreenMessage(c, st)
	}
	i := stepIndex(c)
	w := st.Canary.Weight
	var b strings.Builder
	fmt.Fprintf(&b, "canary %s: %d/%d pods (%d%%)", describe(c.Version, c.Revision),
		ptr.Deref(st.Canary.ReadyReplicas, 0), p.canaryPods(i), ptr.Deref(w.Actual, 0))
	if i >= int32(len(p.steps)) {
		fmt.Fprintf(&b, ", promoting: %d/%d stable pods updated", p.obs.ready(platformv1.TrackStable, c.Revision), p.replicas)
		return b.String()
	}
	fmt.Fprintf(&b, ", step %d/%d (%d%%)", i+1, len(p.steps), p.steps[i].Weight)
	if u := c.Step.PauseUntil; u != nil && p.now.Before(u) {
		fmt.Fprintf(&b, ", paused until %s", u.UTC().Format("15:04:05"))
	}
	return b.String()
}

// blueGreenMessage is the one line that says where a blue-green release is.
func (p *pass) blueGreenMessage(c *platformv1.CanaryStatus, st *platformv1.AppDeploymentStatus) string {
	i := stepIndex(c)
	v := describe(c.Version, c.Revision)
	ready := ptr.Deref(st.Canary.ReadyReplicas, 0)
	var b strings.Builder
	switch {
	case i >= int32(len(p.steps)):
		fmt.Fprintf(&b, "preview %s serves Service %s, promoting: %d/%d stable pods updated", v, p.ad.Name,
			p.obs.ready(platformv1.TrackStable, c.Revision), p.replicas)
		return b.String()
	case i == release.BlueGreenSwitched:
		active := st.Canary.Active
		if active == "" {
			active = platformv1.TrackStable
		}
		fmt.Fprintf(&b, "preview %s: %d/%d pods, Service %s selects the %s pods", v, ready, p.replicas, p.ad.Name, active)
	default:
		fmt.Fprintf(&b, "preview %s: %d/%d pods behind Service %s%s, Service %s selects the stable pods", v, ready, p.replicas,
			p.ad.Name, platformv1.PreviewSuffix, p.ad.Name)
	}
	if u := c.Step.PauseUntil; u != nil && p.now.Before(u) {
		what := "promotion at"
		if i == release.BlueGreenSwitched {
			what = "old pods kept until"
		}
		fmt.Fprintf(&b, ", %s %s", what, u.UTC().Format("15:04:05"))
	}
	return b.String()
}
