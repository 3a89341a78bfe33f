// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// released is "api" of generation 5, released: v2 stable, ready and
// observed. The cases below change it.
func released() *platformv1.AppDeployment {
	return app("team", "api", 5, platformv1.AppDeploymentSpec{Image: "api:v2.0.0", Replicas: ptr.To[int32](2)},
		platformv1.AppDeploymentStatus{
			Phase: platformv1.PhaseHealthy, Message: "v2.0.0 (222): 2/2 pods ready",
			StableVersion: "v2.0.0", StableRevision: "222", CurrentVersion: "v2.0.0", CurrentRevision: "222",
			Conditions: []metav1.Condition{readyCondition(metav1.ConditionTrue, platformv1.ReasonReleased, 5, -time.Minute)},
		})
}

// withStatus is released() changed by each change in turn.
func withStatus(changes ...func(*platformv1.AppDeployment)) *platformv1.AppDeployment {
	ad := released()
	for _, change := range changes {
		change(ad)
	}
	return ad
}

// The version and revision of the spec in the release the cases watch.
const (
	nextVersion  = "v2.1.0"
	nextRevision = "333"
)

// notReady makes the Ready condition False for reason, with phase, pause
// reason and message: the status of a release that is not done.
func notReady(phase platformv1.Phase, pause platformv1.PauseReason, reason, msg string) func(*platformv1.AppDeployment) {
	return func(ad *platformv1.AppDeployment) {
		st := &ad.Status
		st.Phase, st.PauseReason, st.Message = phase, pause, msg
		st.CurrentVersion, st.CurrentRevision = nextVersion, nextRevision
		st.Conditions[0].Status, st.Conditions[0].Reason = metav1.ConditionFalse, reason
	}
}

func TestStatus_ExitCodeOfEachState(t *testing.T) {
	for _, tt := range []struct {
		name    string
		ad      *platformv1.AppDeployment
		code    int
		out     string
		wantErr string
	}{
		{
			name: "released",
			ad:   released(),
			code: 0,
			out:  "api Healthy: v2.0.0 (222): 2/2 pods ready\napi: v2.0.0 (222) is released\n",
		},
		{
			name: "a newer spec the operator has not observed",
			ad:   withStatus(func(ad *platformv1.AppDeployment) { ad.Generation = 6 }),
			code: 2,
			out:  "api Progressing: waiting for the operator to observe generation 6 (the status is of generation 5)\n",
		},
		{
			name: "Ready written for an older generation",
			ad:   withStatus(func(ad *platformv1.AppDeployment) { ad.Status.Conditions[0].ObservedGeneration = 4 }),
			code: 2,
			out:  "api Progressing: waiting for the operator to observe generation 5 (its Ready condition is of an older one)\n",
		},
		{
			name: "never observed",
			ad: withStatus(func(ad *platformv1.AppDeployment) {
				ad.Generation, ad.Status = 1, platformv1.AppDeploymentStatus{}
			}),
			code: 2,
		},
		{
			name: "Ready but the spec's revision is not the stable one",
			ad:   withStatus(func(ad *platformv1.AppDeployment) { ad.Status.CurrentRevision = nextRevision }),
			code: 2,
		},
		{
			name:    "canary progressing",
			ad:      withStatus(notReady(platformv1.PhaseProgressing, "", platformv1.ReasonCanarying, "canary v2.1.0 (333): 1/1 pods (50%), step 1/2 (50%)")),
			code:    2,
			out:     "api Progressing: canary v2.1.0 (333): 1/1 pods (50%), step 1/2 (50%)\n",
			wantErr: "api is not released yet: Progressing: canary v2.1.0 (333): 1/1 pods (50%), step 1/2 (50%)",
		},
		{
			name: "rolled back",
			ad:   withStatus(notReady(platformv1.PhaseDegraded, "", platformv1.ReasonRolledBack, "Canary v2.1.0 (333) rolled back: CrashLoopBackOff")),
			code: 1,
			wantErr: "api failed (RolledBack): Canary v2.1.0 (333) rolled back: CrashLoopBackOff; fix the spec, `kubectl appdeploy retry api`, " +
				"or `kubectl appdeploy undo api` to put the previous version back in the spec",
		},
		{
			name: "rolled back, of an adopter: the Deployment is what to fix",
			ad: withStatus(notReady(platformv1.PhaseDegraded, "", platformv1.ReasonRolledBack, "Canary v2.1.0 (333) rolled back: CrashLoopBackOff"),
				func(ad *platformv1.AppDeployment) {
					ad.Spec.Image, ad.Spec.WorkloadRef = "", platformv1.WorkloadRef{Name: "api-chart"}
				}),
			code: 1,
			wantErr: "api failed (RolledBack): Canary v2.1.0 (333) rolled back: CrashLoopBackOff; fix deployment api-chart's template " +
				"or roll it back (its pods are the ones released), or `kubectl appdeploy retry api`",
		},
		{
			name: "aborted",
			ad:   withStatus(notReady(platformv1.PhaseDegraded, "", platformv1.ReasonAborted, "Canary v2.1.0 (333) aborted by jane")),
			code: 1,
		},
		{
			// Ready says it even if the phase has not caught up.
			name: "rolled back by Ready's reason alone",
			ad:   withStatus(notReady(platformv1.PhaseProgressing, "", platformv1.ReasonRolledBack, "removing the canary")),
			code: 1,
		},
		{
			name:    "canary failure held",
			ad:      withStatus(notReady(platformv1.PhaseDegraded, "", platformv1.ReasonCanaryFailed, "canary v2.1.0 (333) failed")),
			code:    1,
			wantErr: "api failed (CanaryFailed): canary v2.1.0 (333) failed; `kubectl appdeploy retry api` or `kubectl appdeploy abort api`",
		},
		{
			name: "rollout past its deadline",
			ad:   withStatus(notReady(platformv1.PhaseDegraded, "", platformv1.ReasonProgressDeadlineExceeded, "no progress")),
			code: 1,
		},
		{
			name:    "waiting for approval",
			ad:      withStatus(notReady(platformv1.PhasePaused, platformv1.PauseApproval, platformv1.ReasonWaitingForApproval, "step 1/2, waiting for promotion")),
			code:    3,
			wantErr: "api is paused (Approval): step 1/2, waiting for promotion; `kubectl appdeploy promote api` continues it",
		},
		{
			// `promote` just sent: the waiting status is about to change.
			name: "waiting for approval with a promote not acknowledged yet",
			ad: withStatus(func(ad *platformv1.AppDeployment) {
				notReady(platformv1.PhasePaused, platformv1.PauseApproval, platformv1.ReasonWaitingForApproval, "step 1/2, waiting for promotion")(ad)
				ad.Annotations = map[string]string{platformv1.PromoteAnnotation: "2026-12-01T01:48:09Z"}
			}),
			code: 2,
			out: "api Progressing: waiting for the operator to act on the promote request " +
				"(platform.example.com/promote=2026-12-01T01:48:09Z)\n",
		},
		{
			name: "a promote the operator acknowledged",
			ad: withStatus(func(ad *platformv1.AppDeployment) {
				notReady(platformv1.PhasePaused, platformv1.PauseApproval, platformv1.ReasonWaitingForApproval, "step 1/2, waiting for promotion")(ad)
				ad.Annotations = map[string]string{platformv1.PromoteAnnotation: "2026-12-01T01:48:09Z"}
				ad.Status.HandledRequests.Promote = "2026-12-01T01:48:09Z"
			}),
			code: 3,
		},
		{
			// The operator holds requests while spec.paused does: the pause
			// is the answer.
			name: "a request held by spec.paused",
			ad: withStatus(func(ad *platformv1.AppDeployment) {
				notReady(platformv1.PhasePaused, platformv1.PauseManual, platformv1.ReasonPaused, "step 1/2, paused")(ad)
				ad.Spec.Paused = true
				ad.Annotations = map[string]string{platformv1.AbortAnnotation: "2026-12-01T01:48:09Z"}
			}),
			code: 3,
		},
		{
			name:    "paused by spec.paused",
			ad:      withStatus(notReady(platformv1.PhasePaused, platformv1.PauseManual, platformv1.ReasonPaused, "step 1/2, paused")),
			code:    3,
			wantErr: "api is paused (Manual): step 1/2, paused; `kubectl appdeploy resume api` continues it",
		},
		{
			name: "analysis without data, whatever the phase says",
			ad:   withStatus(notReady(platformv1.PhaseProgressing, platformv1.PauseNoData, platformv1.ReasonCanarying, "no data")),
			code: 3,
		},
		{
			name: "a failure the operator has not judged the new spec by",
			ad: withStatus(func(ad *platformv1.AppDeployment) {
				notReady(platformv1.PhaseDegraded, "", platformv1.ReasonRolledBack, "rolled back")(ad)
				ad.Generation = 6
			}),
			code: 2,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := execute(t, newClient(t, interceptor.Funcs{}, tt.ad), "", "status", "api")
			if r.code() != tt.code {
				t.Errorf("exit code %d (%v), want %d", r.code(), r.err, tt.code)
			}
			if tt.out != "" && r.out != tt.out {
				t.Errorf("output %q, want %q", r.out, tt.out)
			}
			if tt.wantErr != "" && (r.err == nil || r.err.Error() != tt.wantErr) {
				t.Errorf("error %v, want %q", r.err, tt.wantErr)
			}
		})
	}
}

func TestStatus_CannotTellExitsFour(t *testing.T) {
	gr := schema.GroupResource{Group: platformv1.GroupVersion.Group, Resource: "appdeployments"}
	failGet := func(err error) interceptor.Funcs {
		return interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return err
		}}
	}
	for _, tt := range []struct {
		name    string
		funcs   interceptor.Funcs
		args    []string
		wantErr string
	}{
		{"not found", interceptor.Funcs{}, []string{"status", "ghost"}, `appdeployment "ghost" not found in namespace "team"`},
		{"forbidden", failGet(apierrors.NewForbidden(gr, "api", errors.New("no RBAC"))), []string{"status", "api"}, "ask a cluster admin"},
		{"no cluster", failGet(errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")), []string{"status", "api"}, "connection refused"},
		{"unknown flag", interceptor.Funcs{}, []string{"status", "api", "--wacth"}, "unknown flag: --wacth"},
		{"no name", interceptor.Funcs{}, []string{"status"}, "accepts 1 arg(s), received 0"},
		{"timeout with --watch=false", interceptor.Funcs{}, []string{"status", "api", "--watch=false", "--timeout", "1m"}, "--timeout waits, --watch=false does not"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := execute(t, newClient(t, tt.funcs, released()), "", tt.args...)
			if r.code() != exitUnknown || !strings.Contains(r.err.Error(), tt.wantErr) {
				t.Errorf("exit code %d with %v, want %d with %q", r.code(), r.err, exitUnknown, tt.wantErr)
			}
		})
	}
}

// afterWatch starts change, with the client, once the command's watch has
// begun, so that the command first reads the object as the test made it.
func afterWatch(ctx context.Context, change func(context.Context, client.Client)) interceptor.Funcs {
	var once sync.Once
	return interceptor.Funcs{Watch: func(wctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
		w, err := c.Watch(wctx, list, opts...)
		once.Do(func() { go change(ctx, c) })
		return w, err
	}}
}

// rollOut plays the operator: it writes each status of steps in turn into
// the AppDeployment api, then keeps writing the last, until ctx ends. The
// fake client's watch starts some time after its list and misses what
// happened in between, so the last state is repeated until the wait ends.
func rollOut(ctx context.Context, c client.Client, steps ...func(*platformv1.AppDeployment)) {
	for i := 0; ctx.Err() == nil; i++ {
		ad := &platformv1.AppDeployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "api"}, ad); err == nil {
			steps[min(i, len(steps)-1)](ad)
			_ = c.Status().Update(ctx, ad)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStatus_WatchFollowsTheReleaseToItsEnd(t *testing.T) {
	progressing := notReady(platformv1.PhaseProgressing, "", platformv1.ReasonRollingOut, "v2.1.0 (333): 1/2 pods updated and ready")
	for _, tt := range []struct {
		name  string
		last  func(*platformv1.AppDeployment)
		code  int
		final string
	}{
		{"released", func(ad *platformv1.AppDeployment) {
			ad.Status = released().Status
			ad.Status.Message, ad.Status.StableVersion, ad.Status.StableRevision = "v2.1.0 (333): 2/2 pods ready", nextVersion, nextRevision
			ad.Status.CurrentVersion, ad.Status.CurrentRevision = nextVersion, nextRevision
		}, 0, "api Healthy: v2.1.0 (333): 2/2 pods ready\napi: v2.1.0 (333) is released\n"},
		{"rolled back", notReady(platformv1.PhaseDegraded, "", platformv1.ReasonRolledBack, "rolled back"), 1, "api Degraded: rolled back\n"},
		{"paused", notReady(platformv1.PhasePaused, platformv1.PauseApproval, platformv1.ReasonWaitingForApproval, "waiting"), 3, "api Paused (Approval): waiting\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			c := newClient(t, afterWatch(ctx, func(ctx context.Context, c client.Client) {
				rollOut(ctx, c, progressing, tt.last)
			}), withStatus(progressing))
			r := execute(t, c, "", "status", "api", "--watch", "--timeout", "30s")
			if r.code() != tt.code {
				t.Fatalf("exit code %d (%v), want %d", r.code(), r.err, tt.code)
			}
			// A pipe gets a line for each state it sees; the informer may
			// hand over the last one first when it comes quickly.
			before, ok := strings.CutSuffix(r.out, tt.final)
			if !ok || before != "" && before != "api Progressing: v2.1.0 (333): 1/2 pods updated and ready\n" {
				t.Errorf("output %q, want the progressing state at most, then %q", r.out, tt.final)
			}
		})
	}
}

func TestStatus_WatchTimesOutWithExitCodeTwo(t *testing.T) {
	progressing := withStatus(notReady(platformv1.PhaseProgressing, "", platformv1.ReasonRollingOut, "1/2 pods updated and ready"))
	r := execute(t, newClient(t, interceptor.Funcs{}, progressing), "", "status", "api", "-w", "--timeout", "300ms")
	want := "api is not released yet after 300ms: Progressing: 1/2 pods updated and ready"
	if r.code() != exitNotDone || r.err.Error() != want {
		t.Errorf("exit code %d with %v, want %d with %q", r.code(), r.err, exitNotDone, want)
	}
}

// A timeout only means something while waiting, so --timeout alone
// watches, as kubectl argo rollouts status --timeout does.
func TestStatus_TimeoutWithoutWatchWatches(t *testing.T) {
	progressing := notReady(platformv1.PhaseProgressing, "", platformv1.ReasonRollingOut, "v2.1.0 (333): 1/2 pods updated and ready")
	t.Run("until the release ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		c := newClient(t, afterWatch(ctx, func(ctx context.Context, c client.Client) {
			rollOut(ctx, c, progressing, notReady(platformv1.PhaseDegraded, "", platformv1.ReasonRolledBack, "rolled back"))
		}), withStatus(progressing))
		r := execute(t, c, "", "status", "api", "--timeout", "30s")
		if r.code() != exitFailed || !strings.HasSuffix(r.out, "api Degraded: rolled back\n") {
			t.Errorf("exit code %d (%v) after %q, want %d after the rollback was seen", r.code(), r.err, r.out, exitFailed)
		}
	})
	t.Run("until the timeout passes", func(t *testing.T) {
		r := execute(t, newClient(t, interceptor.Funcs{}, withStatus(progressing)), "", "status", "api", "--timeout", "300ms")
		want := "api is not released yet after 300ms: Progressing: v2.1.0 (333): 1/2 pods updated and ready"
		if r.code() != exitNotDone || r.err == nil || r.err.Error() != want {
			t.Errorf("exit code %d with %v, want %d with %q", r.code(), r.err, exitNotDone, want)
		}
	})
	t.Run("a verdict at once needs no wait", func(t *testing.T) {
		r := execute(t, newClient(t, interceptor.Funcs{}, released()), "", "status", "api", "--timeout", "1m")
		if r.code() != exitReleased || r.out != "api Healthy: v2.0.0 (222): 2/2 pods ready\napi: v2.0.0 (222) is released\n" {
			t.Errorf("exit code %d (%v) with %q, want %d and the released line", r.code(), r.err, r.out, exitReleased)
		}
	})
}

func TestStatus_WatchOfADeletedAppCannotTell(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	progressing := withStatus(notReady(platformv1.PhaseProgressing, "", platformv1.ReasonRollingOut, "1/2"))
	// Deleted and made again until the watch has seen a deletion.
	c := newClient(t, afterWatch(ctx, func(ctx context.Context, c client.Client) {
		for ctx.Err() == nil {
			_ = c.Delete(ctx, progressing.DeepCopy())
			time.Sleep(20 * time.Millisecond)
			again := progressing.DeepCopy()
			again.ResourceVersion = ""
			_ = c.Create(ctx, again)
		}
	}), progressing)
	r := execute(t, c, "", "status", "api", "--watch", "--timeout", "30s")
	if r.code() != exitUnknown || !strings.Contains(r.err.Error(), "deleted") {
		t.Errorf("exit code %d with %v, want %d and the deletion", r.code(), r.err, exitUnknown)
	}
}
