// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	platformv1alpha1 "github.com/example/platform-operator/api/v1alpha1"
	"github.com/example/platform-operator/internal/testutil"
)

// carriedStatus is the part of a task's status the operator carries from
// pass to pass rather than observes again (see the scheduletask
// controller's buildStatus): what a forged write would make it keep.
type carriedStatus struct {
	TriggerCount          int64
	MissedRuns            int64
	MissedRunsCheckedTime *metav1.Time
}

func carried(s *platformv1.ScheduleTaskStatus) carriedStatus {
	return carriedStatus{s.TriggerCount, s.MissedRuns, s.MissedRunsCheckedTime}
}

// writeOperatorStatus writes the carried status of the task as the operator
// does, through the status subresource with the operator's identity, and
// waits until a pass of the operator has kept it. The checked time lies in
// the future so that no pass moves it (a pass only ever moves it forward).
func writeOperatorStatus(t *testing.T, key client.ObjectKey) carriedStatus {
	t.Helper()
	ctx := context.Background()
	want := carriedStatus{TriggerCount: 3, MissedRuns: 2,
		MissedRunsCheckedTime: &metav1.Time{Time: time.Now().Add(time.Hour).Truncate(time.Second).UTC()}}
	eventually(t, "write the operator's status", func() error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var st platformv1.ScheduleTask
			if err := k8sClient.Get(ctx, key, &st); err != nil {
				return err
			}
			st.Status.TriggerCount, st.Status.MissedRuns = want.TriggerCount, want.MissedRuns
			st.Status.MissedRunsCheckedTime = want.MissedRunsCheckedTime
			return k8sClient.Status().Update(ctx, &st)
		})
	})
	// A pass that read the task before the write conflicts and starts again
	// from it; wait until one has written a status of its own over it.
	eventually(t, "the operator's next pass keeps the status", func() error {
		var st platformv1.ScheduleTask
		if err := k8sClient.Get(ctx, key, &st); err != nil {
			return err
		}
		if delta := cmp.Diff(want, carried(&st.Status)); delta != "" {
			return &diffError{delta}
		}
		if st.Status.ObservedGeneration != st.Generation {
			return &diffError{"observedGeneration behind"}
		}
		return nil
	})
	return want
}

type diffError struct{ s string }

func (e *diffError) Error() string { return e.s }

// storedCarried reads the task's stored status as v1.
func storedCarried(t *testing.T, key client.ObjectKey) carriedStatus {
	t.Helper()
	var st platformv1.ScheduleTask
	if err := k8sClient.Get(context.Background(), key, &st); err != nil {
		t.Fatal(err)
	}
	return carried(&st.Status)
}

// v1alpha1Object returns an empty v1alpha1 ScheduleTask as kubectl handles
// it: JSON, no typed client.
func v1alpha1Object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(platformv1alpha1.GroupVersion.WithKind("ScheduleTask"))
	return u
}

// The attack of issue 31 item 3: a tenant who may update tasks, but not
// their status, reads one as v1alpha1, writes status into the annotation
// that saves what v1alpha1 lacks, and replaces the task.
func TestConversion_TenantCannotWriteStatusThroughV1alpha1Annotation(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "victim")
	if err := k8sClient.Create(ctx, st); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(st)
	written := writeOperatorStatus(t, key)

	mallory := userClient(t, ns, "mallory", []rbacv1.PolicyRule{{
		APIGroups: []string{platformv1.GroupVersion.Group}, Resources: []string{"scheduletasks"},
		Verbs: []string{"get", "list", "update"},
	}})
	forged := map[string]any{
		"missedRuns": int64(999999), "triggerCount": int64(123456), "missedRunsCheckedTime": "2020-01-01T00:00:00Z",
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u := v1alpha1Object()
		if err := mallory.Get(ctx, key, u); err != nil {
			return err
		}
		annotations := u.GetAnnotations()
		var saved map[string]any
		if err := json.Unmarshal([]byte(annotations[platformv1alpha1.HubDataAnnotation]), &saved); err != nil {
			t.Fatalf("annotation %s: %v", platformv1alpha1.HubDataAnnotation, err)
		}
		status, _ := saved["status"].(map[string]any)
		if status == nil {
			status = map[string]any{}
		}
		for k, v := range forged {
			status[k] = v
			// The object's own status too: a main-resource update must
			// ignore it, whatever the version.
			if err := unstructured.SetNestedField(u.Object, v, "status", k); err != nil {
				t.Fatal(err)
			}
		}
		saved["status"] = status
		data, err := json.Marshal(saved)
		if err != nil {
			t.Fatal(err)
		}
		annotations[platformv1alpha1.HubDataAnnotation] = string(data)
		u.SetAnnotations(annotations)
		return mallory.Update(ctx, u)
	})
	if err != nil {
		// A refusal is a defence too; the status must be intact either way.
		t.Logf("the replace was refused: %v", err)
	}
	if delta := cmp.Diff(written, storedCarried(t, key)); delta != "" {
		t.Fatalf("a tenant without rights on status changed it through v1alpha1 (-operator's +stored):\n%s", delta)
	}
	// And the operator does not take up forged values on a later pass.
	throughResyncs(t, st, 2, func(gomega.Gomega) {
		if delta := cmp.Diff(written, storedCarried(t, key)); delta != "" {
			t.Fatalf("status after the operator's next passes (-operator's +stored):\n%s", delta)
		}
	})
}

// editedSchedule is the schedule a v1alpha1 client edits a task's to.
const editedSchedule = "@hourly"

func TestConversion_V1alpha1SpecUpdateKeepsTheOperatorsStatus(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "legacy-client")
	if err := k8sClient.Create(ctx, st); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(st)
	written := writeOperatorStatus(t, key)

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var old platformv1alpha1.ScheduleTask
		if err := k8sClient.Get(ctx, key, &old); err != nil {
			return err
		}
		if delta := cmp.Diff(written, carriedStatus{old.Status.TriggerCount, old.Status.MissedRuns,
			old.Status.MissedRunsCheckedTime}); delta != "" {
			t.Errorf("status read as v1alpha1 (-operator's +read):\n%s", delta)
		}
		old.Spec.Schedule = editedSchedule
		return k8sClient.Update(ctx, &old)
	})
	if err != nil {
		t.Fatal(err)
	}
	var v1 platformv1.ScheduleTask
	if err := k8sClient.Get(ctx, key, &v1); err != nil {
		t.Fatal(err)
	}
	if v1.Spec.Schedule != editedSchedule {
		t.Errorf("schedule %q, want the edit %q", v1.Spec.Schedule, editedSchedule)
	}
	if delta := cmp.Diff(written, carried(&v1.Status)); delta != "" {
		t.Errorf("status after a spec update through v1alpha1 (-operator's +stored):\n%s", delta)
	}
}

// escapableArg is an argument as long as one may be, of a character that
// JSON's HTML escaping turns into six: 16 KiB, or 96 KiB escaped.
var escapableArg = strings.Repeat("<", platformv1.MaxArgumentLength)

// bigTask returns a task with two arguments of escapableArg (together the
// most command, args and env may hold) and an annotation of its own of size
// bytes.
func bigTask(ns, name string, size int) *platformv1.ScheduleTask {
	st := testutil.NewScheduleTask(ns, name)
	st.Spec.Command = nil
	st.Spec.Args = []string{escapableArg, escapableArg}
	st.Annotations = map[string]string{"example.com/notes": strings.Repeat("n", size)}
	return st
}

// listV1alpha1Everywhere lists every task of every namespace as v1alpha1,
// as `kubectl get scheduletasks.v1alpha1.platform.example.com -A` does.
func listV1alpha1Everywhere(ctx context.Context) (*platformv1alpha1.ScheduleTaskList, error) {
	var list platformv1alpha1.ScheduleTaskList
	return &list, k8sClient.List(ctx, &list)
}

func TestConversion_EscapableArgsDoNotBreakListingEveryTaskAsV1alpha1(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	// 2 x 16 KiB of '<' is 192 KiB as \u003c escapes: with 70 KB of the
	// task's own annotation, over the 256 KiB the API server allows.
	st := bigTask(ns, "angle-brackets", 70000)
	if err := k8sClient.Create(ctx, st); err != nil {
		t.Fatalf("a task within every bound of v1 is refused: %v", err)
	}
	list, err := listV1alpha1Everywhere(ctx)
	if err != nil {
		t.Fatalf("listing every task as v1alpha1 fails because of one task: %v", err)
	}
	var found bool
	for _, item := range list.Items {
		if item.Namespace != ns {
			continue
		}
		found = true
		var back platformv1.ScheduleTask
		if err := item.ConvertTo(&back); err != nil {
			t.Fatal(err)
		}
		if len(back.Spec.Args) != 2 || back.Spec.Args[0] != escapableArg || back.Spec.Args[1] != escapableArg {
			t.Errorf("the v1alpha1 form lost the task's args")
		}
	}
	if !found {
		t.Errorf("the task is not in the v1alpha1 list")
	}
}

func TestAdmission_TaskWhoseV1alpha1FormDoesNotFitIsRefusedNamingTheField(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	// The task's own annotations fit in v1; with its args beside them in
	// the v1alpha1 annotation, they would not.
	st := bigTask(ns, "too-big-for-v1alpha1", 240000)
	err := k8sClient.Create(ctx, st)
	expectRefused(t, err, http.StatusUnprocessableEntity,
		"spec.args: too long", "v1alpha1 form of this task would not fit in annotations")
	if err == nil {
		_ = k8sClient.Delete(ctx, st)
	}
}

func TestConversion_TaskStoredBeforeTheSizeCheckNeitherBreaksListsNorLosesFields(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	st := bigTask(ns, "stored-before", 240000)
	withoutTaskWebhook(t, ns, func() {
		if err := k8sClient.Create(ctx, st); err != nil {
			t.Fatal(err)
		}
	})
	key := client.ObjectKeyFromObject(st)
	if _, err := listV1alpha1Everywhere(ctx); err != nil {
		t.Fatalf("listing every task as v1alpha1 fails because of one task: %v", err)
	}

	// Its v1alpha1 form lacks the args; writing that form back would drop
	// them, so it is refused.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var old platformv1alpha1.ScheduleTask
		if err := k8sClient.Get(ctx, key, &old); err != nil {
			return err
		}
		old.Spec.Image = editedImage
		return k8sClient.Update(ctx, &old)
	})
	expectRefused(t, err, http.StatusForbidden, platformv1alpha1.OmittedAnnotation, "spec fields args")
	var v1 platformv1.ScheduleTask
	if err := k8sClient.Get(ctx, key, &v1); err != nil {
		t.Fatal(err)
	}
	if len(v1.Spec.Args) != 2 {
		t.Errorf("the stored task has %d args, want its 2", len(v1.Spec.Args))
	}
}

// warnings records the API server's warnings.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

// HandleWarningHeaderWithContext records one warning.
func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func TestConversion_ReadingV1alpha1WarnsThatItIsDeprecated(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "read-old")
	if err := k8sClient.Create(ctx, st); err != nil {
		t.Fatal(err)
	}
	cfg := userConfig(t, ns, "reader", []rbacv1.PolicyRule{{
		APIGroups: []string{platformv1.GroupVersion.Group}, Resources: []string{"scheduletasks"}, Verbs: []string{"get"},
	}})
	w := &warnings{}
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: testEnv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(st), &platformv1.ScheduleTask{}); err != nil {
		t.Fatal(err)
	}
	if len(w.seen) != 0 {
		t.Errorf("reading v1 warned: %q", w.seen)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(st), &platformv1alpha1.ScheduleTask{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"platform.example.com/v1alpha1 ScheduleTask is deprecated; use platform.example.com/v1"}
	if delta := cmp.Diff(want, w.seen); delta != "" {
		t.Errorf("warnings of a v1alpha1 read (-want +got):\n%s", delta)
	}
}
