// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// A run the operator cannot adopt (it has another controller: written
// before admission refused it, or by someone the checks do not see) must not
// stop the task's bookkeeping: retention, status and observedGeneration go
// on, and the task says which runs it could not adopt.
func TestTenant_PoisonTaskRunDoesNotStopTheTasksBookkeeping(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "victim")
	st.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](1)
	cj := createTask(t, st)
	key := client.ObjectKeyFromObject(st)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "foreign"}}
	g.Expect(k8sClient.Create(ctx, cm)).To(Succeed())
	poison := testutil.NewManualTaskRun(ns, "poison", "victim")
	poison.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID,
		Controller: ptr.To(true)}}
	g.Expect(k8sClient.Create(ctx, poison)).To(Succeed(), "the operator's identity is exempt")

	g.Eventually(func(g Gomega) {
		task := getTask(g, key)
		c := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionRunsAdopted)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(platformv1.ReasonForeignController))
		g.Expect(c.Message).To(ContainSubstring("poison"))
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		var evs eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		var warned bool
		for _, e := range evs.Items {
			warned = warned || e.Regarding.Name == "victim" && e.Type == corev1.EventTypeWarning &&
				e.Reason == platformv1.ReasonForeignController
		}
		g.Expect(warned).To(BeTrue(), "a Warning event on the task")
	}, timeout, poll).Should(Succeed())

	// The rest of the pass goes on: a spec change is observed, other manual
	// runs start, and retention deletes what is beyond the limit.
	g.Expect(editTask(ctx, k8sClient, key, func(st *platformv1.ScheduleTask) { st.Spec.Image = editedImage })).
		To(Succeed())
	g.Expect(k8sClient.Create(ctx, testutil.NewManualTaskRun(ns, "healthy", "victim"))).To(Succeed())
	finished := make([]string, 0, 3)
	// One base for the three, so their names (one per minute) differ even
	// when the clock moves between them.
	base := time.Now().Truncate(time.Minute)
	for i := range 3 {
		at := base.Add(-time.Duration(i+2) * time.Minute)
		job := testutil.JobFromCronJob(cj, at)
		g.Expect(k8sClient.Create(ctx, job)).To(Succeed())
		testutil.CompleteJob(job, at, at.Add(5*time.Second))
		g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
		finished = append(finished, job.Name)
	}
	g.Eventually(func(g Gomega) {
		task := getTask(g, key)
		g.Expect(task.Status.ObservedGeneration).To(Equal(task.Generation))
		var healthy platformv1.TaskRun
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "healthy"}, &healthy)).To(Succeed())
		g.Expect(healthy.Spec.JobRef).NotTo(BeNil(), "another manual run was started")
		var left int
		for _, name := range finished {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &platformv1.TaskRun{})
			if err == nil {
				left++
			} else {
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
			}
		}
		g.Expect(left).To(Equal(1), "retention kept one succeeded run")
	}, timeout, poll).Should(Succeed())
}

// A run number a user could once write (MaxInt64) never overflows the
// task's count: the count stays a count of runs.
func TestTenant_TamperedRunNumberDoesNotOverflowTheCount(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createTask(t, testutil.NewScheduleTask(ns, "tally"))
	key := client.ObjectKey{Namespace: ns, Name: "tally"}

	// Written as the operator may write, as before admission refused it.
	forged := testutil.NewManualTaskRun(ns, "forged", "tally")
	forged.Annotations = map[string]string{platformv1.RunNumberAnnotation: strconv.FormatInt(math.MaxInt64, 10)}
	g.Expect(k8sClient.Create(ctx, forged)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, testutil.NewManualTaskRun(ns, "next", "tally"))).To(Succeed())

	g.Eventually(func(g Gomega) {
		var next platformv1.TaskRun
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "next"}, &next)).To(Succeed())
		n, err := strconv.ParseInt(next.Annotations[platformv1.RunNumberAnnotation], 10, 64)
		g.Expect(err).NotTo(HaveOccurred(), "the next run is numbered")
		g.Expect(n).To(BeNumerically(">", 0))
		g.Expect(n).To(BeNumerically("<", 1<<53))
		task := getTask(g, key)
		g.Expect(task.Status.TriggerCount).To(BeNumerically(">", 0))
		g.Expect(task.Status.TriggerCount).To(BeNumerically("<", 1<<53))
	}, timeout, poll).Should(Succeed())
}
