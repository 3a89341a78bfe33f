// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// userClient returns a client that authenticates as a new user holding the
// given rules in namespace ns.
func userClient(t *testing.T, ns, name string, rules []rbacv1.PolicyRule) client.Client {
	t.Helper()
	c, err := client.New(userConfig(t, ns, name, rules), client.Options{Scheme: testEnv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// userConfig returns the REST config of a new user holding the given rules
// in namespace ns.
func userConfig(t *testing.T, ns, name string, rules []rbacv1.PolicyRule) *rest.Config {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := k8sClient.Create(ctx, o); err != nil {
			t.Fatalf("create %T: %v", o, err)
		}
	}
	u, err := testEnv.AddUser(envtest.User{Name: name, Groups: []string{"developers"}}, nil)
	if err != nil {
		t.Fatalf("add user %s: %v", name, err)
	}
	return u.Config()
}

var (
	platformRule = rbacv1.PolicyRule{APIGroups: []string{platformv1.GroupVersion.Group},
		Resources: []string{"scheduletasks", "taskruns"}, Verbs: []string{"*"}}
	cronJobRule = rbacv1.PolicyRule{APIGroups: []string{"batch"},
		Resources: []string{"cronjobs"}, Verbs: []string{"create"}}
)

func TestAdmission_RejectsBadObjectsNamingTheFieldAndStoringNothing(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{platformRule, cronJobRule})
	bob := userClient(t, ns, "bob", []rbacv1.PolicyRule{platformRule})
	if err := alice.Create(ctx, testutil.NewScheduleTask(ns, "real")); err != nil {
		t.Fatalf("a good task as alice: %v", err)
	}

	task := func(name string, mutate func(*platformv1.ScheduleTask)) *platformv1.ScheduleTask {
		st := testutil.NewScheduleTask(ns, name)
		mutate(st)
		return st
	}
	schedule := func(s string) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.Schedule = s }
	}
	zone := func(z string) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.TimeZone = ptr.To(z) }
	}
	image := func(i string) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.Image = i }
	}
	policy := func(p platformv1.ConcurrencyPolicy) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.ConcurrencyPolicy = p }
	}
	backoff := func(n int32) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.BackoffLimit = &n }
	}
	template := func(t corev1.PodTemplateSpec) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.Template = &t }
	}
	activeDeadline := func(n int64) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.ActiveDeadlineSeconds = &n }
	}
	startingDeadline := func(n int64) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.StartingDeadlineSeconds = &n }
	}
	successHistory := func(n int32) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.SuccessfulRunsHistoryLimit = &n }
	}
	failedHistory := func(n int32) func(*platformv1.ScheduleTask) {
		return func(st *platformv1.ScheduleTask) { st.Spec.FailedRunsHistoryLimit = &n }
	}
	unchanged := func(*platformv1.ScheduleTask) {}
	run := func(name string, mutate func(*platformv1.TaskRun)) *platformv1.TaskRun {
		tr := testutil.NewManualTaskRun(ns, name, "real")
		mutate(tr)
		return tr
	}
	trigger := func(t platformv1.Trigger) func(*platformv1.TaskRun) {
		return func(tr *platformv1.TaskRun) { tr.Spec.Trigger = t }
	}
	taskName := func(name string) func(*platformv1.TaskRun) {
		return func(tr *platformv1.TaskRun) { tr.Spec.ScheduleTaskName = name }
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))

	tests := []struct {
		name  string
		as    client.Client
		obj   client.Object
		code  int32
		field string
	}{
		{"missing image", alice, task("t01", image("")), 422, "spec.image"},
		{"image with a space", alice, task("t02", image("busy box")), 422, "spec.image"},
		{"image in capitals", alice, task("t03", image("BusyBox:1")), 422, "spec.image"},
		{"image with two tags", alice, task("t04", image("busybox:1:2")), 422, "spec.image"},
		{"image tag only", alice, task("t05", image(":latest")), 422, "spec.image"},
		{"concurrencyPolicy Sometimes", alice, task("t06", policy("Sometimes")), 422, "spec.concurrencyPolicy"},
		{"concurrencyPolicy lower case", alice, task("t07", policy("forbid")), 422, "spec.concurrencyPolicy"},
		{"schedule in words", alice, task("t08", schedule("every day")), 422, "spec.schedule"},
		{"six-field cron", alice, task("t09", schedule("0 0 * * * *")), 422, "spec.schedule"},
		{"four-field cron", alice, task("t10", schedule("0 * * *")), 422, "spec.schedule"},
		{"minute 61", alice, task("t11", schedule("61 * * * *")), 422, "spec.schedule"},
		{"hour 25", alice, task("t12", schedule("0 25 * * *")), 422, "spec.schedule"},
		{"day 32", alice, task("t13", schedule("0 0 32 * *")), 422, "spec.schedule"},
		{"month 13", alice, task("t14", schedule("0 0 1 13 *")), 422, "spec.schedule"},
		{"weekday 8", alice, task("t15", schedule("0 0 * * 8")), 422, "spec.schedule"},
		{"unknown macro", alice, task("t16", schedule("@fortnightly")), 422, "spec.schedule"},
		{"empty schedule", alice, task("t17", schedule("")), 422, "spec.schedule"},
		{"TZ= in schedule", alice, task("t18", schedule("TZ=UTC 0 * * * *")), 422, "spec.schedule"},
		{"CRON_TZ= in schedule", alice, task("t19", schedule("CRON_TZ=Europe/Berlin 0 * * * *")), 422, "spec.schedule"},
		{"zone Mars/Olympus", alice, task("t20", zone("Mars/Olympus")), 422, "spec.timeZone"},
		{"zone misspelt", alice, task("t21", zone("Europe/Berlinn")), 422, "spec.timeZone"},
		{"zone as offset", alice, task("t22", zone("UTC+2")), 422, "spec.timeZone"},
		{"negative backoffLimit", alice, task("t23", backoff(-1)), 422, "spec.backoffLimit"},
		{"backoffLimit 101", alice, task("t24", backoff(101)), 422, "spec.backoffLimit"},
		{"activeDeadlineSeconds 0", alice, task("t25", activeDeadline(0)), 422, "spec.activeDeadlineSeconds"},
		{"negative activeDeadlineSeconds", alice, task("t26", activeDeadline(-5)), 422, "spec.activeDeadlineSeconds"},
		{"startingDeadlineSeconds 9", alice, task("t27", startingDeadline(9)), 422, "spec.startingDeadlineSeconds"},
		{"negative success history", alice, task("t28", successHistory(-1)), 422, "spec.successfulRunsHistoryLimit"},
		{"success history 1001", alice, task("t29", successHistory(1001)), 422, "spec.successfulRunsHistoryLimit"},
		{"negative failed history", alice, task("t30", failedHistory(-1)), 422, "spec.failedRunsHistoryLimit"},
		{"failed history 1001", alice, task("t31", failedHistory(1001)), 422, "spec.failedRunsHistoryLimit"},
		{"60-character name", alice, task(strings.Repeat("n", 60), unchanged), 422, "metadata.name"},
		{"53-character name", alice, task(strings.Repeat("m", 53), unchanged), 422, "metadata.name"},
		{"several problems at once", alice, task("t34", func(st *platformv1.ScheduleTask) {
			st.Spec.Schedule, st.Spec.TimeZone = "every day", ptr.To("Mars/Olympus")
		}), 422, "spec.timeZone"},
		{"user without CronJob rights", bob, task("t35", unchanged), 403, "cronjobs.batch"},
		{"template with the operator's label", alice, task("t36", template(corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{platformv1.ScheduleTaskLabel: "other"}}})), 422,
			"spec.template.metadata.labels[platform.example.com/scheduletask]"},
		{"template restartPolicy Always", alice, task("t37", template(corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways}})), 422, "spec.template.spec.restartPolicy"},
		{"template over 64 KiB", alice, task("t38", template(corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{"note": strings.Repeat("x", 70000)}}})), 422,
			"spec.template: must hold at most 65536 bytes"},
		{"template init container without an image", alice, task("t39", template(corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "fetch"}}}})), 422, "spec.template.spec.initContainers[0].image"},
		{"forged TaskRun with jobRef", alice, run("r01", func(tr *platformv1.TaskRun) {
			tr.Spec.JobRef = &platformv1.JobRef{Name: "someone-elses-job", UID: "1234"}
		}), 422, "spec.jobRef"},
		{"forged scheduled TaskRun", alice, run("r02", trigger(platformv1.TriggerScheduled)), 422, "spec.trigger"},
		{"forged catch-up TaskRun", alice, run("r07", func(tr *platformv1.TaskRun) {
			tr.Spec.Trigger, tr.Spec.ScheduledTime = platformv1.TriggerCatchUp, &now
		}), 422, "spec.trigger"},
		{"manual TaskRun with a scheduled time", alice, run("r03", func(tr *platformv1.TaskRun) {
			tr.Spec.ScheduledTime = &now
		}), 422, "spec.scheduledTime"},
		{"manual TaskRun of a missing task", alice, run("r04", taskName("ghost")), 422, "spec.scheduleTaskName"},
		{"TaskRun without a task name", alice, run("r05", taskName("")), 422, "spec.scheduleTaskName"},
		{"TaskRun with an unknown trigger", alice, run("r06", trigger("Whenever")), 422, "spec.trigger"},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d bad objects", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.as.Create(ctx, tt.obj)
			var status apierrors.APIStatus
			if err == nil || !errors.As(err, &status) {
				t.Fatalf("create returned %v, want a rejection", err)
			}
			if got := status.Status().Code; got != tt.code {
				t.Errorf("HTTP %d, want %d: %v", got, tt.code, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("message does not name %s: %v", tt.field, err)
			}
			// Nothing was stored, and nothing was made from it.
			key := client.ObjectKeyFromObject(tt.obj)
			fresh := tt.obj.DeepCopyObject().(client.Object)
			if err := k8sClient.Get(ctx, key, fresh); !apierrors.IsNotFound(err) {
				t.Errorf("rejected object is stored (get: %v)", err)
			}
			if err := k8sClient.Get(ctx, key, &batchv1.CronJob{}); !apierrors.IsNotFound(err) {
				t.Errorf("a CronJob exists for the rejected object (get: %v)", err)
			}
		})
	}

	// The operator adopts and starts manual runs meanwhile, so edits retry on
	// conflicts with a fresh copy; what is asserted is the final rejection.
	editRun := func(name string, mutate func(*platformv1.TaskRun)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur platformv1.TaskRun
			if err := alice.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cur); err != nil {
				return err
			}
			mutate(&cur)
			return alice.Update(ctx, &cur)
		})
	}
	t.Run("edit of a TaskRun's spec", func(t *testing.T) {
		if err := alice.Create(ctx, testutil.NewManualTaskRun(ns, "edited", "real")); err != nil {
			t.Fatalf("a good manual run as alice: %v", err)
		}
		err := editRun("edited", func(tr *platformv1.TaskRun) { tr.Spec.ScheduleTaskName = "other" })
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "scheduleTaskName") {
			t.Errorf("update returned %v, want Invalid naming spec.scheduleTaskName", err)
		}
	})
	t.Run("user linking a run to a Job", func(t *testing.T) {
		// Whether or not the operator has linked the run yet, a user's link
		// is refused: by the webhook before, by the CEL rule after.
		err := editRun("edited", func(tr *platformv1.TaskRun) {
			if tr.Spec.JobRef == nil {
				tr.Spec.JobRef = &platformv1.JobRef{Name: "x", UID: "y"}
			} else {
				tr.Spec.JobRef.UID = "forged"
			}
		})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.jobRef") {
			t.Errorf("update returned %v, want a rejection naming spec.jobRef", err)
		}
	})
}

func TestAdmission_AcceptsGoodObjectsAndStoresDefaults(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{platformRule, cronJobRule})

	good := []*platformv1.ScheduleTask{
		testutil.NewScheduleTask(ns, "plain"),
		testutil.NewScheduleTask(ns, "macro", testutil.WithSchedule("@weekly")),
		testutil.NewScheduleTask(ns, "ranges", testutil.WithSchedule("*/5 9-17 * * MON-FRI")),
		testutil.NewScheduleTask(ns, strings.Repeat("x", 52)),
	}
	zoned := testutil.NewScheduleTask(ns, "zoned")
	zoned.Spec.TimeZone = ptr.To("America/Sao_Paulo")
	zoned.Spec.Image = "registry.example.com:5000/team/app@sha256:" + strings.Repeat("a", 64)
	edges := testutil.NewScheduleTask(ns, "edges", testutil.WithBackoffLimit(0))
	edges.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
	edges.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
	edges.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](1000)
	good = append(good, zoned, edges)
	for _, st := range good {
		if err := alice.Create(ctx, st); err != nil {
			t.Errorf("good task %s rejected: %v", st.Name, err)
		}
	}
	var stored platformv1.ScheduleTask
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain"}, &stored); err != nil {
		t.Fatal(err)
	}
	if stored.Spec.ConcurrencyPolicy != platformv1.AllowConcurrent || ptr.Deref(stored.Spec.BackoffLimit, -1) != 6 ||
		ptr.Deref(stored.Spec.Suspend, true) || ptr.Deref(stored.Spec.SuccessfulRunsHistoryLimit, -1) != 10 {
		t.Errorf("defaults missing from the stored task: %+v", stored.Spec)
	}

	tr := &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "now"},
		Spec:       platformv1.TaskRunSpec{ScheduleTaskName: "plain"},
	}
	if err := alice.Create(ctx, tr); err != nil {
		t.Fatalf("a manual run with defaults rejected: %v", err)
	}
	var storedRun platformv1.TaskRun
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tr), &storedRun); err != nil {
		t.Fatal(err)
	}
	if storedRun.Spec.Trigger != platformv1.TriggerManual || storedRun.Labels[platformv1.ScheduleTaskLabel] != "plain" {
		t.Errorf("stored run lacks its defaults: trigger %q labels %v", storedRun.Spec.Trigger, storedRun.Labels)
	}
}

func TestAdmission_TheFinalizerIsSetAtCreationAndKeptByServerSideApply(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := newNamespace(t)
	alice := userClient(t, ns, "alice", []rbacv1.PolicyRule{platformRule, cronJobRule})

	// The answer to a create is the object as stored, after admission and
	// before the operator has seen it.
	st := testutil.NewScheduleTask(ns, "created")
	g.Expect(alice.Create(ctx, st)).To(Succeed())
	g.Expect(st.Finalizers).To(ConsistOf(platformv1.ScheduleTaskFinalizer))

	// Applied twice by its author, who never wrote the finalizer: the
	// second apply keeps it, since the author's field manager does not own it.
	applied := testutil.NewScheduleTask(ns, "applied")
	applied.TypeMeta = metav1.TypeMeta{APIVersion: platformv1.GroupVersion.String(), Kind: "ScheduleTask"}
	apply := func(schedule string) []string {
		obj := applied.DeepCopy()
		obj.Spec.Schedule = schedule
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		g.Expect(err).NotTo(HaveOccurred())
		delete(m, "status")
		u := &unstructured.Unstructured{Object: m}
		g.Expect(alice.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("alice"),
			client.ForceOwnership)).To(Succeed())
		return u.GetFinalizers()
	}
	g.Expect(apply("0 3 * * *")).To(ConsistOf(platformv1.ScheduleTaskFinalizer))
	g.Expect(apply("0 4 * * *")).To(ConsistOf(platformv1.ScheduleTaskFinalizer))
}
