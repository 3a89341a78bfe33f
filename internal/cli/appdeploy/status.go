// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

// Exit codes of status, for CI; promote, abort and retry --wait use
// exitNotDone for their timeout too. They are the contract that scripts
// rely on: never renumber them.
const (
	// exitReleased: the spec's revision is stable, ready and observed.
	exitReleased = 0
	// exitFailed: the spec's revision was rolled back or aborted, or the
	// release is Degraded (a held canary failure, a rollout past its
	// deadline, a child name taken).
	exitFailed = 1
	// exitNotDone: the release has not ended: still progressing, or not yet
	// observed by the operator. Without --watch or --timeout that is said
	// at once; when watching, when --timeout passes.
	exitNotDone = 2
	// exitPaused: the release waits for a person (pauseReason, or phase
	// Paused): promote, resume, or fix the analysis.
	exitPaused = 3
	// exitUnknown: the state cannot be told: the AppDeployment is missing
	// or was deleted, the user may not read it, the cluster cannot be
	// reached, or the command line is wrong.
	exitUnknown = 4
)

// statusTimeout is how long status --watch waits by default.
const statusTimeout = 30 * time.Minute

func newStatusCommand(o *options) *cobra.Command {
	var watch bool
	var timeout time.Duration
	var cmd *cobra.Command
	cmd = apps.On(o.Options, help.Command("status"), func() error {
		// A timeout asks to wait: it implies --watch, unless --watch=false
		// says not to wait, which contradicts it.
		if cmd.Flags().Changed("timeout") {
			if cmd.Flags().Changed("watch") && !watch {
				return errors.New("--timeout waits, --watch=false does not: give one of them")
			}
			watch = true
		}
		return nil
	}, func(ctx context.Context, c client.WithWatch, ad *platformv1.AppDeployment) error {
		if !watch {
			fmt.Fprintf(o.Out(), "%s %s\n", ad.Name, stateOf(ad))
			return o.verdict(ad, judge(ad), "")
		}
		return o.watchStatus(ctx, c, client.ObjectKeyFromObject(ad), timeout)
	})
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "wait until the release is released, failed or paused (implied by --timeout)")
	cmd.Flags().DurationVar(&timeout, "timeout", statusTimeout, "how long to wait for the release to end; implies --watch (0: no limit)")
	unknownOnError(cmd)
	return cmd
}

// unknownOnError makes every failure of cmd that is not a verdict exit with
// exitUnknown, flags and arguments included: exit code 1 means a failed
// release, which a typo must not be taken for.
func unknownOnError(cmd *cobra.Command) {
	unknown := func(err error) error {
		if _, ok := errors.AsType[*core.ExitError](err); err == nil || ok {
			return err
		}
		return &core.ExitError{Code: exitUnknown, Err: err}
	}
	args, run := cmd.Args, cmd.RunE
	cmd.Args = func(cmd *cobra.Command, a []string) error { return unknown(args(cmd, a)) }
	cmd.RunE = func(cmd *cobra.Command, a []string) error { return unknown(run(cmd, a)) }
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return unknown(err) })
}

// watchStatus follows the release through a watch until judge gives a
// verdict other than exitNotDone, or timeout (0: none) passes.
func (o *options) watchStatus(ctx context.Context, c client.WithWatch, key client.ObjectKey, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	progress := core.NewProgress(o.Out(), key.Name, o.OutIsTerminal(), o.Clock)
	ad, err := core.WaitFor(ctx, c, &platformv1.AppDeployment{}, &platformv1.AppDeploymentList{}, key,
		func(ad *platformv1.AppDeployment) (bool, error) {
			progress.Set(stateOf(ad))
			return judge(ad) != exitNotDone, nil
		})
	progress.Stop()
	if errors.Is(err, context.DeadlineExceeded) && ad != nil {
		return o.verdict(ad, exitNotDone, fmt.Sprintf(" after %s", timeout))
	}
	if err != nil {
		return apps.Explain(err, key.Name, key.Namespace)
	}
	return o.verdict(ad, judge(ad), "")
}

// unobserved says why the status does not yet describe the current spec
// and the requests made of it, or "" when it does: written for its
// generation, Ready condition included, and with every promote, abort or
// retry acknowledged. A request the operator has not acted on yet is about
// to change the release (a `promote` just sent turns "waiting for
// promotion" into a promotion), so the status before it is no verdict.
// Requests wait while spec.paused holds the release, and then the pause is
// the answer.
func unobserved(ad *platformv1.AppDeployment) string {
	if ad.Status.ObservedGeneration != ad.Generation {
		return fmt.Sprintf("waiting for the operator to observe generation %d (the status is of generation %d)",
			ad.Generation, ad.Status.ObservedGeneration)
	}
	if r := pendingRequest(ad); r != nil && !ad.Spec.Paused {
		return fmt.Sprintf("waiting for the operator to act on the %s request (%s=%s)",
			r.verb, r.annotation, ad.Annotations[r.annotation])
	}
	if ready := meta.FindStatusCondition(ad.Status.Conditions, platformv1.ConditionReady); ready != nil &&
		ready.ObservedGeneration != 0 && ready.ObservedGeneration != ad.Generation {
		return fmt.Sprintf("waiting for the operator to observe generation %d (its Ready condition is of an older one)",
			ad.Generation)
	}
	return ""
}

// judge is status's exit code for ad.
func judge(ad *platformv1.AppDeployment) int {
	if unobserved(ad) != "" {
		return exitNotDone
	}
	st := &ad.Status
	ready := meta.FindStatusCondition(st.Conditions, platformv1.ConditionReady)
	isReady := ready != nil && ready.Status == metav1.ConditionTrue
	removed := ready != nil && ready.Status == metav1.ConditionFalse &&
		(ready.Reason == platformv1.ReasonRolledBack || ready.Reason == platformv1.ReasonAborted)
	switch {
	case st.Phase == platformv1.PhaseDegraded || removed:
		return exitFailed
	case st.Phase == platformv1.PhasePaused || st.PauseReason != "":
		return exitPaused
	case isReady && st.CurrentRevision != "" && st.CurrentRevision == st.StableRevision:
		return exitReleased
	}
	return exitNotDone
}

// pendingRequest is a request whose annotation holds a value the operator
// has not acknowledged in status.handledRequests, nil when there is none.
func pendingRequest(ad *platformv1.AppDeployment) *request {
	for i := range requests {
		r := &requests[i]
		if v := ad.Annotations[r.annotation]; v != "" && v != r.handled(&ad.Status.HandledRequests) {
			return r
		}
	}
	return nil
}

// stateOf is the release's state in one line: "Paused (Approval): <the
// status message>", or that the operator has not observed the spec or a
// request yet. It is escaped with core.Safe: status and annotations are
// text a tenant can write.
func stateOf(ad *platformv1.AppDeployment) string {
	if why := unobserved(ad); why != "" {
		return core.Safe("Progressing: " + why)
	}
	state := phaseOf(&ad.Status)
	if ad.Status.Message != "" {
		state += ": " + ad.Status.Message
	}
	return core.Safe(state)
}

// verdict turns the exit code of ad into status's outcome: a line for
// exitReleased, an ExitError that says what happened and what to do for
// the others. after says how long a watch waited, for a timeout.
func (o *options) verdict(ad *platformv1.AppDeployment, code int, after string) error {
	st := &ad.Status
	var what, hint string
	switch code {
	case exitReleased:
		fmt.Fprintf(o.Out(), "%s: %s is released\n", ad.Name, core.Safe(revisionName(st.CurrentVersion, st.CurrentRevision)))
		return nil
	case exitFailed:
		what = "failed"
		if ready := meta.FindStatusCondition(st.Conditions, platformv1.ConditionReady); ready != nil {
			what += " (" + ready.Reason + ")"
			switch ready.Reason {
			case platformv1.ReasonRolledBack, platformv1.ReasonAborted:
				hint = fmt.Sprintf("; fix the spec, `kubectl appdeploy retry %[1]s`, or `kubectl appdeploy undo %[1]s` to put the previous version back in the spec", ad.Name)
				if ad.Spec.Adopts() {
					hint = fmt.Sprintf("; fix deployment %[2]s's template or roll it back (its pods are the ones released), or `kubectl appdeploy retry %[1]s`",
						ad.Name, ad.Spec.WorkloadRef.Name)
				}
			case platformv1.ReasonCanaryFailed:
				hint = fmt.Sprintf("; `kubectl appdeploy retry %[1]s` or `kubectl appdeploy abort %[1]s`", ad.Name)
			}
		}
	case exitPaused:
		what = "is paused"
		if st.PauseReason != "" {
			what += " (" + string(st.PauseReason) + ")"
		}
		switch st.PauseReason {
		case platformv1.PauseApproval:
			hint = fmt.Sprintf("; `kubectl appdeploy promote %s` continues it", ad.Name)
		case platformv1.PauseManual:
			hint = fmt.Sprintf("; `kubectl appdeploy resume %s` continues it", ad.Name)
		}
	default:
		return &core.ExitError{Code: exitNotDone, Err: fmt.Errorf("%s is not released yet%s: %s", ad.Name, after, stateOf(ad))}
	}
	return &core.ExitError{Code: code, Err: fmt.Errorf("%s %s: %s%s", ad.Name, core.Safe(what), core.Safe(core.OrDash(st.Message)), hint)}
}
