// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core/clitest"
)

// output is one command line and what it prints.
type output struct {
	args []string
	want string
}

// checkOutputs runs each command against cluster() and compares its whole
// standard output.
func checkOutputs(t *testing.T, tests []output) {
	t.Helper()
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, _, err := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.TrimPrefix(tt.want, "\n"), got); diff != "" {
				t.Errorf("kubectl stask %s (-want +got):\n%s", strings.Join(tt.args, " "), diff)
			}
		})
	}
}

func TestList_HumanTables(t *testing.T) {
	checkOutputs(t, []output{
		{[]string{"list"}, `
NAME         SCHEDULE      TIMEZONE   SUSPENDED   ACTIVE   LAST RUN   LAST RESULT   NEXT RUN                         SUCCESS   FRESH
data-check   0 */2 * * *   -          false       0        81s ago    Succeeded     in 120m (2026-11-29 14:00 UTC)   1/2       -
heartbeat    * * * * *     Etc/UTC    false       1        11s ago    -             in 60s (2026-11-29 12:01 UTC)    -         -
`},
		{[]string{"list", "-o", "wide"}, `
NAME         SCHEDULE      TIMEZONE   SUSPENDED   ACTIVE   LAST RUN   LAST RESULT   NEXT RUN                         SUCCESS   FRESH   IMAGE          POLICY
data-check   0 */2 * * *   -          false       0        81s ago    Succeeded     in 120m (2026-11-29 14:00 UTC)   1/2       -       busybox:1.36   Forbid
heartbeat    * * * * *     Etc/UTC    false       1        11s ago    -             in 60s (2026-11-29 12:01 UTC)    -         -       busybox:1.36   Allow
`},
		{[]string{"list", "-A", "--no-headers"}, `
other   elsewhere    * * * * *     -         true    0     -         -           -                                -     -
team    data-check   0 */2 * * *   -         false   0     81s ago   Succeeded   in 120m (2026-11-29 14:00 UTC)   1/2   -
team    heartbeat    * * * * *     Etc/UTC   false   1     11s ago   -           in 60s (2026-11-29 12:01 UTC)    -     -
`},
	})
}

func TestList_NothingFoundSaysSoOnStandardError(t *testing.T) {
	out, errOut, err := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", "list", "-l", "team=nobody")
	if err != nil || out != "" || errOut != "No resources found in team namespace.\n" {
		t.Errorf("got %q, %q, %v", out, errOut, err)
	}
}

func TestList_ObjectFormats(t *testing.T) {
	checkOutputs(t, []output{
		{[]string{"list", "-o", "name"}, `
scheduletask.platform.example.com/data-check
scheduletask.platform.example.com/heartbeat
`},
		{[]string{"list", "-o", "jsonpath={range .items[*]}{.kind}/{.metadata.name}={.spec.schedule}{\"\\n\"}{end}"}, `
ScheduleTask/data-check=0 */2 * * *
ScheduleTask/heartbeat=* * * * *
`},
		{[]string{"list", "-o", "custom-columns=NAME:.metadata.name,ZONE:.spec.timeZone,ACTIVE:.status.activeRuns[*]"}, `
NAME         ZONE      ACTIVE
data-check   <none>    <none>
heartbeat    Etc/UTC   heartbeat-1
`},
		{[]string{"list", "-o", `go-template={{range .items}}{{.metadata.name}} {{.status.lastResult}}{{"\n"}}{{end}}`}, `
data-check Succeeded
heartbeat <no value>
`},
	})
}

func TestGet_DescribesSpecConditionsNextRunsRunsAndEvents(t *testing.T) {
	checkOutputs(t, []output{{[]string{"get", "data-check"}, `
Name:         data-check
Namespace:    team
Schedule:     0 */2 * * * (-)
Image:        busybox:1.36
Command:      sh -c true
Concurrency:  Forbid   Suspended: false   Backoff limit: 6   Deadline: none
Runs started: 2
Missed runs:  0 (RunLatest)

Conditions:
  Ready=True  CronJobReady: CronJob data-check is up to date (60m ago)

Next runs:
  2026-11-29T14:00:00Z  (in 120m)
  2026-11-29T16:00:00Z  (in 4h)
  2026-11-29T18:00:00Z  (in 6h)
  2026-11-29T20:00:00Z  (in 8h)
  2026-11-29T22:00:00Z  (in 10h)

Recent runs:
RUN            TRIGGER     PHASE       START     DURATION   REASON                 EXIT CODE
data-check-2   Scheduled   Succeeded   3m ago    2s         Completed              -
data-check-1   Scheduled   Failed      10m ago   60s        BackoffLimitExceeded   3
1/2 succeeded (50%), p50 2s, max 60s

Recent events:
  9m ago   Warning  RunFailed        Run data-check-1 failed
`}})
}

func TestGet_ObjectFormats(t *testing.T) {
	checkOutputs(t, []output{
		{[]string{"get", "heartbeat", "-o", "wide"}, `
NAME        SCHEDULE    TIMEZONE   SUSPENDED   ACTIVE   LAST RUN   LAST RESULT   NEXT RUN                        SUCCESS   FRESH   IMAGE          POLICY
heartbeat   * * * * *   Etc/UTC    false       1        11s ago    -             in 60s (2026-11-29 12:01 UTC)   -         -       busybox:1.36   Allow
`},
		{[]string{"get", "data-check", "-o", "name"}, "scheduletask.platform.example.com/data-check\n"},
		{[]string{"get", "data-check", "-o", "jsonpath={.apiVersion} {.status.conditions[?(@.type==\"Ready\")].status}"}, "platform.example.com/v1 True"},
		{[]string{"get", "data-check", "-o", "custom-columns=NAME:.metadata.name,RESULT:.status.lastResult", "--no-headers"}, "data-check   Succeeded\n"},
		{[]string{"get", "data-check", "--template", "{{.spec.image}}"}, "busybox:1.36"},
	})
}

func TestHistory_TableAndSummary(t *testing.T) {
	checkOutputs(t, []output{
		{[]string{"history", "data-check"}, `
RUN            TRIGGER     PHASE       START     DURATION   REASON                 EXIT CODE
data-check-2   Scheduled   Succeeded   3m ago    2s         Completed              -
data-check-1   Scheduled   Failed      10m ago   60s        BackoffLimitExceeded   3

1/2 succeeded (50%), p50 2s, max 60s
`},
		{[]string{"history", "data-check", "-o", "wide", "--limit", "1"}, `
RUN            TRIGGER     PHASE       START    DURATION   REASON      EXIT CODE   ATTEMPTS   POD
data-check-2   Scheduled   Succeeded   3m ago   2s         Completed   -           1          data-check-2-q9z4m

1/2 succeeded (50%), p50 2s, max 60s
`},
	})
}

func TestHistory_ObjectFormats(t *testing.T) {
	checkOutputs(t, []output{
		{[]string{"history", "data-check", "-o", "name"}, `
taskrun.platform.example.com/data-check-2
taskrun.platform.example.com/data-check-1
`},
		{[]string{"history", "data-check", "-o", "name", "--limit", "1"}, "taskrun.platform.example.com/data-check-2\n"},
		{[]string{"history", "data-check", "-o", "jsonpath={.items[*].status.phase}"}, "Succeeded Failed"},
		{[]string{"history", "data-check", "-o", "custom-columns=RUN:.metadata.name,EXIT:.status.exitCode"}, `
RUN            EXIT
data-check-2   <none>
data-check-1   3
`},
		{[]string{"history", "heartbeat", "-o", "go-template={{range .items}}{{.metadata.name}} {{.status.phase}}{{end}}"}, "heartbeat-1 Running"},
	})
}

// listOf is what -o json and -o yaml of a listing decode to.
type listOf[T any] struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   metav1.ListMeta `json:"metadata"`
	Items      []T             `json:"items"`
}

// fromCluster returns the objects of cluster() named names, in that order,
// with the apiVersion and kind -o json must print.
func fromCluster[T client.Object](t *testing.T, kind string, names ...string) []T {
	t.Helper()
	var out []T
	for _, name := range names {
		for _, obj := range cluster() {
			if o, ok := obj.(T); ok && o.GetName() == name {
				o.GetObjectKind().SetGroupVersionKind(platformv1.GroupVersion.WithKind(kind))
				out = append(out, o)
			}
		}
	}
	if len(out) != len(names) {
		t.Fatalf("cluster() has no %s of each of %v", kind, names)
	}
	return out
}

func deref[T any](ps []*T) []T {
	out := make([]T, len(ps))
	for i, p := range ps {
		out[i] = *p
	}
	return out
}

// The fake client sets resourceVersions of its own.
var ignoreResourceVersion = cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion")

func TestListAndHistory_JSONAndYAMLPrintAListOfTheObjects(t *testing.T) {
	tasks := listOf[platformv1.ScheduleTask]{APIVersion: "v1", Kind: "List",
		Items: deref(fromCluster[*platformv1.ScheduleTask](t, "ScheduleTask", "data-check", "heartbeat"))}
	runs := listOf[platformv1.TaskRun]{APIVersion: "v1", Kind: "List",
		Items: deref(fromCluster[*platformv1.TaskRun](t, "TaskRun", "data-check-2", "data-check-1"))}
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			checkDecoded(t, tasks, "list", "-o", format)
			checkDecoded(t, runs, "history", "data-check", "-o", format)
		})
	}
}

func TestGet_JSONAndYAMLPrintTheTask(t *testing.T) {
	want := fromCluster[*platformv1.ScheduleTask](t, "ScheduleTask", "data-check")[0]
	for _, format := range []string{"json", "yaml"} {
		checkDecoded(t, want, "get", "data-check", "-o", format)
	}
}

// checkDecoded runs a command and compares its output, decoded as JSON or
// YAML, with want.
func checkDecoded[T any](t *testing.T, want T, args ...string) {
	t.Helper()
	out, _, err := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", args...)
	if err != nil {
		t.Fatal(err)
	}
	var got T
	if err := yaml.UnmarshalStrict([]byte(out), &got); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	if diff := cmp.Diff(want, got, ignoreResourceVersion); diff != "" {
		t.Errorf("%v (-want +got):\n%s", args, diff)
	}
}

func TestCommands_RejectUnknownOutputBeforeReadingTheCluster(t *testing.T) {
	reads := 0
	c := newClient(t, interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			reads++
			return nil
		},
		List: func(_ context.Context, _ client.WithWatch, _ client.ObjectList, _ ...client.ListOption) error {
			reads++
			return nil
		},
	})
	for _, args := range [][]string{{"list", "-o", "xml"}, {"get", "x", "-o", "xml"}, {"history", "x", "-o", "xml"}, {"run", "x", "-o", "xml"}} {
		_, _, err := execute(t, c, "", args...)
		if err == nil || !strings.Contains(err.Error(), "xml") {
			t.Errorf("%v: err = %v", args, err)
		}
	}
	if reads != 0 {
		t.Errorf("the cluster was read %d times", reads)
	}
}

func TestGet_MissingTaskSaysWhereItLooked(t *testing.T) {
	_, _, err := execute(t, newClient(t, interceptor.Funcs{}, cluster()...), "", "get", "elsewhere")
	if err == nil || err.Error() != `scheduletask "elsewhere" not found in namespace "team"` {
		t.Errorf("err = %v", err)
	}
}

func TestHelp_EveryPageIsACommands(t *testing.T) {
	clitest.EveryHelpPageUsed(t, Plugin)
}
