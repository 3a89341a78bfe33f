// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// mustGet reads the AppDeployment name in team from c, for assertions.
func mustGet(t *testing.T, c client.Client, name string) *platformv1.AppDeployment {
	t.Helper()
	ad := &platformv1.AppDeployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: name}, ad); err != nil {
		t.Fatal(err)
	}
	return ad
}

func TestRequests_SetANewValueEachTimeAndSaySo(t *testing.T) {
	for _, r := range requests {
		t.Run(r.verb, func(t *testing.T) {
			c := newClient(t, interceptor.Funcs{}, web())
			// The clock stands still, as two requests within its resolution
			// would see it: the second must still be a new value.
			wantValues := []string{"2026-11-29T12:00:00Z", "2026-11-29T12:00:00Z-1", "2026-11-29T12:00:00Z-2"}
			for i, want := range wantValues {
				res := execute(t, c, "", r.verb, "web")
				if res.err != nil {
					t.Fatal(res.err)
				}
				wantOut := "appdeployment.platform.example.com/web " + r.verb + " requested (" + r.annotation + "=" + want + ")\n"
				if res.out != wantOut {
					t.Errorf("request %d printed %q, want %q", i+1, res.out, wantOut)
				}
				// A request not yet acknowledged is replaced: say so.
				if warned := strings.Contains(res.errOut, "not handled yet; this one replaces it"); warned != (i > 0) {
					t.Errorf("request %d: warning %q", i+1, res.errOut)
				}
				got := mustGet(t, c, "web").Annotations
				if diff := cmp.Diff(map[string]string{r.annotation: want}, got); diff != "" {
					t.Errorf("annotations after request %d (-want +got):\n%s", i+1, diff)
				}
			}
		})
	}
}

func TestRequestValue_NeverRepeatsAValueInUse(t *testing.T) {
	base := "2026-11-29T12:00:00.5Z"
	at := now.Add(500 * time.Millisecond)
	for _, tt := range []struct {
		inUse []string
		want  string
	}{
		{nil, base},
		{[]string{"", ""}, base},
		{[]string{"2026-11-29T11:00:00Z", "2026-11-29T10:00:00Z"}, base},
		// Handled already: asking again with it would ask for nothing.
		{[]string{"", base}, base + "-1"},
		{[]string{base, base + "-1"}, base + "-2"},
		// Above the counter in use, so that values only go up.
		{[]string{base + "-1", ""}, base + "-2"},
		{[]string{base + "-7", base}, base + "-8"},
		{[]string{base + "-x"}, base},
	} {
		if got := requestValue(at, tt.inUse...); got != tt.want {
			t.Errorf("requestValue(%v) = %q, want %q", tt.inUse, got, tt.want)
		}
		if n := len(requestValue(at, tt.inUse...)); n > platformv1.MaxRequestValueLength {
			t.Errorf("a value of %d characters is longer than admission allows", n)
		}
	}
}

// acknowledgeOnPatch plays the operator: once a patch sets a request
// annotation, it acknowledges the value in status.handledRequests.
func acknowledgeOnPatch() interceptor.Funcs {
	return interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if err := c.Patch(ctx, obj, patch, opts...); err != nil {
			return err
		}
		ad := &platformv1.AppDeployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), ad); err != nil {
			return err
		}
		h := &ad.Status.HandledRequests
		h.Promote, h.Abort, h.Retry = ad.Annotations[platformv1.PromoteAnnotation], ad.Annotations[platformv1.AbortAnnotation], ad.Annotations[platformv1.RetryAnnotation]
		ad.Status.Message = "canary v1.2.4 (7b9e1a3c2): 2/2 pods (50%), step 2/3 (50%), paused until 12:05:00"
		ad.Status.Phase, ad.Status.PauseReason = platformv1.PhaseProgressing, ""
		return c.Status().Update(ctx, ad)
	}}
}

func TestRequests_WaitUntilTheOperatorAcknowledges(t *testing.T) {
	res := execute(t, newClient(t, acknowledgeOnPatch(), orderService()), "", "promote", "order-service", "--wait", "--timeout", "30s")
	if res.err != nil {
		t.Fatal(res.err)
	}
	const state = "Progressing: canary v1.2.4 (7b9e1a3c2): 2/2 pods (50%), step 2/3 (50%), paused until 12:05:00"
	want := "appdeployment.platform.example.com/order-service promote requested (platform.example.com/promote=2026-11-29T12:00:00Z)\n" +
		"order-service " + state + "\n" +
		"order-service: promote request acknowledged; now " + state + "\n"
	if diff := cmp.Diff(want, res.out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestRequests_WaitTimesOutWithExitCodeTwo(t *testing.T) {
	res := execute(t, newClient(t, interceptor.Funcs{}, orderService()), "", "abort", "order-service", "-w", "--timeout", "300ms")
	if res.code() != exitNotDone || !strings.Contains(res.err.Error(), "the abort request was not acknowledged within 300ms") {
		t.Errorf("exit code %d with %v, want %d and the timeout", res.code(), res.err, exitNotDone)
	}
}

func TestRequests_OfAMissingAppSaySo(t *testing.T) {
	res := execute(t, newClient(t, interceptor.Funcs{}), "", "retry", "ghost")
	if res.err == nil || res.err.Error() != `appdeployment "ghost" not found in namespace "team"` {
		t.Errorf("err = %v", res.err)
	}
}

func TestPauseAndResume_SetSpecPausedAndSaySo(t *testing.T) {
	c := newClient(t, interceptor.Funcs{}, web())
	for _, step := range []struct {
		verb, said string
		paused     bool
	}{
		{"pause", "paused", true},
		{"pause", "already paused", true},
		{"resume", "resumed", false},
		{"resume", "not paused", false},
	} {
		res := execute(t, c, "", step.verb, "web")
		if want := "appdeployment.platform.example.com/web " + step.said + "\n"; res.err != nil || res.out != want {
			t.Errorf("%s = %q, %v; want %q", step.verb, res.out, res.err, want)
		}
		got := mustGet(t, c, "web")
		want := web()
		want.Spec.Paused = step.paused
		if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
			t.Errorf("spec after %s (-want +got):\n%s", step.verb, diff)
		}
	}
}

func TestRequests_WarnOnlyWhenReplacingOneNotAcknowledged(t *testing.T) {
	// order-service has a promote request pending.
	c := newClient(t, acknowledgeOnPatch(), orderService())
	for i, want := range []string{
		"Warning: the promote request \"2026-11-29T11:59:00Z\" is not handled yet; this one replaces it, so the operator acts once\n",
		// The operator acknowledged the one before.
		"",
	} {
		if res := execute(t, c, "", "promote", "order-service"); res.err != nil || res.errOut != want {
			t.Errorf("promote %d: standard error %q (%v), want %q", i+1, res.errOut, res.err, want)
		}
	}
}
