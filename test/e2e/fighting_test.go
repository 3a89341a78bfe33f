//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/jobutil"
	"github.com/example/platform-operator/internal/testutil"
)

// TestScheduleTask_AJobTemplateFoughtOverIsNeverARunAndOtherRunsGoOn has a
// co-tenant patch an annotation into an every-minute task's pod template ten
// times a second across a fire time, with the real CronJob controller: no
// Job of the patched template is recorded as a run and each is deleted, the
// CronJob ends with the task's template and resumed, and another
// namespace's every-minute task records its run of that fire time
// meanwhile.
func TestScheduleTask_AJobTemplateFoughtOverIsNeverARunAndOtherRunsGoOn(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	attacked, other := newNamespace(t), newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(attacked, "fought", kwokPod(0, "1s")))).To(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(other, "bystander", kwokPod(0, "1s")))).To(Succeed())
	key := client.ObjectKey{Namespace: attacked, Name: "fought"}
	g.Eventually(func() error { return cluster.Client.Get(ctx, key, &batchv1.CronJob{}) }).
		WithTimeout(settleTimeout).Should(Succeed())

	// The fight starts ten seconds before a fire time and lasts twenty.
	fire := time.Now().Truncate(time.Minute).Add(time.Minute)
	if time.Until(fire) < 12*time.Second {
		fire = fire.Add(time.Minute)
	}
	time.Sleep(time.Until(fire.Add(-10 * time.Second)))
	const implantKey = "co-tenant.example.com/implant"
	// Every Job of a patched template the CronJob controller makes, seen
	// by listing often, since the operator deletes them within a pass.
	implanted := watchJobs(t, attacked, func(j *batchv1.Job) bool {
		_, ok := j.Spec.Template.Annotations[implantKey]
		return ok
	})
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := range 200 {
		<-tick.C
		patch := fmt.Sprintf(`{"spec":{"jobTemplate":{"spec":{"template":{"metadata":{"annotations":{%q:"%d"}}}}}}}`,
			implantKey, i)
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: attacked, Name: "fought"}}
		g.Expect(cluster.Client.Patch(ctx, cj, client.RawPatch(types.MergePatchType, []byte(patch)),
			client.FieldOwner("co-tenant-loop"))).To(Succeed(), "patch %d", i)
	}

	// The other namespace's run of that fire time was recorded.
	g.Eventually(func(g Gomega) {
		var times []time.Time
		for _, tr := range runsOf(g, ctx, other) {
			if tr.Spec.ScheduledTime != nil {
				times = append(times, tr.Spec.ScheduledTime.Time)
			}
		}
		g.Expect(times).To(ContainElement(BeTemporally("==", fire)))
	}).WithTimeout(settleTimeout).Should(Succeed())
	// Once the backoff is over, the template is the task's and the CronJob
	// can fire again. The backoff doubles with each repair up to
	// apply.RepairBackoffMax: how far it got in the fight depends on how
	// many of the patches the operator saw, fewer on a busy machine.
	g.Eventually(func(g Gomega) {
		cj := &batchv1.CronJob{}
		g.Expect(cluster.Client.Get(ctx, key, cj)).To(Succeed())
		g.Expect(cj.Spec.JobTemplate.Spec.Template.Annotations).NotTo(HaveKey(implantKey))
		g.Expect(cj.Spec.Suspend).To(HaveValue(BeFalse()), "the CronJob is still held")
		st := getTask(g, ctx, attacked, "fought")
		g.Expect(st.Status.Conditions).NotTo(ContainElement(HaveField("Type", platformv1.ConditionChildContested)))
	}).WithTimeout(apply.RepairBackoffMax + settleTimeout).Should(Succeed())
	// A Job of a patched template is never a run of the task. The
	// CronJob is suspended while the template is contested, but the
	// CronJob controller fires from its own cache, which under load can
	// lag the hold by seconds: a Job it makes from such a view fails the
	// signature check, is never recorded, and is deleted with its pods
	// (unless it finished first: then it is only reported)
	// (the envtest twin,
	// TestScheduleTask_TenantPatchingTheJobTemplateInALoopCostsFewWritesAndNeverRuns,
	// checks that no version of the CronJob that can fire holds the change).
	seen := implanted()
	t.Logf("Jobs of the patched template: %v", seen)
	g.Eventually(func(g Gomega) {
		for name, uid := range seen {
			job := &batchv1.Job{}
			err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: attacked, Name: name}, job)
			if err == nil && job.UID == uid {
				// One that finished before the operator saw it has nothing
				// left to stop: it is reported, and kept as evidence
				// (madeFromImplant), under a busy machine's load.
				finished, _ := jobutil.Finished(job)
				g.Expect(finished).To(BeTrue(), "Job %s of the patched template is still running", name)
				continue
			}
			g.Expect(apierrors.IsNotFound(err) || err == nil).To(BeTrue(),
				"Job %s of the patched template: %v", name, err)
		}
		g.Expect(unverifiedReports(g, ctx, attacked, "fought")).To(ContainElements(slices.Collect(maps.Keys(seen))))
	}).WithTimeout(settleTimeout).Should(Succeed())
	// By UID: once the implant's Job is gone, the CronJob controller may
	// make the Job of that fire time again, of the same name, from the
	// task's template, and that one is a run.
	implantUIDs := slices.Collect(maps.Values(seen))
	g.Consistently(func(g Gomega) {
		for _, tr := range runsOf(g, ctx, attacked) {
			if tr.Spec.JobRef != nil {
				g.Expect(implantUIDs).NotTo(ContainElement(tr.Spec.JobRef.UID),
					"run %s records Job %s of the co-tenant's template", tr.Name, tr.Spec.JobRef.Name)
			}
		}
	}).WithTimeout(5 * time.Second).Should(Succeed())
}

// watchJobs lists the namespace's Jobs every 100 ms until the test ends,
// keeping the name and UID of each that match; the returned function
// reports them so far.
func watchJobs(t *testing.T, ns string, match func(*batchv1.Job) bool) func() map[string]types.UID {
	var mu sync.Mutex
	found := map[string]types.UID{}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			var l batchv1.JobList
			if err := cluster.Client.List(ctx, &l, client.InNamespace(ns)); err == nil {
				mu.Lock()
				for i := range l.Items {
					if match(&l.Items[i]) {
						found[l.Items[i].Name] = l.Items[i].UID
					}
				}
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() map[string]types.UID {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(found)
	}
}
