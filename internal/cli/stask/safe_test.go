// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core/clitest"
)

// hostileText is what a tenant can put in any free-text field (clitest).
const hostileText = clitest.HostileText

// hostileCluster is cluster() with hostileText in the task's command, its
// Ready condition's message, a run's reason and pod name and an event.
func hostileCluster() []client.Object {
	objs := cluster()
	for _, o := range objs {
		switch o := o.(type) {
		case *platformv1.ScheduleTask:
			if o.Name == "data-check" {
				o.Spec.Image = hostileText
				o.Spec.Command = []string{"sh", "-c", hostileText}
				o.Status.Conditions[0].Message = hostileText
			}
		case *platformv1.TaskRun:
			o.Status.Reason, o.Status.PodName, o.Status.Message = hostileText, hostileText, hostileText
		case *eventsv1.Event:
			o.Note = hostileText
		}
	}
	return append(objs, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "data-check.evil"},
		Regarding:  corev1.ObjectReference{Kind: "ScheduleTask", Name: "data-check", Namespace: "team"},
		Reason:     hostileText, Type: hostileText, Note: hostileText, EventTime: metav1.NewMicroTime(now.Add(-time.Minute)),
	})
}

func TestCommands_EscapeControlCharactersOfStatusAndEvents(t *testing.T) {
	for _, args := range [][]string{
		{"get", "data-check"},
		{"get", "data-check", "-o", "wide"},
		{"list", "-o", "wide"},
		{"history", "data-check", "-o", "wide"},
		{"history", "data-check", "-o", "custom-columns=RUN:.metadata.name,MESSAGE:.status.message"},
	} {
		what := "kubectl stask " + strings.Join(args, " ")
		out, _, err := execute(t, newClient(t, interceptor.Funcs{}, hostileCluster()...), "", args...)
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
		clitest.CheckPrintedSafely(t, what, out)
	}
}
