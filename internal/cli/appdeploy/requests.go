// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

// request is one of the annotations that ask the operator to act once on a
// canary: each new value is one request, acknowledged in
// status.handledRequests. Requests are annotations rather than status
// writes so that a user needs no more than the right to patch the object,
// and so that GitOps tools, which ignore annotations they do not manage,
// leave them alone.
type request struct {
	verb       string
	annotation string
	handled    func(*platformv1.HandledRequests) string
}

// requests are promote, abort and retry.
var requests = []request{
	{
		verb: "promote", annotation: platformv1.PromoteAnnotation,
		handled: func(h *platformv1.HandledRequests) string { return h.Promote },
	},
	{
		verb: "abort", annotation: platformv1.AbortAnnotation,
		handled: func(h *platformv1.HandledRequests) string { return h.Abort },
	},
	{
		verb: "retry", annotation: platformv1.RetryAnnotation,
		handled: func(h *platformv1.HandledRequests) string { return h.Retry },
	},
}

// requestTimeout is how long --wait waits by default: a promote is acted on
// once the step's pods are ready, which is within a progress deadline (600s
// by default) when it goes well.
const requestTimeout = 10 * time.Minute

func newRequestCommands(o *options) []*cobra.Command {
	cmds := make([]*cobra.Command, len(requests))
	for i, r := range requests {
		cmds[i] = newRequestCommand(o, r)
	}
	return cmds
}

func newRequestCommand(o *options, r request) *cobra.Command {
	var wait bool
	var timeout time.Duration
	printFlags := core.NewActionPrintFlags(r.verb+" requested", o.Scheme)
	cmd := apps.On(o.Options, help.Command(r.verb), func() error {
		_, err := printFlags.ToPrinter()
		return err
	}, func(ctx context.Context, c client.WithWatch, ad *platformv1.AppDeployment) error {
		previous, handled := ad.Annotations[r.annotation], r.handled(&ad.Status.HandledRequests)
		value := requestValue(o.Now(), previous, handled)
		if previous != "" && previous != handled {
			fmt.Fprintf(o.IOStreams.ErrOut, "Warning: the %s request %q is not handled yet; this one replaces it, so the operator acts once\n",
				r.verb, previous)
		}
		patch := client.MergeFrom(ad.DeepCopy())
		metav1.SetMetaDataAnnotation(&ad.ObjectMeta, r.annotation, value)
		if err := c.Patch(ctx, ad, patch); err != nil {
			return apps.Explain(err, ad.Name, ad.Namespace)
		}
		printFlags.NamePrintFlags.Operation = fmt.Sprintf("%s requested (%s=%s)", r.verb, r.annotation, value)
		printer, err := printFlags.ToPrinter()
		if err != nil {
			return err
		}
		if err := printer.PrintObj(ad, o.Out()); err != nil {
			return err
		}
		if !wait {
			return nil
		}
		return o.awaitHandled(ctx, c, client.ObjectKeyFromObject(ad), r, value, timeout)
	})
	cmd.Flags().BoolVarP(&wait, "wait", "w", false, "wait until the operator acknowledges the request")
	cmd.Flags().DurationVar(&timeout, "timeout", requestTimeout, "with --wait, how long to wait")
	printFlags.AddFlags(cmd)
	return cmd
}

// requestValue is a request annotation's new value: the time, so that a
// person reading the annotation sees when it was asked. When the clock
// gives a time already in use (the pending value or the handled one), a
// counter above any that time carries in use follows it, since a value in
// use would ask for nothing new.
func requestValue(now time.Time, inUse ...string) string {
	base := now.UTC().Format(time.RFC3339Nano)
	next := 0
	for _, v := range inUse {
		if v == base {
			next = max(next, 1)
		} else if n, err := strconv.Atoi(strings.TrimPrefix(v, base+"-")); err == nil && strings.HasPrefix(v, base+"-") {
			next = max(next, n+1)
		}
	}
	if next == 0 {
		return base
	}
	return fmt.Sprintf("%s-%d", base, next)
}

// awaitHandled shows the release's state through a watch until
// status.handledRequests holds value, or timeout passes (exit code 2).
func (o *options) awaitHandled(ctx context.Context, c client.WithWatch, key client.ObjectKey, r request, value string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	progress := core.NewProgress(o.Out(), key.Name, o.OutIsTerminal(), o.Clock)
	ad, err := core.WaitFor(ctx, c, &platformv1.AppDeployment{}, &platformv1.AppDeploymentList{}, key,
		func(ad *platformv1.AppDeployment) (bool, error) {
			progress.Set(stateOf(ad))
			return r.handled(&ad.Status.HandledRequests) == value, nil
		})
	progress.Stop()
	if errors.Is(err, context.DeadlineExceeded) {
		return &core.ExitError{Code: exitNotDone, Err: fmt.Errorf(
			"the %s request was not acknowledged within %s: is the operator running? (a promote waits for the step's canary pods to be ready and for the AppDeployment not to be paused)",
			r.verb, timeout)}
	}
	if err != nil {
		return apps.Explain(err, key.Name, key.Namespace)
	}
	fmt.Fprintf(o.Out(), "%s: %s request acknowledged; now %s\n", key.Name, r.verb, stateOf(ad))
	return nil
}
