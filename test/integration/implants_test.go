// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/testutil"
)

// templateManagers lists the field managers other than the operator's that
// hold fields of the CronJob's job template.
func templateManagers(cj *batchv1.CronJob) []string {
	var out []string
	for _, mf := range cj.ManagedFields {
		if mf.Manager == scheduletask.FieldManager || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Spec map[string]any `json:"f:spec"`
		}
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields) == nil && fields.Spec["f:jobTemplate"] != nil {
			out = append(out, mf.Manager)
		}
	}
	return out
}

// settledCronJob waits until the CronJob's resourceVersion holds still for
// two seconds and returns it.
func settledCronJob(g Gomega, st *platformv1.ScheduleTask) *batchv1.CronJob {
	var cj *batchv1.CronJob
	g.Eventually(func(g Gomega) {
		first := cronJobOf(g, st)
		time.Sleep(2 * time.Second)
		cj = cronJobOf(g, st)
		g.Expect(cj.ResourceVersion).To(Equal(first.ResourceVersion))
	}, timeout, poll).Should(Succeed())
	return cj
}

// expectIdle asserts that the operator's passes write the CronJob no more,
// through several forced resyncs.
func expectIdle(t *testing.T, st *platformv1.ScheduleTask) {
	t.Helper()
	rv := settledCronJob(NewWithT(t), st).ResourceVersion
	throughResyncs(t, st, 2, func(g Gomega) {
		g.Expect(cronJobOf(g, st).ResourceVersion).To(Equal(rv), "the operator wrote an unchanged CronJob")
	})
}

func TestScheduleTask_FieldsAnotherManagerAppliedToTheJobTemplateAreRemoved(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "implanted")
	createTask(t, st)
	settledCronJob(g, st)

	// A co-tenant who may patch CronJobs applies an init container and the
	// host's network to every run of the task, under a manager of its own.
	implant := batchv1ac.CronJob(st.Name, ns).WithSpec(batchv1ac.CronJobSpec().WithJobTemplate(
		batchv1ac.JobTemplateSpec().WithSpec(batchv1ac.JobSpec().WithTemplate(corev1ac.PodTemplateSpec().WithSpec(
			corev1ac.PodSpec().WithHostNetwork(true).WithInitContainers(
				corev1ac.Container().WithName("implant").WithImage("evil.example.com/miner:1")))))))
	g.Expect(k8sClient.Apply(ctx, implant, client.FieldOwner("co-tenant"), client.ForceOwnership)).To(Succeed())

	g.Eventually(func(g Gomega) {
		cj := cronJobOf(g, st)
		ps := cj.Spec.JobTemplate.Spec.Template.Spec
		g.Expect(ps.InitContainers).To(BeEmpty())
		g.Expect(ps.HostNetwork).To(BeFalse())
		g.Expect(templateManagers(cj)).To(BeEmpty(), "managedFields still give the co-tenant template fields")
		// The operator's own fields are as before.
		g.Expect(ps.Containers).To(HaveLen(1))
		g.Expect(ps.Containers[0].Image).To(Equal("busybox:1.36"))
	}, timeout, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(eventsAbout(g, ns, st.Name, "JobTemplateRestored")).To(ConsistOf(And(
			ContainSubstring("co-tenant"),
			ContainSubstring("spec.jobTemplate.spec.template.spec.initContainers"),
			ContainSubstring("spec.jobTemplate.spec.template.spec.hostNetwork"))))
	}, timeout, poll).Should(Succeed())

	expectIdle(t, st)
	g.Expect(eventsAbout(g, ns, st.Name, "JobTemplateRestored")).To(HaveLen(1))
}

func TestScheduleTask_FieldsAnotherManagerUpdatedIntoTheJobTemplateAreRemoved(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	// The same through a plain update (kubectl edit, a client's Update): a
	// root pod security context and a host path volume.
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "edited-in")
	createTask(t, st)
	cj := settledCronJob(g, st)

	ps := &cj.Spec.JobTemplate.Spec.Template.Spec
	ps.SecurityContext.RunAsUser = ptr.To[int64](0)
	ps.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	g.Expect(k8sClient.Update(ctx, cj, client.FieldOwner("kubectl-edit"))).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := cronJobOf(g, st).Spec.JobTemplate.Spec.Template.Spec
		g.Expect(got.SecurityContext.RunAsUser).To(BeNil())
		g.Expect(got.Volumes).To(BeEmpty())
		g.Expect(eventsAbout(g, ns, st.Name, "JobTemplateRestored")).To(ConsistOf(And(
			ContainSubstring("kubectl-edit"),
			ContainSubstring("spec.jobTemplate.spec.template.spec.securityContext.runAsUser"),
			ContainSubstring("spec.jobTemplate.spec.template.spec.volumes"))))
	}, timeout, poll).Should(Succeed())
	expectIdle(t, st)
}

func TestScheduleTask_FieldWhoseOwnershipWasErasedIsRemoved(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	// Whoever may update a CronJob may also rewrite its managedFields and
	// hide an addition from them: here by adding the host's PID namespace
	// while the CronJob is not the task's (so the operator keeps off), then
	// giving it back with the entry that names the addition erased. The
	// template's hash still shows it.
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "hidden")
	createTask(t, st)
	cj := settledCronJob(g, st)
	owners := cj.OwnerReferences

	cj.OwnerReferences = nil
	cj.Spec.JobTemplate.Spec.Template.Spec.HostPID = true
	g.Expect(k8sClient.Update(ctx, cj, client.FieldOwner("sneaky"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		task := getTask(g, client.ObjectKeyFromObject(st))
		g.Expect(task.Status.Conditions).To(ContainElement(And(
			HaveField("Type", platformv1.ConditionReady), HaveField("Status", metav1.ConditionFalse))))
	}, timeout, poll).Should(Succeed())

	cj = cronJobOf(g, st)
	g.Expect(cj.Spec.JobTemplate.Spec.Template.Spec.HostPID).To(BeTrue())
	cj.OwnerReferences = owners
	cj.ManagedFields = slices.DeleteFunc(cj.ManagedFields,
		func(mf metav1.ManagedFieldsEntry) bool { return mf.Manager == "sneaky" })
	g.Expect(k8sClient.Update(ctx, cj, client.FieldOwner("sneaky"))).To(Succeed())
	g.Expect(templateManagers(cronJobOf(g, st))).To(BeEmpty(), "the test failed to hide the field")

	g.Eventually(func(g Gomega) {
		g.Expect(cronJobOf(g, st).Spec.JobTemplate.Spec.Template.Spec.HostPID).To(BeFalse())
		g.Expect(eventsAbout(g, ns, st.Name, "JobTemplateRestored")).To(ConsistOf(ContainSubstring("no field manager owns")))
	}, timeout, poll).Should(Succeed())
	expectIdle(t, st)
}

func TestScheduleTask_ImageEditedInTheJobTemplateIsPutBack(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	// The manager's cache holds a CronJob without its pod template, only its
	// hash; a hand edit of a field the operator sets in the template (the
	// image, where the CronJob's own spec is untouched) is seen by that hash
	// and put back.
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "retagged")
	createTask(t, st)
	cj := settledCronJob(g, st)

	cached := &batchv1.CronJob{}
	g.Expect(managerCache.Get(ctx, client.ObjectKeyFromObject(cj), cached)).To(Succeed())
	g.Expect(cached.Spec.JobTemplate.Spec.Template.Spec.Containers).To(BeEmpty(), "the cache holds the pod template")
	g.Expect(cached.Annotations).To(HaveKeyWithValue(provenance.TemplateHashAnnotation,
		provenance.TemplateHash(&cj.Spec.JobTemplate.Spec.Template)))

	cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "registry.example.com/retagged:2"
	g.Expect(k8sClient.Update(ctx, cj, client.FieldOwner("kubectl-edit"))).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := cronJobOf(g, st)
		g.Expect(got.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image).To(Equal("busybox:1.36"))
		g.Expect(templateManagers(got)).To(BeEmpty())
		g.Expect(eventsAbout(g, ns, st.Name, "JobTemplateRestored")).To(ConsistOf(And(
			ContainSubstring("kubectl-edit"), ContainSubstring("spec.jobTemplate.spec.template.spec.containers"))))
	}, timeout, poll).Should(Succeed())
	expectIdle(t, st)
}
