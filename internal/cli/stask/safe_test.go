/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package stask

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// hostileText is what a tenant can put in any free-text field of its own
// objects and events: a screen clear and a colour, a backspace, a
// right-to-left override, a C1 control introducer and a bell, and a carriage
// return and newline that forge a line of their own. The controls come
// before the line break because cli-runtime's table printer cuts a cell at
// its first line break: after it, they would prove nothing about tables.
const hostileText = "\x1b[2J\x1b[31mOK\b\u202e\u009b\a\r\nFORGED: all good"

// unsafeRunes lists the runes of out that a terminal acts on instead of
// drawing: C0 controls other than the newline that ends a line, DEL, C1
// controls and the bidi overrides and isolates. It is written from the
// terminal's side, independently of the escaping under test.
func unsafeRunes(out string) []string {
	var found []string
	for i, r := range out {
		switch {
		case r == '\n':
		case r < 0x20, r >= 0x7f && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			found = append(found, fmt.Sprintf("%U at byte %d", r, i))
		}
	}
	return found
}

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
		if !strings.Contains(out, "OK") {
			t.Errorf("%s: the hostile text is not shown at all, so this check proves nothing:\n%s", what, out)
		}
		if found := unsafeRunes(out); len(found) > 0 {
			t.Errorf("%s printed raw control characters %v:\n%q", what, found, out)
		}
		for line := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "FORGED") {
				t.Errorf("%s printed a line the status text forged: %q", what, line)
			}
		}
	}
}
