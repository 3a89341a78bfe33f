// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/testutil"
)

const (
	// fightPatches at fightInterval: a co-tenant patching a task's CronJob
	// ten times a second for (at least) twenty seconds.
	fightPatches  = 200
	fightInterval = 100 * time.Millisecond
	// atOnce is how soon a repair that does not wait for the backoff (an
	// implant, a pod template) must come on two busy cores.
	atOnce = 10 * time.Second
)

// fightBudget is the most repairs the operator may make of a child fought
// over for window: what the backoff allows (apply.RepairsWithin), one
// after the last change, and an implant's two on top (put back with the
// CronJob suspended, resumed once its backoff is over; a Deployment's pod
// template costs one).
func fightBudget(window time.Duration) int {
	return apply.RepairsWithin(window) + 3
}

// countModified counts the Modified events of a watch until ctx ends; the
// returned function waits for the end and gives the count.
func countModified(ctx context.Context, t *testing.T, list client.ObjectList, ns string) func() int {
	t.Helper()
	modified := watchModified(ctx, t, list, ns)
	return func() int { return len(modified()) }
}

// watchModified collects the objects of the Modified events of a watch until
// ctx ends; the returned function waits for the end and gives them, oldest
// first.
func watchModified(ctx context.Context, t *testing.T, list client.ObjectList, ns string) func() []runtime.Object {
	t.Helper()
	wc, err := client.NewWithWatch(testEnv.Config, client.Options{Scheme: testEnv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, list, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	var got []runtime.Object
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if ev.Type == watch.Modified {
					got = append(got, ev.Object)
				}
			}
		}
	}()
	return func() []runtime.Object { <-done; return got }
}

// eventsSince counts the events in ns created at or after since.
func eventsSince(g Gomega, ns string, since time.Time) int {
	var evs eventsv1.EventList
	g.Expect(k8sClient.List(context.Background(), &evs, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, e := range evs.Items {
		if !e.CreationTimestamp.Time.Before(since.Truncate(time.Second)) {
			n++
		}
	}
	return n
}

func TestScheduleTask_TenantPatchingTheCronJobInALoopCostsFewWritesAndStopsNoOne(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	attacked := newNamespace(t)
	other := newNamespace(t)
	st := testutil.NewScheduleTask(attacked, "fought", testutil.WithSchedule("0 3 1 1 *"))
	createTask(t, st)
	applied := *settledCronJob(g, st).Spec.SuccessfulJobsHistoryLimit
	createTask(t, testutil.NewScheduleTask(other, "bystander", testutil.WithSchedule("0 3 1 1 *")))

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	cronJobChanges := countModified(watchCtx, t, &batchv1.CronJobList{}, attacked)
	taskChanges := countModified(watchCtx, t, &platformv1.ScheduleTaskList{}, attacked)
	started := time.Now()

	// The co-tenant: a merge patch of a field the operator applies, each a
	// change (no two patches in a row set the same value, none the
	// operator's), under a field manager of its own. It goes on until the
	// other namespace's run is reported (or the test ends), and for at
	// least fightPatches patches.
	var bystanderDone atomic.Bool
	defer bystanderDone.Store(true)
	var patchErr error
	var implantAt atomic.Int64
	var sent int
	var fightStart, fightEnd time.Time
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(fightInterval)
		defer tick.Stop()
		for i := 0; i < fightPatches || !bystanderDone.Load(); i++ {
			<-tick.C
			patch := fmt.Sprintf(`{"spec":{"successfulJobsHistoryLimit":%d}}`, i%5+1)
			cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: attacked, Name: st.Name}}
			if err := k8sClient.Patch(ctx, cj, client.RawPatch(types.MergePatchType, []byte(patch)),
				client.FieldOwner("co-tenant-loop")); err != nil {
				patchErr = fmt.Errorf("patch %d: %w", i, err)
				return
			}
			sent, fightEnd = i+1, time.Now()
			if i == 0 {
				fightStart = fightEnd
			}
			if i == fightPatches/2 {
				implantAt.Store(time.Now().UnixNano())
			}
		}
	})

	// Halfway through, with the repairs of the loop held back, the
	// co-tenant also implants an init container in the job template: that
	// is removed at once, as docs/admission.md promises, backoff or not.
	g.Eventually(implantAt.Load, 2*fightPatches*fightInterval, poll).ShouldNot(BeZero())
	implant := batchv1ac.CronJob(st.Name, attacked).WithSpec(batchv1ac.CronJobSpec().WithJobTemplate(
		batchv1ac.JobTemplateSpec().WithSpec(batchv1ac.JobSpec().WithTemplate(corev1ac.PodTemplateSpec().WithSpec(
			corev1ac.PodSpec().WithInitContainers(
				corev1ac.Container().WithName("implant").WithImage("evil.example.com/miner:1")))))))
	g.Expect(k8sClient.Apply(ctx, implant, client.FieldOwner("co-tenant-implant"), client.ForceOwnership)).To(Succeed())
	implanted := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(cronJobOf(g, st).Spec.JobTemplate.Spec.Template.Spec.InitContainers).To(BeEmpty())
	}, atOnce, 50*time.Millisecond).Should(Succeed(), "the implant outlived the pass")
	t.Logf("implant removed %s after it was applied", time.Since(implanted).Round(time.Millisecond))

	// Meanwhile another namespace's manual run starts, finishes and is
	// reported, while the loop goes on.
	run := testutil.NewManualTaskRun(other, "bystander-run", "bystander")
	g.Expect(k8sClient.Create(ctx, run)).To(Succeed())
	job := &batchv1.Job{}
	g.Eventually(func(g Gomega) {
		got := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(run), got)).To(Succeed())
		g.Expect(got.Spec.JobRef).NotTo(BeNil())
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: other, Name: got.Spec.JobRef.Name}, job)).To(Succeed())
	}, timeout, poll).Should(Succeed())
	begin := time.Now().Add(-5 * time.Second).Truncate(time.Second)
	testutil.CompleteJob(job, begin, begin.Add(2*time.Second))
	g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(run), got)).To(Succeed())
		g.Expect(got.Status.Phase).To(Equal(platformv1.TaskRunSucceeded))
		g.Expect(eventReasons(g, other, run.Name)).To(ContainElement("RunSucceeded"))
	}, timeout, poll).Should(Succeed())
	bystanderDone.Store(true)

	wg.Wait()
	g.Expect(patchErr).NotTo(HaveOccurred())
	// Once the loop stops, the CronJob is put back within the backoff.
	g.Eventually(func(g Gomega) {
		g.Expect(*cronJobOf(g, st).Spec.SuccessfulJobsHistoryLimit).To(Equal(applied))
	}, 45*time.Second, poll).Should(Succeed())
	time.Sleep(time.Second)
	stopWatch()

	// Every change of the CronJob that is not one of the co-tenant's
	// patches (and its implant) is the operator's. Each repair may cost a
	// CronJob write and its event; two writes more are allowed for the
	// task's status.
	window := fightEnd.Sub(fightStart)
	repairs := fightBudget(window)
	cronJobWrites := cronJobChanges() - sent - 1
	statusWrites := taskChanges()
	events := eventsSince(g, attacked, started)
	t.Logf("%d patches in %s; operator writes in the attacked namespace: %d CronJob, %d task status, %d events "+
		"(the backoff allows %d repairs)", sent, window.Round(time.Millisecond), cronJobWrites, statusWrites, events, repairs)
	g.Expect(cronJobWrites).To(BeNumerically("<=", repairs),
		"%d CronJob writes for %d patches in %s", cronJobWrites, sent, window)
	g.Expect(cronJobWrites+statusWrites+events).To(BeNumerically("<=", 2*repairs+2),
		"%d CronJob writes, %d status writes and %d events for %d patches in %s",
		cronJobWrites, statusWrites, events, sent, window)

	// Ready is the victim's own: the loop never failed it.
	task := getTask(g, client.ObjectKeyFromObject(st))
	g.Expect(task.Status.Conditions).To(ContainElement(And(
		HaveField("Type", platformv1.ConditionReady), HaveField("Status", metav1.ConditionTrue))))
}

func TestAppDeployment_TenantPatchingTheDeploymentInALoopCostsFewWritesButItsTemplateIsPutBackAtOnce(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ad := sampleApp(t, ns)
	g.Expect(k8sClient.Create(ctx, ad)).To(Succeed())
	var d *appsv1.Deployment
	g.Eventually(func(g Gomega) { d = getDeployment(g, ns, ad.Name) }, timeout, poll).Should(Succeed())
	applied := *d.Spec.RevisionHistoryLimit
	image := d.Spec.Template.Spec.Containers[0].Image
	// The first pass's own writes are not counted: the fight starts once
	// the AppDeployment's status says it has seen its Deployment.
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Status.ObservedGeneration).To(Equal(ad.Generation))
	}, timeout, poll).Should(Succeed())
	time.Sleep(time.Second)

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	changes := countModified(watchCtx, t, &appsv1.DeploymentList{}, ns)
	const patches = 50
	patch := func(body string) {
		t.Helper()
		g.Expect(k8sClient.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ad.Name}},
			client.RawPatch(types.StrategicMergePatchType, []byte(body)), client.FieldOwner("co-tenant-loop"))).To(Succeed())
	}
	fightStart := time.Now()
	for i := range patches {
		patch(fmt.Sprintf(`{"spec":{"revisionHistoryLimit":%d}}`, 20+i%5))
		if i == 40 {
			// Four seconds in, the loop's next repair is held back for
			// three more (repairs at 0, 1, 3 and 7 s). An image of the
			// co-tenant's goes into the pod template: it runs as the
			// application, so it is put back within the pass, at once.
			patch(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":"evil.example.com/miner:1"}]}}}}`,
				d.Spec.Template.Spec.Containers[0].Name))
			g.Eventually(func(g Gomega) {
				g.Expect(getDeployment(g, ns, ad.Name).Spec.Template.Spec.Containers[0].Image).To(Equal(image))
			}, atOnce, 50*time.Millisecond).Should(Succeed(), "the co-tenant's image outlived the pass")
		}
		time.Sleep(fightInterval)
	}
	window := time.Since(fightStart)
	g.Eventually(func(g Gomega) {
		g.Expect(*getDeployment(g, ns, ad.Name).Spec.RevisionHistoryLimit).To(Equal(applied))
	}, 20*time.Second, poll).Should(Succeed())
	time.Sleep(time.Second)
	stopWatch()

	writes := changes() - patches - 1
	repairs := fightBudget(window)
	t.Logf("%d operator writes of the Deployment for %d patches in %s (the backoff allows %d repairs)",
		writes, patches, window.Round(time.Millisecond), repairs)
	g.Expect(writes).To(BeNumerically("<=", repairs),
		"the operator wrote the Deployment %d times for %d patches in %s", writes, patches, window)
	g.Expect(getApp(g, client.ObjectKeyFromObject(ad)).Status.Conditions).NotTo(ContainElement(
		HaveField("Type", platformv1.ConditionChildContested)), "a fight of seconds is not ten repairs")
}

func TestScheduleTask_TenantPatchingTheJobTemplateInALoopCostsFewWritesAndNeverRuns(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	attacked := newNamespace(t)
	other := newNamespace(t)
	st := testutil.NewScheduleTask(attacked, "fought")
	createTask(t, st)
	settledCronJob(g, st)
	createTask(t, testutil.NewScheduleTask(other, "bystander", testutil.WithSchedule("0 3 1 1 *")))

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	cronJobVersions := watchModified(watchCtx, t, &batchv1.CronJobList{}, attacked)
	taskChanges := countModified(watchCtx, t, &platformv1.ScheduleTaskList{}, attacked)
	started := time.Now()

	// The co-tenant: a merge patch of an annotation of the pod template,
	// each a new value, under a field manager of its own, ten a second.
	const implantKey = "co-tenant.example.com/implant"
	var bystanderDone atomic.Bool
	defer bystanderDone.Store(true)
	var patchErr error
	var sent int
	var fightStart, fightEnd time.Time
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(fightInterval)
		defer tick.Stop()
		for i := 0; i < fightPatches || !bystanderDone.Load(); i++ {
			<-tick.C
			patch := fmt.Sprintf(`{"spec":{"jobTemplate":{"spec":{"template":{"metadata":{"annotations":{%q:"%d"}}}}}}}`,
				implantKey, i)
			cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: attacked, Name: st.Name}}
			if err := k8sClient.Patch(ctx, cj, client.RawPatch(types.MergePatchType, []byte(patch)),
				client.FieldOwner("co-tenant-loop")); err != nil {
				patchErr = fmt.Errorf("patch %d: %w", i, err)
				return
			}
			sent, fightEnd = i+1, time.Now()
			if i == 0 {
				fightStart = fightEnd
			}
		}
	})

	// Meanwhile another namespace's manual run starts, finishes and is
	// reported. (A manual run of the attacked task is made from the task's
	// own template: TestTenant_AnImplantRacingAManualRunNeverRuns.)
	run := testutil.NewManualTaskRun(other, "bystander-run", "bystander")
	g.Expect(k8sClient.Create(ctx, run)).To(Succeed())
	job := &batchv1.Job{}
	g.Eventually(func(g Gomega) {
		got := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(run), got)).To(Succeed())
		g.Expect(got.Spec.JobRef).NotTo(BeNil())
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: other, Name: got.Spec.JobRef.Name}, job)).To(Succeed())
	}, timeout, poll).Should(Succeed())
	begin := time.Now().Add(-5 * time.Second).Truncate(time.Second)
	testutil.CompleteJob(job, begin, begin.Add(2*time.Second))
	g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(run), got)).To(Succeed())
		g.Expect(got.Status.Phase).To(Equal(platformv1.TaskRunSucceeded))
	}, timeout, poll).Should(Succeed())
	// While the fight goes on, the task says why its CronJob is suspended.
	g.Eventually(func(g Gomega) {
		g.Expect(getTask(g, client.ObjectKeyFromObject(st)).Status.Conditions).To(ContainElement(And(
			HaveField("Type", platformv1.ConditionChildContested),
			HaveField("Reason", platformv1.ReasonJobTemplateHeld),
			HaveField("Message", ContainSubstring(`"co-tenant-loop"`)))))
	}, timeout, poll).Should(Succeed())
	bystanderDone.Store(true)

	wg.Wait()
	g.Expect(patchErr).NotTo(HaveOccurred())
	// Once the loop stops, the template is put back within the backoff and
	// the CronJob, its wait over, can fire again.
	g.Eventually(func(g Gomega) {
		cj := cronJobOf(g, st)
		g.Expect(cj.Spec.JobTemplate.Spec.Template.Annotations).NotTo(HaveKey(implantKey))
		g.Expect(cj.Spec.Suspend).To(HaveValue(BeFalse()))
	}, 90*time.Second, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getTask(g, client.ObjectKeyFromObject(st)).Status.Conditions).NotTo(ContainElement(
			HaveField("Type", platformv1.ConditionChildContested)))
	}, timeout, poll).Should(Succeed())
	time.Sleep(time.Second)
	stopWatch()

	// Every version of the CronJob with the implant was suspended, but the
	// one the first patch made, before the operator's first pass.
	versions := cronJobVersions()
	canFire := 0
	for _, obj := range versions {
		cj := obj.(*batchv1.CronJob)
		_, implanted := cj.Spec.JobTemplate.Spec.Template.Annotations[implantKey]
		if implanted && !ptr.Deref(cj.Spec.Suspend, false) {
			canFire++
		}
	}
	g.Expect(canFire).To(BeNumerically("<=", 1), "%d versions of the CronJob could fire with the implant", canFire)

	// Every change of the CronJob that is not one of the co-tenant's patches
	// is the operator's; with its status writes and events, at most 20.
	window := fightEnd.Sub(fightStart)
	cronJobWrites := len(versions) - sent
	statusWrites := taskChanges()
	events := eventsSince(g, attacked, started)
	t.Logf("%d patches in %s; operator writes in the attacked namespace: %d CronJob, %d task, %d events",
		sent, window.Round(time.Millisecond), cronJobWrites, statusWrites, events)
	g.Expect(cronJobWrites+statusWrites+events).To(BeNumerically("<=", 20),
		"%d CronJob writes, %d task writes and %d events for %d patches in %s",
		cronJobWrites, statusWrites, events, sent, window)
}
