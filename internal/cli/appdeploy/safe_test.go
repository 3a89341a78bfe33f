// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"strings"
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

// hostileText is what a tenant can put in any free-text field (clitest).
const hostileText = clitest.HostileText

// hostileApp is order-service with hostileText in every free-text field
// of its status that the human output shows.
func hostileApp() *platformv1.AppDeployment {
	ad := orderService()
	// No request pending, so that status shows the message.
	ad.Annotations = nil
	st := &ad.Status
	st.Message = hostileText
	st.StableVersion = hostileText
	st.LastOutcome.Message = hostileText
	st.Revisions[0].Version = hostileText
	st.Canary.Failure = platformv1.CanaryFailure{Reason: "CrashLoopBackOff", Message: hostileText, FailedAt: at(-time.Minute)}
	st.Canary.Analysis = &platformv1.AnalysisStatus{PreflightAt: at(-time.Minute), Criteria: []platformv1.CriterionStatus{{
		Name: "error_rate", LastResult: platformv1.MeasurementPass, Value: hostileText, StableValue: hostileText,
		Threshold: "0.5", Samples: ptr.To[int64](3), MeasuredAt: at(-time.Minute), Message: hostileText,
	}}}
	return ad
}

func TestCommands_EscapeControlCharactersOfStatusAndEvents(t *testing.T) {
	objs := []client.Object{
		hostileApp(),
		&eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "order-service.evil"},
			Regarding:  corev1.ObjectReference{Kind: kind, Name: "order-service", Namespace: "team"},
			Reason:     "Tampered", Type: corev1.EventTypeWarning, Note: hostileText, EventTime: metav1.NewMicroTime(now.Add(-time.Minute)),
		},
	}
	for _, args := range [][]string{
		{"get", "order-service"},
		{"get", "order-service", "-o", "wide"},
		{"list"},
		{"list", "-o", "wide"},
		{"history", "order-service"},
		{"status", "order-service"},
	} {
		r := execute(t, newClient(t, interceptor.Funcs{}, objs...), "", args...)
		out := r.out
		if r.err != nil {
			out += r.err.Error()
		}
		clitest.CheckPrintedSafely(t, "kubectl appdeploy "+strings.Join(args, " "), out)
	}
}
