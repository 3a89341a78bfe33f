// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core/clitest"
)

// now is the time of every test.
var now = clitest.Now

func at(d time.Duration) *metav1.Time { return clitest.At(d) }

// readyCondition is a Ready condition of generation gen, changed at changed.
func readyCondition(status metav1.ConditionStatus, reason string, gen int64, changed time.Duration) metav1.Condition {
	return metav1.Condition{Type: platformv1.ConditionReady, Status: status, Reason: reason, ObservedGeneration: gen, LastTransitionTime: *at(changed)}
}

// app is an AppDeployment of generation gen whose status the operator
// wrote for that generation, created a day before now.
func app(ns, name string, gen int64, spec platformv1.AppDeploymentSpec, status platformv1.AppDeploymentStatus) *platformv1.AppDeployment {
	status.ObservedGeneration = gen
	return &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: gen, CreationTimestamp: *at(-26 * time.Hour)},
		Spec:       spec,
		Status:     status,
	}
}

// The revisions of order-service, newest first.
var (
	rev123 = platformv1.Revision{Revision: "5d8f7c9b4", Version: "v1.2.3", Image: "harbor.example.com/order-service:v1.2.3", PromotedAt: at(-2 * time.Hour)}
	rev122 = platformv1.Revision{Revision: "66c4d8f5b", Version: "v1.2.2", Image: "harbor.example.com/order-service:v1.2.2", PromotedAt: at(-72 * time.Hour)}
	rev121 = platformv1.Revision{Revision: "1a2b3c4d5", Version: "v1.2.1", Image: "harbor.example.com/order-service:v1.2.1", PromotedAt: at(-240 * time.Hour)}
)

// orderService is a canary of v1.2.4 at its first of three steps, ready and
// waiting for approval, with a promote request the operator has not
// handled yet.
func orderService() *platformv1.AppDeployment {
	ad := app("team", "order-service", 4, platformv1.AppDeploymentSpec{
		Image:    "harbor.example.com/order-service:v1.2.4",
		Replicas: ptr.To[int32](4),
		Strategy: platformv1.Strategy{
			Type: platformv1.StrategyCanary,
			Steps: []platformv1.CanaryStep{
				{Weight: 25, Approval: platformv1.ApprovalManual},
				{Weight: 50, PauseSeconds: ptr.To[int32](300)},
				{Weight: 75},
			},
			CanaryCriteria: []platformv1.CanaryCriterion{
				{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)},
				{Metric: platformv1.MetricSuccessRate, Threshold: ptr.To(99.9)},
			},
		},
	}, platformv1.AppDeploymentStatus{
		Phase: platformv1.PhasePaused, PauseReason: platformv1.PauseApproval,
		Message:  "canary v1.2.4 (7b9e1a3c2): 1/1 pods (25%), step 1/3 (25%), waiting for promotion",
		Replicas: ptr.To[int32](4), ReadyReplicas: ptr.To[int32](4), UpdatedReplicas: ptr.To[int32](1), AvailableReplicas: ptr.To[int32](4),
		StableVersion: "v1.2.3", StableImage: rev123.Image, StableRevision: rev123.Revision,
		CurrentVersion: "v1.2.4", CurrentRevision: "7b9e1a3c2",
		Canary: &platformv1.CanaryStatus{
			Revision: "7b9e1a3c2", Version: "v1.2.4", Replicas: ptr.To[int32](1), ReadyReplicas: ptr.To[int32](1),
			Weight:    &platformv1.CanaryWeight{Desired: ptr.To[int32](25), Actual: ptr.To[int32](25)},
			StartedAt: at(-6 * time.Minute),
			Step:      &platformv1.CanaryStepStatus{Index: ptr.To[int32](0), Total: 3, StartedAt: at(-6 * time.Minute), ReadyAt: at(-5 * time.Minute)},
		},
		HandledRequests: platformv1.HandledRequests{Promote: "2026-11-28T09:00:00Z"},
		LastOutcome: platformv1.Outcome{Revision: rev123.Revision, Version: "v1.2.3", Result: platformv1.OutcomePromoted,
			Reason: platformv1.ReasonPromoted, Message: "Canary v1.2.3 (5d8f7c9b4) promoted: 4 stable pods run it", FinishedAt: at(-2 * time.Hour)},
		Revisions: []platformv1.Revision{rev123, rev122, rev121},
		Conditions: []metav1.Condition{
			readyCondition(metav1.ConditionFalse, platformv1.ReasonWaitingForApproval, 4, -5*time.Minute),
		},
	})
	ad.Annotations = map[string]string{platformv1.PromoteAnnotation: "2026-11-29T11:59:00Z"}
	return ad
}

// web is a rolling update released and healthy.
func web() *platformv1.AppDeployment {
	return app("team", "web", 2, platformv1.AppDeploymentSpec{
		Image: "nginx:1.27", Version: "v2.0.0", Replicas: ptr.To[int32](2),
	}, platformv1.AppDeploymentStatus{
		Phase: platformv1.PhaseHealthy, Message: "v2.0.0 (84f6b9c7d): 2/2 pods ready",
		Replicas: ptr.To[int32](2), ReadyReplicas: ptr.To[int32](2),
		StableVersion: "v2.0.0", StableImage: "nginx:1.27", StableRevision: "84f6b9c7d",
		CurrentVersion: "v2.0.0", CurrentRevision: "84f6b9c7d",
		Conditions: []metav1.Condition{readyCondition(metav1.ConditionTrue, platformv1.ReasonReleased, 2, -time.Hour)},
	})
}

// checkout's canary of v3.1.0 was rolled back: v3.0.0 runs.
func checkout() *platformv1.AppDeployment {
	return app("team", "checkout", 7, platformv1.AppDeploymentSpec{
		Image: "harbor.example.com/checkout:v3.1.0", Replicas: ptr.To[int32](3),
		Strategy: platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30},
	}, platformv1.AppDeploymentStatus{
		Phase:    platformv1.PhaseDegraded,
		Message:  "Canary v3.1.0 (9e8d7c6b5) rolled back: CrashLoopBackOff; stable v3.0.0 (3c4d5e6f7)",
		Replicas: ptr.To[int32](3), ReadyReplicas: ptr.To[int32](3),
		StableVersion: "v3.0.0", StableImage: "harbor.example.com/checkout:v3.0.0", StableRevision: "3c4d5e6f7",
		CurrentVersion: "v3.1.0", CurrentRevision: "9e8d7c6b5",
		LastOutcome: platformv1.Outcome{Revision: "9e8d7c6b5", Version: "v3.1.0", Result: platformv1.OutcomeRolledBack,
			Reason: "CrashLoopBackOff", Message: "Canary v3.1.0 (9e8d7c6b5) rolled back: CrashLoopBackOff", FinishedAt: at(-10 * time.Minute)},
		Revisions:  []platformv1.Revision{{Revision: "3c4d5e6f7", Version: "v3.0.0", Image: "harbor.example.com/checkout:v3.0.0", PromotedAt: at(-48 * time.Hour)}},
		Conditions: []metav1.Condition{readyCondition(metav1.ConditionFalse, platformv1.ReasonRolledBack, 7, -10*time.Minute)},
	})
}

// batch, in another namespace, has never been seen by the operator.
func batch() *platformv1.AppDeployment {
	ad := app("other", "batch", 1, platformv1.AppDeploymentSpec{Image: "busybox:1.36", Strategy: platformv1.Strategy{Type: platformv1.StrategyRecreate}},
		platformv1.AppDeploymentStatus{})
	ad.Status.ObservedGeneration = 0
	return ad
}

// cluster is what the command tests read: three AppDeployments in team,
// one in other, and events about order-service.
func cluster() []client.Object {
	event := func(name, typ, reason, note string, ago time.Duration) *eventsv1.Event {
		return &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name},
			Regarding:  corev1.ObjectReference{Kind: kind, Name: "order-service", Namespace: "team"},
			Reason:     reason, Type: typ, Note: note, EventTime: metav1.NewMicroTime(now.Add(-ago)),
		}
	}
	return []client.Object{
		orderService(), web(), checkout(), batch(),
		event("order-service.2", corev1.EventTypeNormal, "CanaryStarted", "Canary v1.2.4 (7b9e1a3c2) started", 6*time.Minute),
		event("order-service.1", corev1.EventTypeNormal, "Promoted", "Canary v1.2.3 (5d8f7c9b4) promoted", 2*time.Hour),
		// About another object: not shown.
		&eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web.1"},
			Regarding:  corev1.ObjectReference{Kind: kind, Name: "web", Namespace: "team"},
			Reason:     "Released", Type: corev1.EventTypeNormal, Note: "v2.0.0 rolled out", EventTime: metav1.NewMicroTime(now.Add(-time.Hour)),
		},
	}
}

// newClient is a fake cluster holding objs, with funcs in front of it.
func newClient(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) client.WithWatch {
	t.Helper()
	scheme, err := Plugin.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return clitest.NewClient(t, scheme, funcs, objs, &platformv1.AppDeployment{})
}

// run is the outcome of one command line.
type run struct {
	out, errOut string
	err         error
}

// code is the exit code core.Execute would give the run.
func (r run) code() int { return clitest.ExitCode(r.err) }

// execute runs the plugin in-process against c, in namespace team at now,
// with stdin as its standard input.
func execute(t *testing.T, c client.WithWatch, stdin string, args ...string) run {
	t.Helper()
	r := clitest.Execute(t, Plugin, c, stdin, args...)
	return run{out: r.Out, errOut: r.ErrOut, err: r.Err}
}
