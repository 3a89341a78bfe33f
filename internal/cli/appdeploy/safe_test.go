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

package appdeploy

import (
	"fmt"
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
)

// hostileText is what a tenant can put in any free-text status field or
// event of its own: a screen clear and a colour, a backspace, a
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

// checkPrintedSafely fails when out holds a rune a terminal would act on,
// or a line that the hostile text's newline started.
func checkPrintedSafely(t *testing.T, what, out string) {
	t.Helper()
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
		checkPrintedSafely(t, "kubectl appdeploy "+strings.Join(args, " "), out)
	}
}
