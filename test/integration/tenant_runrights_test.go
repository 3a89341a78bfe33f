// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// A manual run starts the task's pod under its ServiceAccount, as
// `kubectl create job --from=cronjob/...` would: whoever asks for one must
// be allowed to create Jobs in the namespace, or hold the custom verb run on
// that very task.
func TestTenant_ManualRunNeedsCreateJobsOrTheRunVerbOnThatTask(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createTask(t, testutil.NewScheduleTask(ns, "nightly"))
	createTask(t, testutil.NewScheduleTask(ns, "other"))
	runner := userClient(t, ns, "runner", withRules(runRule("nightly")))
	nobody := userClient(t, ns, "nobody", tenantRules)
	jobber := userClient(t, ns, "jobber", withRules(jobsRule))

	missing := func(user, task string) string {
		return fmt.Sprintf("user %q may neither create jobs.batch in namespace %q "+
			"nor run scheduletasks.platform.example.com %q", user, ns, task)
	}
	tests := []struct {
		name    string
		as      client.Client
		user    string
		task    string
		allowed bool
	}{
		{"runner runs the task it may run", runner, "runner", "nightly", true},
		{"runner runs another task", runner, "runner", "other", false},
		{"user with neither right", nobody, "nobody", "nightly", false},
		{"user who may create Jobs", jobber, "jobber", "other", true},
	}
	for i, tt := range tests {
		t.Run(tt.name+" by TaskRun", func(t *testing.T) {
			tr := testutil.NewManualTaskRun(ns, fmt.Sprintf("run-%d", i), tt.task)
			err := tt.as.Create(ctx, tr)
			if tt.allowed {
				if err != nil {
					t.Fatalf("create TaskRun: %v", err)
				}
				return
			}
			expectRefused(t, err, 403, "spec.scheduleTaskName", missing(tt.user, tt.task))
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tr), &platformv1.TaskRun{}); !apierrors.IsNotFound(err) {
				t.Errorf("refused TaskRun is stored (get: %v)", err)
			}
		})
		t.Run(tt.name+" by run-now", func(t *testing.T) {
			key := client.ObjectKey{Namespace: ns, Name: tt.task}
			value := fmt.Sprintf("by-%s-%d", tt.user, i)
			err := editTask(ctx, tt.as, key, setAnnotation[*platformv1.ScheduleTask](platformv1.RunNowAnnotation, value))
			if tt.allowed {
				if err != nil {
					t.Fatalf("set run-now: %v", err)
				}
				return
			}
			expectRefused(t, err, 403, "metadata.annotations[platform.example.com/run-now]", missing(tt.user, tt.task))
			var st platformv1.ScheduleTask
			if err := k8sClient.Get(ctx, key, &st); err != nil {
				t.Fatal(err)
			}
			if st.Annotations[platformv1.RunNowAnnotation] == value {
				t.Errorf("refused run-now value is stored")
			}
		})
	}

	// Who set run-now is recorded by admission, and the run says so; nobody
	// can write it for someone else.
	t.Run("run-now requester is recorded", func(t *testing.T) {
		key := client.ObjectKey{Namespace: ns, Name: "nightly"}
		err := editTask(ctx, jobber, key, func(st *platformv1.ScheduleTask) {
			setAnnotation[*platformv1.ScheduleTask](platformv1.RunNowAnnotation, "recorded")(st)
			setAnnotation[*platformv1.ScheduleTask](platformv1.RunNowRequestedByAnnotation, "runner")(st)
		})
		if err != nil {
			t.Fatalf("set run-now: %v", err)
		}
		eventually(t, "a run requested by jobber", func() error {
			var list platformv1.TaskRunList
			if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, tr := range list.Items {
				if tr.Spec.ScheduleTaskName == "nightly" && tr.Annotations[platformv1.RequestedByAnnotation] == "jobber" {
					return nil
				}
			}
			return fmt.Errorf("no run of nightly requested by jobber among %d runs", len(list.Items))
		})
		err = editTask(ctx, jobber, key,
			setAnnotation[*platformv1.ScheduleTask](platformv1.RunNowRequestedByAnnotation, "runner"))
		expectRefused(t, err, 403, "metadata.annotations[platform.example.com/run-now-requested-by]")
	})

	// The verb is asked for by name: granting run on every task of the
	// namespace (no resourceNames) works as well.
	anyTask := userClient(t, ns, "any-runner", withRules(runRule()))
	if err := anyTask.Create(ctx, testutil.NewManualTaskRun(ns, "any-1", "other")); err != nil {
		t.Errorf("run verb on every task: %v", err)
	}
}

// The scheduletask-runner ClusterRole shipped in config/rbac (and the chart)
// is enough to start runs, bound in one namespace, and grants nothing more.
func TestTenant_ShippedRunnerRoleLetsItsHolderRunTasksAndNothingElse(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createTask(t, testutil.NewScheduleTask(ns, "backup"))

	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "scheduletask_runner_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	role.Name = ns + "-runner" // cluster-scoped: one per test
	role.Labels = nil          // no aggregation into the cluster's roles from a test
	if err := k8sClient.Create(ctx, &role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), &role) })
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "carol-runs"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"}},
	}
	if err := k8sClient.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	u, err := testEnv.AddUser(envtest.User{Name: "carol", Groups: []string{"operators"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	carol, err := client.New(u.Config(), client.Options{Scheme: testEnv.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	// RBAC bindings reach the authorizer through an informer: wait for it.
	eventually(t, "carol starts a run", func() error {
		return carol.Create(ctx, testutil.NewManualTaskRun(ns, "carol-1", "backup"))
	})
	var list platformv1.TaskRunList
	if err := carol.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Errorf("carol lists runs: %v", err)
	}
	if err := carol.Create(ctx, testutil.NewScheduleTask(ns, "carols")); !apierrors.IsForbidden(err) {
		t.Errorf("carol created a ScheduleTask: %v", err)
	}
	err = editTask(ctx, carol, client.ObjectKey{Namespace: ns, Name: "backup"},
		setAnnotation[*platformv1.ScheduleTask]("x", "y"))
	if !apierrors.IsForbidden(err) {
		t.Errorf("carol edited a ScheduleTask: %v", err)
	}
}
