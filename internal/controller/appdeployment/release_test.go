// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
)

// world is a small model of what the cluster does with an application's
// Deployments: each keeps its pods at its size and template, a new pod
// before an old one goes (maxUnavailable 0). The pass's decisions are
// applied to it as the reconciler would, and the status written back, so a
// test drives a release from start to end in memory, and checks the
// release's invariants after every pass. (Behaviour that the API server or
// the real controllers decide is tested on envtest and kwok.)
type world struct {
	t   *testing.T
	ad  *platformv1.AppDeployment
	now time.Time
	// deployments by track.
	deployments map[string]*appsv1.Deployment
	pods        []corev1.Pod
	// unready, when it returns true for a pod's revision, keeps new pods of
	// it from becoming ready; fail sets a waiting reason on them.
	unready func(revision string) bool
	fail    func(revision string) string
	seq     int
	// events are the reasons of the events the passes made.
	events []string
	// prometheus answers the analysis's measurements, taken at once when a
	// pass asks; measured is the last one, which the next pass observes.
	prometheus analysis.Provider
	measured   *measured
	// measurements counts the measurements taken, preflights included.
	measurements int
	// grewWithNewTemplate is set when the stable Deployment was given a new
	// template and more replicas in one apply.
	grewWithNewTemplate bool
	// route is the HTTPRoute of a weighted canary (see route_test.go);
	// gatewayAccepts makes its gateway accept each generation as it
	// settles.
	route          *gatewayv1.HTTPRoute
	gatewayAccepts bool
	// active is the track the Service <name> of a blue-green release
	// selects; switches counts the writes that changed it.
	active   string
	switches int
}

func newWorld(t *testing.T, ad *platformv1.AppDeployment) *world {
	return &world{t: t, ad: ad, now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		deployments: map[string]*appsv1.Deployment{},
		unready:     func(string) bool { return false }, fail: func(string) string { return "" }}
}

// observation is what the cache would show.
func (w *world) observation() *observation {
	obs := &observation{stable: w.deployments[platformv1.TrackStable], canary: w.deployments[w.newTrack()]}
	obs.stable, obs.canary = obs.stable.DeepCopy(), obs.canary.DeepCopy()
	if w.active != "" {
		obs.service = &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{platformv1.TrackLabel: w.active}}}
	}
	obs.pods = append(obs.pods, w.pods...)
	obs.measured = w.measured
	obs.route = w.routeObservation()
	return obs
}

// pass runs one reconcile pass and applies its decisions.
func (w *world) pass() *pass {
	w.t.Helper()
	p := newPass(w.ad, w.observation(), w.now)
	p.decide()
	c := p.children
	if p.obs.nameTaken == "" {
		w.apply(platformv1.TrackStable, c.stableTemplate, c.stableRevision, c.stableReplicas)
		if c.canaryReplicas != nil {
			w.apply(w.newTrack(), p.template, p.revision, *c.canaryReplicas)
		}
		if c.active != w.active {
			w.active = c.active
			w.switches++
		}
		if c.removeCanary {
			delete(w.deployments, w.newTrack())
		}
		for _, name := range c.stalePods {
			w.deletePod(name)
		}
		w.applyRoute(p)
	}
	w.ad.Status = p.status()
	for _, e := range p.events {
		w.events = append(w.events, e.reason)
	}
	// The measurer takes a measurement asked for before it is due when it
	// is due; the pass of that second asks for it again and takes it here.
	if p.measure != nil && w.prometheus != nil && !p.measure.due.After(w.now) {
		m := newMeasurer(w.prometheus, clocktesting.NewFakePassiveClock(w.now), measurerOptions{})
		w.measured = m.measure(types.NamespacedName{Namespace: w.ad.Namespace, Name: w.ad.Name}, p.measure)
		w.measurements++
	}
	return p
}

// newTrack is the track of the release's new pods: the canary's, or a
// blue-green release's preview.
func (w *world) newTrack() string {
	if w.ad.Spec.Strategy.Type == platformv1.StrategyBlueGreen {
		return platformv1.TrackPreview
	}
	return platformv1.TrackCanary
}

func (w *world) apply(track string, template *corev1.PodTemplateSpec, revision string, replicas int32) {
	d := w.deployments[track]
	if d == nil {
		d = &appsv1.Deployment{}
		w.deployments[track] = d
	}
	if template != nil {
		if track == platformv1.TrackStable && d.Spec.Template.Labels[platformv1.RevisionLabel] != revision &&
			d.Spec.Replicas != nil && replicas > *d.Spec.Replicas {
			w.grewWithNewTemplate = true
		}
		d.Spec.Template = *forTrack(template, revision, track)
	}
	d.Spec.Replicas = ptr.To(replicas)
}

// settle lets the Deployments' pods follow their Deployments, and reports
// each Deployment's status, as the Deployment controller and kubelet would.
func (w *world) settle() {
	for track, d := range w.deployments {
		rev := d.Spec.Template.Labels[platformv1.RevisionLabel]
		want := ptr.Deref(d.Spec.Replicas, 1)
		var cur, old []int
		for i := range w.pods {
			if w.pods[i].Labels[platformv1.TrackLabel] != track {
				continue
			}
			if w.pods[i].Labels[platformv1.RevisionLabel] == rev {
				cur = append(cur, i)
			} else {
				old = append(old, i)
			}
		}
		for n := int32(len(cur)); n < want; n++ {
			w.addPod(track, rev)
		}
		// Excess pods of the Deployment's revision go at once; old ones once
		// as many new ones are ready (maxUnavailable 0).
		var gone []string
		for n := int32(len(cur)); n > want; n-- {
			gone = append(gone, w.pods[cur[n-1]].Name)
		}
		readyNew := int32(0)
		for _, i := range cur {
			if podReady(&w.pods[i]) {
				readyNew++
			}
		}
		if readyNew >= want {
			for _, i := range old {
				gone = append(gone, w.pods[i].Name)
			}
		}
		for _, name := range gone {
			w.deletePod(name)
		}
	}
	for track, d := range w.deployments {
		rev := d.Spec.Template.Labels[platformv1.RevisionLabel]
		var all, ready, updated int32
		for i := range w.pods {
			pod := &w.pods[i]
			if pod.Labels[platformv1.TrackLabel] != track {
				continue
			}
			all++
			if podReady(pod) {
				ready++
			}
			if pod.Labels[platformv1.RevisionLabel] == rev {
				updated++
			}
		}
		d.Generation++
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: all, ReadyReplicas: ready,
			AvailableReplicas: ready, UpdatedReplicas: updated}
	}
	w.settleRoute()
}

func (w *world) addPod(track, rev string) {
	w.seq++
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("%s-%s-%d", track, rev, w.seq), CreationTimestamp: metav1.NewTime(w.now),
		Labels: map[string]string{platformv1.TrackLabel: track, platformv1.RevisionLabel: rev},
	}}
	status := corev1.ConditionTrue
	if w.unready(rev) {
		status = corev1.ConditionFalse
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	if reason := w.fail(rev); reason != "" {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: ContainerName,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
	}
	w.pods = append(w.pods, pod)
}

func (w *world) deletePod(name string) {
	for i := range w.pods {
		if w.pods[i].Name == name {
			w.pods = append(w.pods[:i], w.pods[i+1:]...)
			return
		}
	}
}

// run alternates passes and settling until neither the status nor the
// world changes, and checks after each pass that the application never runs
// short of ready pods once it had them, and that both tracks never run at
// full size. A pass once all is settled must change nothing.
func (w *world) run() {
	w.t.Helper()
	for range 60 {
		before, world := w.ad.Status.DeepCopy(), w.fingerprint()
		w.pass()
		w.check()
		w.settle()
		w.check()
		w.now = w.now.Add(time.Second)
		if meta.IsStatusConditionTrue(before.Conditions, platformv1.ConditionAvailable) &&
			!meta.IsStatusConditionTrue(w.ad.Status.Conditions, platformv1.ConditionAvailable) {
			w.t.Fatalf("the application lost availability: %s", w.ad.Status.Message)
		}
		if equalStatus(before, &w.ad.Status) && world == w.fingerprint() {
			return
		}
	}
	w.t.Fatalf("the release did not settle: %s", w.ad.Status.Message)
}

// fingerprint sums up the world's Deployments and pods.
func (w *world) fingerprint() string {
	var b strings.Builder
	fmt.Fprintf(&b, "active:%s;", w.active)
	for _, track := range []string{platformv1.TrackStable, platformv1.TrackCanary, platformv1.TrackPreview} {
		if d := w.deployments[track]; d != nil {
			fmt.Fprintf(&b, "%s:%s:%d;", track, d.Spec.Template.Labels[platformv1.RevisionLabel], ptr.Deref(d.Spec.Replicas, 1))
		}
	}
	for i := range w.pods {
		fmt.Fprintf(&b, "%s:%v;", w.pods[i].Name, podReady(&w.pods[i]))
	}
	if w.route != nil {
		fmt.Fprintf(&b, "route:%d;", w.route.Generation)
	}
	return b.String()
}

func equalStatus(a, b *platformv1.AppDeploymentStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}

// check asserts the release's invariants on the world as it is.
func (w *world) check() {
	w.t.Helper()
	n := ptr.Deref(w.ad.Spec.Replicas, 1)
	st, can := w.deployments[platformv1.TrackStable], w.deployments[platformv1.TrackCanary]
	if n > 1 && st != nil && can != nil && ptr.Deref(st.Spec.Replicas, 1) >= n && ptr.Deref(can.Spec.Replicas, 1) >= n {
		w.t.Fatalf("both Deployments at full size (%d)", n)
	}
	var ready int32
	byTrack := map[string]int32{}
	for i := range w.pods {
		if podReady(&w.pods[i]) {
			ready++
			byTrack[w.pods[i].Labels[platformv1.TrackLabel]]++
		}
	}
	if meta.IsStatusConditionTrue(w.ad.Status.Conditions, platformv1.ConditionAvailable) && ready < n {
		w.t.Fatalf("%d of %d pods ready while Available is True", ready, n)
	}
	// A blue-green release's Service always selects a track whose pods
	// are all ready, once the application was available.
	if w.active != "" && meta.IsStatusConditionTrue(w.ad.Status.Conditions, platformv1.ConditionAvailable) &&
		byTrack[w.active] < n {
		w.t.Fatalf("the Service selects the %s pods, %d of %d ready", w.active, byTrack[w.active], n)
	}
}

// request sets a request annotation to a new value.
func (w *world) request(annotation string) {
	if w.ad.Annotations == nil {
		w.ad.Annotations = map[string]string{}
	}
	w.seq++
	w.ad.Annotations[annotation] = fmt.Sprint(w.seq)
	w.ad.Annotations[annotation+platformv1.RequestedBySuffix] = "alice"
}

func (w *world) setImage(image string) {
	w.ad.Spec.Image = image
	w.ad.Generation++
}

func (w *world) podsOf(track string) (n int) {
	for i := range w.pods {
		if w.pods[i].Labels[platformv1.TrackLabel] == track {
			n++
		}
	}
	return n
}

func (w *world) expectPhase(phase platformv1.Phase, reason string) {
	w.t.Helper()
	if w.ad.Status.Phase != phase {
		w.t.Fatalf("phase %s (%s), want %s", w.ad.Status.Phase, w.ad.Status.Message, phase)
	}
	ready := meta.FindStatusCondition(w.ad.Status.Conditions, platformv1.ConditionReady)
	if reason != "" && (ready == nil || ready.Reason != reason) {
		w.t.Fatalf("Ready %+v, want reason %s", ready, reason)
	}
}

func (w *world) expectEvents(reasons ...string) {
	w.t.Helper()
	got := strings.Join(w.events, ",")
	for _, r := range reasons {
		if !strings.Contains(got, r) {
			w.t.Fatalf("events %s, want %s among them", got, r)
		}
	}
	w.events = nil
}

// Versions and images of the tests' releases.
const (
	v123     = "v1.2.3"
	v124     = "v1.2.4"
	image123 = "harbor.example.com/order-service:" + v123
	image124 = "harbor.example.com/order-service:" + v124
	image125 = "harbor.example.com/order-service:v1.2.5"
	// imagePullBackOff is the waiting reason of a pod whose image cannot be pulled.
	imagePullBackOff = "ImagePullBackOff"
)

// canaryApp is the design documents' manifest, defaulted.
func canaryApp() *platformv1.AppDeployment {
	ad := app()
	ad.Spec.Port = 0
	ad.Spec.ProgressDeadlineSeconds = 600
	ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30}
	return ad
}

func TestRelease_FirstCreationGoesStraightToStable(t *testing.T) {
	w := newWorld(t, canaryApp())
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	if w.deployments[platformv1.TrackCanary] != nil || w.podsOf(platformv1.TrackStable) != 3 {
		t.Fatalf("want 3 stable pods and no canary, have %d and %v", w.podsOf(platformv1.TrackStable), w.deployments[platformv1.TrackCanary] != nil)
	}
	st := w.ad.Status
	if st.StableVersion != v123 || len(st.Revisions) != 1 || st.LastOutcome.Reason != platformv1.ReasonCreated {
		t.Fatalf("status %+v", st)
	}
	w.expectEvents(EventReleased)
}

func TestRelease_CanaryWaitsForPromotionThenPromotes(t *testing.T) {
	w := newWorld(t, canaryApp())
	w.run()
	w.setImage(image124)
	w.run()
	w.expectPhase(platformv1.PhasePaused, platformv1.ReasonWaitingForApproval)
	st := w.ad.Status
	if st.PauseReason != platformv1.PauseApproval || st.Canary == nil || *st.Canary.ReadyReplicas != 1 ||
		*st.Canary.Weight.Actual != 33 || *st.Canary.Weight.Desired != 33 {
		t.Fatalf("status %+v canary %+v", st, st.Canary)
	}
	if w.podsOf(platformv1.TrackStable) != 2 || w.podsOf(platformv1.TrackCanary) != 1 {
		t.Fatalf("%d stable and %d canary pods, want 2 and 1", w.podsOf(platformv1.TrackStable), w.podsOf(platformv1.TrackCanary))
	}
	if !strings.Contains(st.Message, "canary v1.2.4: 1/1 pods (33%)") || !strings.Contains(st.Message, "waiting for promotion") {
		t.Fatalf("message %q", st.Message)
	}
	w.expectEvents(EventCanaryStarted)

	w.request(platformv1.PromoteAnnotation)
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	st = w.ad.Status
	if st.StableVersion != v124 || st.Canary != nil || w.deployments[platformv1.TrackCanary] != nil ||
		st.LastOutcome.Result != platformv1.OutcomePromoted || len(st.Revisions) != 2 || st.Revisions[0].Version != v124 ||
		st.HandledRequests.Promote != w.ad.Annotations[platformv1.PromoteAnnotation] {
		t.Fatalf("status %+v", st)
	}
	w.expectEvents(EventStepCompleted, EventPromoted)
	if w.grewWithNewTemplate {
		t.Error("the stable Deployment got the new template and more replicas in one change: the Deployment controller grows its old pods first")
	}
	if got := w.podsOf(platformv1.TrackStable); got != 3 {
		t.Errorf("%d stable pods after the promotion, want 3", got)
	}
}

func TestRelease_AbortRestoresStableBeforeRemovingTheCanary(t *testing.T) {
	w := newWorld(t, canaryApp())
	w.run()
	w.setImage(image124)
	w.run()
	w.request(platformv1.AbortAnnotation)
	p := w.pass()
	if p.children.removeCanary {
		t.Fatalf("the canary is removed in the pass that records the abort")
	}
	w.settle()
	// The stable Deployment grows back first.
	p = w.pass()
	if p.children.stableReplicas != 3 || p.children.removeCanary {
		t.Fatalf("children %+v: want the stable Deployment back to 3 before the canary goes", p.children)
	}
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonAborted)
	if w.deployments[platformv1.TrackCanary] != nil || w.podsOf(platformv1.TrackStable) != 3 || w.ad.Status.StableVersion != v123 {
		t.Fatalf("after the abort: canary %v, %d stable pods, stable %s", w.deployments[platformv1.TrackCanary] != nil,
			w.podsOf(platformv1.TrackStable), w.ad.Status.StableVersion)
	}
	w.expectEvents(EventAborted)

	// A retry starts the canary again; a new version would too.
	w.request(platformv1.RetryAnnotation)
	w.run()
	w.expectPhase(platformv1.PhasePaused, platformv1.ReasonWaitingForApproval)
}

func TestRelease_CanaryThatCannotPullItsImageRollsBackAtOnce(t *testing.T) {
	w := newWorld(t, canaryApp())
	w.run()
	w.setImage("harbor.example.com/order-service:v9.9.9")
	_, bad := podTemplate(w.ad)
	w.unready = func(rev string) bool { return rev == bad }
	w.fail = func(rev string) string {
		if rev == bad {
			return imagePullBackOff
		}
		return ""
	}
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonRolledBack)
	o := w.ad.Status.LastOutcome
	if o.Result != platformv1.OutcomeRolledBack || o.Reason != imagePullBackOff || o.Version != "v9.9.9" {
		t.Fatalf("outcome %+v", o)
	}
	if w.deployments[platformv1.TrackCanary] != nil || w.podsOf(platformv1.TrackStable) != 3 {
		t.Fatal("the canary is not removed or the stable not whole")
	}
	w.expectEvents(EventCanaryStarted, EventRolledBack)
}

func TestRelease_CanaryNeverReadyFailsAtTheProgressDeadline(t *testing.T) {
	ad := canaryApp()
	ad.Spec.ProgressDeadlineSeconds = 20
	w := newWorld(t, ad)
	w.run()
	w.setImage(image124)
	w.unready = func(string) bool { return true }
	w.run()
	w.expectPhase(platformv1.PhaseProgressing, platformv1.ReasonCanarying)
	w.now = w.now.Add(20 * time.Second)
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonRolledBack)
	if w.ad.Status.LastOutcome.Reason != "ProgressDeadlineExceeded" {
		t.Fatalf("outcome %+v", w.ad.Status.LastOutcome)
	}
}

func TestRelease_NewVersionDuringACanaryReplacesIt(t *testing.T) {
	w := newWorld(t, canaryApp())
	w.run()
	w.setImage(image124)
	w.run()
	w.setImage(image125)
	w.run()
	st := w.ad.Status
	if st.Canary == nil || st.Canary.Version != "v1.2.5" || st.StableVersion != v123 {
		t.Fatalf("canary %+v, stable %s", st.Canary, st.StableVersion)
	}
	w.expectEvents(EventCanaryReplaced, EventCanaryStarted)
}

func TestRelease_GoingBackToAPromotedRevisionSkipsTheCanary(t *testing.T) {
	w := newWorld(t, canaryApp())
	w.run()
	w.setImage(image124)
	w.run()
	w.request(platformv1.PromoteAnnotation)
	w.run()
	w.expectEvents(EventPromoted)
	w.setImage(image123)
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	if w.ad.Status.LastOutcome.Reason != platformv1.ReasonPreviousRevision || w.ad.Status.StableVersion != v123 {
		t.Fatalf("outcome %+v", w.ad.Status.LastOutcome)
	}
	if strings.Contains(strings.Join(w.events, ","), EventCanaryStarted) {
		t.Fatalf("a canary started: %v", w.events)
	}
}

func TestRelease_StepsWithPausesCompleteByThemselves(t *testing.T) {
	ad := canaryApp()
	ad.Spec.Replicas = ptr.To[int32](10)
	ad.Spec.Strategy.CanaryPercent = 0
	ad.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 10, PauseSeconds: ptr.To[int32](5)}, {Weight: 50, PauseSeconds: ptr.To[int32](5)}}
	w := newWorld(t, ad)
	w.run()
	w.setImage(image124)
	for range 5 {
		w.run()
		if w.ad.Status.Phase == platformv1.PhaseHealthy {
			break
		}
		w.now = w.now.Add(5 * time.Second)
	}
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	if w.ad.Status.StableVersion != v124 {
		t.Fatalf("stable %s", w.ad.Status.StableVersion)
	}
}

func TestRelease_RollingUpdateRecordsTheRevision(t *testing.T) {
	ad := canaryApp()
	ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyRolling}
	w := newWorld(t, ad)
	w.run()
	w.setImage(image124)
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
	if w.ad.Status.LastOutcome.Reason != platformv1.ReasonRolledOut || w.deployments[platformv1.TrackCanary] != nil {
		t.Fatalf("outcome %+v", w.ad.Status.LastOutcome)
	}
}

func TestRelease_PausedHoldsTheCanaryWhereItIs(t *testing.T) {
	ad := canaryApp()
	ad.Spec.Strategy.CanaryPercent = 0
	ad.Spec.Strategy.Steps = []platformv1.CanaryStep{{Weight: 30, PauseSeconds: ptr.To[int32](5)}}
	w := newWorld(t, ad)
	w.run()
	w.setImage(image124)
	w.ad.Spec.Paused = true
	w.run()
	w.expectPhase(platformv1.PhasePaused, platformv1.ReasonPaused)
	if w.ad.Status.Canary != nil || w.deployments[platformv1.TrackCanary] != nil {
		t.Fatal("a canary started while paused")
	}
	w.expectEvents(EventPaused)
	w.ad.Spec.Paused = false
	w.run()
	w.expectEvents(EventResumed, EventCanaryStarted)
	// Paused mid-step: the pause's end does not complete the step.
	w.ad.Spec.Paused = true
	w.now = w.now.Add(time.Minute)
	w.run()
	w.expectPhase(platformv1.PhasePaused, platformv1.ReasonPaused)
	if w.ad.Status.Canary == nil || stepIndex(w.ad.Status.Canary) != 0 {
		t.Fatalf("canary %+v moved while paused", w.ad.Status.Canary)
	}
	w.ad.Spec.Paused = false
	w.run()
	w.expectPhase(platformv1.PhaseHealthy, platformv1.ReasonReleased)
}

func TestRelease_OnFailurePauseHoldsTheCanaryUntilARetryWithNewPods(t *testing.T) {
	ad := canaryApp()
	ad.Spec.Rollback.OnFailure = platformv1.FailurePause
	w := newWorld(t, ad)
	w.run()
	w.setImage(image124)
	pulling := true
	w.unready = func(rev string) bool { return pulling && rev != w.ad.Status.StableRevision }
	w.fail = func(rev string) string {
		if pulling && rev != w.ad.Status.StableRevision {
			return imagePullBackOff
		}
		return ""
	}
	w.run()
	w.expectPhase(platformv1.PhaseDegraded, platformv1.ReasonCanaryFailed)
	if c := w.ad.Status.Canary; c == nil || c.Failure.Reason != imagePullBackOff || w.deployments[platformv1.TrackCanary] == nil {
		t.Fatalf("canary %+v: want it held with its failure", c)
	}
	w.expectEvents(EventCanaryFailed)
	// The registry recovers; a retry replaces the failed pod with a new one.
	pulling = false
	w.request(platformv1.RetryAnnotation)
	w.run()
	w.expectPhase(platformv1.PhasePaused, platformv1.ReasonWaitingForApproval)
	if c := w.ad.Status.Canary; c.Failure.Reason != "" || *c.ReadyReplicas != 1 {
		t.Fatalf("canary %+v after the retry", c)
	}
	w.expectEvents(EventCanaryStarted)
}

func TestRelease_RequestsAreActedOnOnce(t *testing.T) {
	w := newWorld(t, canaryApp())
	w.run()
	w.request(platformv1.PromoteAnnotation)
	w.run()
	if w.ad.Status.HandledRequests.Promote == "" {
		t.Fatal("a promote with no canary is not acknowledged")
	}
	w.expectEvents(EventRequestIgnored)
	// The same value does nothing once the next canary starts.
	w.setImage(image124)
	w.run()
	w.expectPhase(platformv1.PhasePaused, platformv1.ReasonWaitingForApproval)
}
