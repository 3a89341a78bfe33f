// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/release"
)

// maxRestarts is how many restarts of one canary container fail the canary.
const maxRestarts = 3

// failingWaitReasons are the reasons a waiting container gives when it will
// not start without a change: a canary pod in one of them fails the canary
// at once, not at the progress deadline. ErrImagePull is left out: it is the
// first, often passing, failure; ImagePullBackOff follows when it repeats.
var failingWaitReasons = map[string]bool{
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"CrashLoopBackOff":           true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
}

// pass is one reconcile's view of an application's release: the spec, the
// state recorded in status, what the children show, and what the pass
// decides. decide is pure; the reconciler then acts on the children as the
// stored record says and writes the next record.
type pass struct {
	ad  *platformv1.AppDeployment
	obs *observation
	// now is the pass's time in whole seconds, as status records times;
	// exact is the clock's reading, from which waits are counted, so that a
	// pass asked for at a time comes at it, not up to a second later.
	now   metav1.Time
	exact time.Time

	// template and revision are what the spec asks the pods to be.
	template *corev1.PodTemplateSpec
	revision string
	replicas int32
	steps    []platformv1.CanaryStep

	// stored is the release as recorded when the pass began: the children
	// follow it. next is the release as the pass leaves it, written to
	// status: the next pass acts on it.
	stored, next record

	// children is what the children should be.
	children children
	// events are the transitions the pass made, emitted once written.
	events []transition
	// requeueAfter is when time alone changes the release (a pause ends, a
	// deadline passes); zero when nothing waits on time.
	requeueAfter time.Duration
	// measure asks the measurer for a measurement of the canary's criteria.
	measure *measureRequest
	// contests say, for each child the pass applied, whether someone keeps
	// changing it (ChildContested).
	contests []apply.ContestedChild
	// applyRefused is the API server's answer when it refused to apply a
	// child in this pass (refusedApply): status says so (ApplyFailed).
	applyRefused string
	// routeTimeout is how long a weighted step waits for the gateways to
	// accept its weight before it pauses; DefaultRouteAcceptTimeout when 0.
	routeTimeout time.Duration
}

// record is the part of the status that cannot be observed.
type record struct {
	canary   *platformv1.CanaryStatus
	handled  platformv1.HandledRequests
	outcome  platformv1.Outcome
	history  []platformv1.Revision
	progress *metav1.Time
}

// transition is a change of the release, for an event and a metric.
type transition struct {
	eventType, reason, action, message string
	// outcome is set on the transition that ends a release.
	outcome *platformv1.Outcome
	// started is when the release that ended began.
	started *metav1.Time
}

// children is what a pass wants of the application's children.
type children struct {
	// stableTemplate is the stable Deployment's pod template; nil keeps the
	// one it has (a canary runs beside it).
	stableTemplate *corev1.PodTemplateSpec
	stableRevision string
	stableReplicas int32
	// canaryReplicas is the canary Deployment's size; nil when there is no
	// canary to run.
	canaryReplicas *int32
	// removeCanary: the canary Deployment is no longer wanted and the stable
	// one is back at full size and ready, so it can go.
	removeCanary bool
	// stalePods are canary pods of an earlier attempt of the same revision,
	// which the Deployment would keep.
	stalePods []string
	// routeWeight is the canary's weight on the route of a weighted canary;
	// nil leaves the route as it is. dropCanaryRef removes the canary
	// Service's backendRef from it (the canary Deployment is gone).
	routeWeight   *int32
	dropCanaryRef bool
	// headers, with routeWeight, are the header matches whose requests the
	// route sends to the canary alone; none removes the header rules.
	headers []gatewayv1.HTTPHeaderMatch
	// active is the track the Service <name> of a blue-green release
	// selects; empty for the other strategies (see reconcileServices).
	active string
}

func newPass(ad *platformv1.AppDeployment, obs *observation, now time.Time) *pass {
	t, rev := podTemplate(ad)
	st := &ad.Status
	stored := record{
		canary:   st.Canary,
		handled:  st.HandledRequests,
		outcome:  st.LastOutcome,
		history:  st.Revisions,
		progress: progressSince(st.Conditions),
	}
	p := &pass{
		ad: ad, obs: obs, now: metav1.NewTime(now.Truncate(time.Second)), exact: now,
		template: t, revision: rev,
		replicas: release.Replicas(&ad.Spec),
		steps:    release.Steps(&ad.Spec.Strategy),
		stored:   stored,
	}
	// The next record starts as the stored one; only the canary is changed
	// in place, so only it is copied.
	p.next = stored
	p.next.canary = st.Canary.DeepCopy()
	return p
}

// progressSince is when the current rollout began, as the Progressing
// condition recorded it.
func progressSince(conds []metav1.Condition) *metav1.Time {
	for _, c := range conds {
		if c.Type == platformv1.ConditionProgressing && c.Status == metav1.ConditionTrue {
			t := c.LastTransitionTime
			return &t
		}
	}
	return nil
}

// recordChanged reports whether the pass changed the recorded release.
func (p *pass) recordChanged() bool {
	return !equality.Semantic.DeepEqual(p.stored.canary, p.next.canary) ||
		p.stored.handled != p.next.handled ||
		!equality.Semantic.DeepEqual(p.stored.outcome, p.next.outcome) ||
		!equality.Semantic.DeepEqual(p.stored.history, p.next.history)
}

// isBlueGreen reports whether the spec releases blue-green.
func (p *pass) isBlueGreen() bool { return p.ad.Spec.Strategy.Type == platformv1.StrategyBlueGreen }

// progressive reports whether the spec releases a new version beside the
// stable pods, step by step: a canary or a blue-green release.
func (p *pass) progressive() bool { return release.Progressive(&p.ad.Spec.Strategy) }

// track is the track of the release's new pods: the canary's, or a
// blue-green release's preview.
func (p *pass) track() string { return release.Track(&p.ad.Spec.Strategy) }

// noun names the release in progress for people.
func (p *pass) noun() string {
	if p.isBlueGreen() {
		return "Preview"
	}
	return "Canary"
}

// stableRevision is the revision the stable Deployment runs.
func (p *pass) stableRevision() string { return revisionOfDeployment(p.obs.stable) }

// blocked reports whether the spec's revision was rolled back or aborted and
// not retried since: it is held until the spec changes or a retry.
func (p *pass) blocked(r *record) bool {
	o := r.outcome
	return r.canary == nil && o.Revision == p.revision &&
		(o.Result == platformv1.OutcomeRolledBack || o.Result == platformv1.OutcomeAborted)
}

// promotedBefore reports whether the spec's revision was promoted before, so
// it goes back without a canary (fast rollback).
func (p *pass) promotedBefore() bool {
	for _, rev := range p.next.history {
		if rev.Revision == p.revision {
			return true
		}
	}
	return false
}

// running reports whether r holds a canary of the spec's revision.
func (p *pass) running(r *record) bool {
	return p.progressive() && r.canary != nil && r.canary.Revision == p.revision
}

// canaryPods is the size of the canary at step i (the last step's while
// promoting).
func (p *pass) canaryPods(i int32) int32 {
	if len(p.steps) == 0 {
		return 0
	}
	i = min(i, int32(len(p.steps))-1)
	if p.isBlueGreen() {
		return p.replicas // the preview runs at full size
	}
	if p.weighted() {
		return p.weightedCanaryPods(p.steps[i])
	}
	return release.CanaryReplicas(p.steps[i].Weight, p.replicas)
}

// stepIndex is the recorded step of a canary.
func stepIndex(c *platformv1.CanaryStatus) int32 {
	if c == nil || c.Step == nil {
		return 0
	}
	return ptr.Deref(c.Step.Index, 0)
}

// decide works out the children from the stored record, then the next
// record from the requests, the spec and what the children show.
func (p *pass) decide() {
	p.children = p.desiredChildren(&p.stored)
	if p.obs.leftAlone() {
		return
	}
	p.supersede()
	p.handleAbort()
	p.handleRetry()
	p.start()
	p.advance()
	p.handlePromote()
	p.complete()
	p.noteRoute(p.next.canary)
}

// desiredChildren is what the children should be under record r.
func (p *pass) desiredChildren(r *record) children {
	c := children{stableReplicas: p.replicas, active: p.activeTrack(r)}
	switch {
	case p.obs.stable == nil, !p.progressive(), p.stableRevision() == p.revision,
		p.running(r) && stepIndex(r.canary) >= int32(len(p.steps)),
		r.canary == nil && !p.blocked(r) && p.promotedBefore():
		// First creation, a rolling or recreate release, a promotion or a
		// return to a promoted revision: the stable Deployment takes the spec.
		c.stableTemplate, c.stableRevision = p.template, p.revision
	default:
		c.stableRevision = p.stableRevision()
	}
	if p.running(r) {
		i := stepIndex(r.canary)
		if i < int32(len(p.steps)) && p.preflightPending(r.canary) {
			return c // no canary pod before every query has answered once
		}
		want := p.canaryPods(i)
		c.canaryReplicas = &want
		switch {
		case p.isBlueGreen() && i < int32(len(p.steps)):
			// The preview runs beside the stable pods at full size: the
			// Service, not the pods, decides which serve.
		case p.weighted() && i < int32(len(p.steps)):
			// The route, not the pods, splits the requests: the stable
			// Deployment keeps its size.
		case i < int32(len(p.steps)) && p.replicas > 1:
			// Stable pods go only as canary pods are ready to take their place.
			c.stableReplicas = p.replicas - min(p.obs.ready(platformv1.TrackCanary, p.revision), want)
		case i >= int32(len(p.steps)):
			c.stableReplicas = p.promotionSize()
		}
		c.stalePods = p.staleCanaryPods(r.canary)
		p.desiredRoute(&c, r)
		return c
	}
	// A canary or preview nobody runs any more goes once the stable
	// Deployment is back at full size and ready, never before: no capacity
	// gap. Both the pods and the Deployment's own status must say so, so
	// that anyone watching the Deployments sees the stable one ready before
	// the canary goes; a preview goes only once the Service is seen back
	// on the stable pods.
	c.removeCanary = p.obs.canary != nil && p.routeAtZero() && p.obs.active() != platformv1.TrackPreview && p.stableBack()
	p.desiredRoute(&c, r)
	return c
}

// stableBack reports whether the stable Deployment is at full size and
// ready, by its pods and by its own status.
func (p *pass) stableBack() bool {
	st := p.obs.stable
	return p.replicas == 0 || st != nil && ptr.Deref(st.Spec.Replicas, 1) >= p.replicas &&
		st.Status.ObservedGeneration >= st.Generation && st.Status.ReadyReplicas >= p.replicas &&
		p.obs.ready(platformv1.TrackStable, "") >= p.replicas
}

// activeTrack is the track the Service <name> of a blue-green release
// selects under record r: the preview from the switch until the stable
// Deployment has rolled out the new version at full size, unless the
// release failed (held with rollback.onFailure Pause, the old pods serve
// again); the stable pods otherwise, and always with a route (whose
// weights switch instead). Empty for the other strategies.
func (p *pass) activeTrack(r *record) string {
	if !p.isBlueGreen() {
		return ""
	}
	c := r.canary
	switch {
	case p.weighted(), !p.running(r), failed(c), stepIndex(c) < release.BlueGreenSwitched:
		return platformv1.TrackStable
	case stepIndex(c) >= int32(len(p.steps)) && p.stableRevision() == p.revision && rolledOut(p.obs.stable, p.replicas) &&
		p.obs.ready(platformv1.TrackStable, p.revision) >= p.replicas:
		return platformv1.TrackStable
	}
	return platformv1.TrackPreview
}

// switchBack says, of a blue-green release that failed after the switch,
// that its Service returns to the old pods.
func (p *pass) switchBack(c *platformv1.CanaryStatus) string {
	if !p.isBlueGreen() || stepIndex(c) < release.BlueGreenSwitched {
		return ""
	}
	return fmt.Sprintf("; Service %s switches back to the stable pods", p.ad.Name)
}

// blueGreenStepMessage says which step of a blue-green release completed.
func (p *pass) blueGreenStepMessage(c *platformv1.CanaryStatus, i int32) string {
	v := describe(c.Version, c.Revision)
	if i == release.BlueGreenPreview {
		return fmt.Sprintf("Preview %s promoted", v)
	}
	return fmt.Sprintf("Preview %s served every request of Service %s for its scale-down delay", v, p.ad.Name)
}

// promotionSize is the stable Deployment's size while it takes the
// canary's version: the size it has until it runs the new template at that
// size, then full size. Changed together, template and size are a scaling
// event to the Deployment controller, which grows the old ReplicaSet to the
// full size first: pods of the old version, made only to be replaced. The
// canary's pods keep the application at full size meanwhile.
func (p *pass) promotionSize() int32 {
	st := p.obs.stable
	cur := replicasOf(st)
	if st == nil || cur >= p.replicas || p.stableRevision() == p.revision && rolledOut(st, cur) {
		return p.replicas
	}
	return cur
}

// staleCanaryPods are the canary's pods of its revision made before it
// (re)started: a retry needs new pods, and the Deployment would keep these.
func (p *pass) staleCanaryPods(c *platformv1.CanaryStatus) []string {
	if c.StartedAt == nil {
		return nil
	}
	var out []string
	for i := range p.obs.pods {
		pod := &p.obs.pods[i]
		if pod.Labels[platformv1.TrackLabel] == p.track() && pod.Labels[platformv1.RevisionLabel] == c.Revision &&
			pod.CreationTimestamp.Before(c.StartedAt) {
			out = append(out, pod.Name)
		}
	}
	return out
}

// supersede drops a recorded canary that the spec no longer asks for: a new
// version (which then starts its own canary, from the stable version), a
// return to the stable version, or another strategy.
func (p *pass) supersede() {
	c := p.next.canary
	if c == nil || p.running(&p.next) {
		return
	}
	p.next.canary = nil
	p.transition(corev1.EventTypeNormal, EventCanaryReplaced, "Replace",
		fmt.Sprintf("%s %s replaced: the spec now asks for %s", p.noun(), describe(c.Version, c.Revision), describe(p.version(), p.revision)))
}

// start records a new canary when the spec asks for a version the stable
// Deployment does not run, unless that version was rolled back (it waits for
// a retry) or promoted before (it goes back directly).
func (p *pass) start() {
	if !p.progressive() || p.next.canary != nil || p.obs.stable == nil || p.ad.Spec.Paused ||
		p.stableRevision() == p.revision || p.blocked(&p.next) || p.promotedBefore() || len(p.steps) == 0 {
		return
	}
	p.next.canary = p.newCanary()
	stable := describe(p.obs.stable.Spec.Template.Labels[platformv1.AppVersionLabel], p.stableRevision())
	if p.isBlueGreen() {
		p.transition(corev1.EventTypeNormal, EventPreviewStarted, "Start",
			fmt.Sprintf("Preview %s started beside %s: %d pods behind Service %s%s; Service %s stays on %s",
				describe(p.version(), p.revision), stable, p.replicas, p.ad.Name, platformv1.PreviewSuffix, p.ad.Name, stable))
		return
	}
	p.transition(corev1.EventTypeNormal, EventCanaryStarted, "Start",
		fmt.Sprintf("Canary %s started beside %s: %d step(s), first at %d%%", describe(p.version(), p.revision),
			stable, len(p.steps), p.steps[0].Weight))
}

// newCanary is the record of a canary of the spec's revision at its first step.
func (p *pass) newCanary() *platformv1.CanaryStatus {
	now := p.now
	return &platformv1.CanaryStatus{
		Revision: p.revision, Version: p.version(), StartedAt: &now,
		Step: &platformv1.CanaryStepStatus{Index: ptr.To[int32](0), Total: int32(len(p.steps)), StartedAt: &now},
	}
}

// failed reports whether a canary failed and is held (rollback.onFailure Pause).
func failed(c *platformv1.CanaryStatus) bool { return c != nil && c.Failure.Reason != "" }

// version is the spec's version, as the pods' label carries it.
func (p *pass) version() string { return release.Version(&p.ad.Spec) }

// advance moves a running canary on: a failure ends it (or holds it), a step
// whose pods are ready, whose pause is over and that needs no approval
// completes, and once the last step completes the stable Deployment takes the
// canary's version.
func (p *pass) advance() {
	c := p.next.canary
	if !p.running(&p.next) || failed(c) || p.ad.Spec.Paused {
		return
	}
	i := stepIndex(c)
	if i >= int32(len(p.steps)) {
		return // promoting: see complete
	}
	if p.preflightPending(c) {
		p.preflight(c)
		return // the canary's pods are made by the next pass
	}
	want := p.canaryPods(i)
	ready := p.obs.ready(p.track(), p.revision)
	if reason, msg := p.canaryFailure(c, want, ready); reason != "" {
		p.fail(reason, msg)
		return
	}
	step := p.steps[i]
	if c.Step.ReadyAt == nil {
		// A weighted step starts once the route carries its weight, as
		// the gateways accepted it.
		// A blue-green release's switch starts once the Service is seen
		// selecting the preview.
		if ready < want || p.weighted() && !p.stepCarried(i) ||
			p.isBlueGreen() && !p.weighted() && i == release.BlueGreenSwitched && p.obs.active() != platformv1.TrackPreview {
			return
		}
		now := p.now
		c.Step.ReadyAt = &now
		if pause := ptr.Deref(step.PauseSeconds, 0); pause > 0 {
			until := metav1.NewTime(now.Add(time.Duration(pause) * time.Second))
			c.Step.PauseUntil = &until
		}
	}
	passed := true
	if p.analyzed(i) {
		passed = p.analyze(c)
		if p.next.canary != c || failed(c) {
			return // the analysis failed the canary
		}
	}
	if needsApproval(step) {
		return // waits for promote: see handlePromote
	}
	if u := c.Step.PauseUntil; u != nil && p.now.Before(u) {
		p.wakeAt(u.Time)
		return
	}
	if passed {
		p.completeStep("")
	}
}

// needsApproval reports whether a step waits for a person: its approval is
// Manual (release.Steps makes it so when nothing judges the step).
func needsApproval(step platformv1.CanaryStep) bool {
	return step.Approval == platformv1.ApprovalManual
}

// completeStep records the current step as complete and moves to the next,
// or to the promotion after the last.
func (p *pass) completeStep(by string) {
	c := p.next.canary
	i := stepIndex(c)
	msg := fmt.Sprintf("Canary %s: step %d/%d (%d%%) completed", describe(c.Version, c.Revision), i+1, len(p.steps), p.steps[i].Weight)
	if p.isBlueGreen() {
		msg = p.blueGreenStepMessage(c, i)
	}
	if by != "" {
		msg += ", promoted by " + by
	} else if e := evidence(c.Analysis); e != "" {
		msg += ": " + e
	}
	now := p.now
	c.Step = &platformv1.CanaryStepStatus{Index: ptr.To(i + 1), Total: int32(len(p.steps)), StartedAt: &now}

	if i+1 >= int32(len(p.steps)) {
		msg += "; the stable Deployment takes it"
	}
	reason := EventStepCompleted
	if p.isBlueGreen() && i == release.BlueGreenPreview {
		msg += fmt.Sprintf("; Service %s switches to it", p.ad.Name)
		reason = EventSwitched
	}
	p.transition(corev1.EventTypeNormal, reason, "Promote", msg)
}

// canaryFailure says why a canary failed, if it did: one of its pods cannot
// start or restarts too often, or its pods were not ready by the progress
// deadline. Pods of an earlier attempt do not count.
func (p *pass) canaryFailure(c *platformv1.CanaryStatus, want, ready int32) (string, string) {
	for i := range p.obs.pods {
		pod := &p.obs.pods[i]
		if pod.Labels[platformv1.TrackLabel] != p.track() || pod.Labels[platformv1.RevisionLabel] != c.Revision ||
			c.StartedAt != nil && pod.CreationTimestamp.Before(c.StartedAt) {
			continue
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && failingWaitReasons[w.Reason] {
				return w.Reason, fmt.Sprintf("pod %s: container %s is waiting in %s: %s", pod.Name, cs.Name, w.Reason, w.Message)
			}
			if cs.RestartCount > maxRestarts {
				return "TooManyRestarts", fmt.Sprintf("pod %s: container %s restarted %d times", pod.Name, cs.Name, cs.RestartCount)
			}
		}
	}
	if ready < want && c.Step.ReadyAt == nil && c.Step.StartedAt != nil {
		deadline := c.Step.StartedAt.Add(time.Duration(p.ad.Spec.ProgressDeadlineSeconds) * time.Second)
		if !p.now.Time.Before(deadline) {
			return platformv1.ReasonProgressDeadlineExceeded, fmt.Sprintf("%d of %d %s pods ready after %ds (progressDeadlineSeconds)",
				ready, want, p.track(), p.ad.Spec.ProgressDeadlineSeconds)
		}
		p.wakeAt(deadline)
	}
	return "", ""
}

// fail applies rollback.onFailure to a failed canary: it is rolled back, or
// held as it is.
func (p *pass) fail(reason, msg string) {
	c := p.next.canary
	if p.ad.Spec.Rollback.OnFailure == platformv1.FailurePause {
		now := p.now
		c.Failure = platformv1.CanaryFailure{Reason: reason, Message: msg, FailedAt: &now}
		p.transition(corev1.EventTypeWarning, EventCanaryFailed, "Hold",
			fmt.Sprintf("%s %s failed (%s: %s); held for a retry or an abort (rollback.onFailure Pause)%s",
				p.noun(), describe(c.Version, c.Revision), reason, msg, p.switchBack(c)))
		return
	}
	p.end(platformv1.OutcomeRolledBack, reason, fmt.Sprintf("%s %s rolled back: %s%s",
		p.noun(), describe(c.Version, c.Revision), msg, p.switchBack(c)))
}

// end records the outcome of the canary and drops it; the children wind it
// down (stable back to full size first, then the canary removed).
func (p *pass) end(result platformv1.OutcomeResult, reason, msg string) {
	c := p.next.canary
	now := p.now
	p.next.outcome = platformv1.Outcome{Revision: c.Revision, Version: c.Version, Result: result, Reason: reason, Message: msg, FinishedAt: &now}
	p.next.canary = nil
	typ, ev := corev1.EventTypeWarning, EventRolledBack
	if result == platformv1.OutcomeAborted {
		ev = EventAborted
	}
	if result == platformv1.OutcomePromoted {
		typ, ev = corev1.EventTypeNormal, EventPromoted
	}
	p.transitionWithOutcome(typ, ev, string(result), msg, c.StartedAt)
}

// complete records a release as finished once the stable Deployment has
// rolled out the spec's revision at full size: a canary's promotion, a
// rolling or recreate release, a return to a promoted revision, or the
// first creation. The revision joins the history.
func (p *pass) complete() {
	st := p.obs.stable
	if p.stableRevision() != p.revision || !rolledOut(st, p.replicas) {
		return
	}
	if len(p.next.history) > 0 && p.next.history[0].Revision == p.revision {
		return // recorded
	}
	if c := p.next.canary; c != nil {
		if !p.running(&p.next) || stepIndex(c) < int32(len(p.steps)) {
			return
		}
		p.end(platformv1.OutcomePromoted, platformv1.ReasonPromoted,
			fmt.Sprintf("%s %s promoted: %d stable pods run it", p.noun(), describe(c.Version, c.Revision), p.replicas))
	} else {
		reason, what := platformv1.ReasonRolledOut, "rolled out"
		switch {
		case p.promotedBefore():
			reason, what = platformv1.ReasonPreviousRevision, "rolled back to directly (promoted before)"
		case len(p.next.history) == 0:
			reason, what = platformv1.ReasonCreated, "created"
		}
		now := p.now
		msg := fmt.Sprintf("%s %s: %d pods run it", describe(p.version(), p.revision), what, p.replicas)
		p.next.outcome = platformv1.Outcome{Revision: p.revision, Version: p.version(), Result: platformv1.OutcomePromoted,
			Reason: reason, Message: msg, FinishedAt: &now}
		p.transitionWithOutcome(corev1.EventTypeNormal, EventReleased, "Release", msg, p.stored.progress)
	}
	p.next.history = promote(p.next.history, platformv1.Revision{
		Revision: p.revision, Version: p.version(), Image: p.ad.Spec.Image, PromotedAt: ptr.To(p.now),
	}, limit(p.ad))
}

// promote puts rev first in the history, without an older entry of the same
// revision, and keeps at most n entries.
func promote(history []platformv1.Revision, rev platformv1.Revision, n int) []platformv1.Revision {
	out := []platformv1.Revision{rev}
	for _, h := range history {
		if h.Revision != rev.Revision && len(out) < n {
			out = append(out, h)
		}
	}
	return out
}

// limit is how many promoted revisions the status keeps.
func limit(ad *platformv1.AppDeployment) int {
	return int(max(ptr.Deref(ad.Spec.Rollback.RevisionHistoryLimit, platformv1.DefaultRevisionHistoryLimit), 1))
}

// transition records a change of the release for an event.
func (p *pass) transition(eventType, reason, action, msg string) {
	p.events = append(p.events, transition{eventType: eventType, reason: reason, action: action, message: msg})
}

// transitionWithOutcome records the end of a release for an event and the
// outcome metrics.
func (p *pass) transitionWithOutcome(eventType, reason, action, msg string, started *metav1.Time) {
	o := p.next.outcome
	p.events = append(p.events, transition{eventType: eventType, reason: reason, action: action, message: msg, outcome: &o, started: started})
}

// wakeAt asks for a pass at t. The wait counts from the clock's exact
// reading: counted from the pass's whole second, it would come up to a
// second after t.
func (p *pass) wakeAt(t time.Time) {
	d := t.Sub(p.exact)
	if d <= 0 {
		// t has come by the clock, but not yet for the pass, which sees time
		// in whole seconds: it comes at the next one.
		d = p.now.Add(time.Second).Sub(p.exact)
	}
	if p.requeueAfter == 0 || d < p.requeueAfter {
		p.requeueAfter = d
	}
}

// describe names a version for people: its version, else its revision.
func describe(version, revision string) string {
	if version != "" {
		return version
	}
	return "revision " + revision
}
