// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"math"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// The labels, annotations and owner references the operator puts on a
// TaskRun are what history, numbering, retention and garbage collection
// rely on: a user may neither set them at create nor change them after.
func TestTenant_OperatorOwnedTaskRunMetadataIsImmutableToUsers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createTask(t, testutil.NewScheduleTask(ns, "counted"))
	createTask(t, testutil.NewScheduleTask(ns, "decoy"))
	alice := userClient(t, ns, "alice", withRules(jobsRule))

	run := testutil.NewManualTaskRun(ns, "mine", "counted")
	g.Expect(alice.Create(ctx, run)).To(Succeed())
	key := client.ObjectKeyFromObject(run)
	g.Eventually(func(g Gomega) {
		var got platformv1.TaskRun
		g.Expect(k8sClient.Get(ctx, key, &got)).To(Succeed())
		g.Expect(got.Annotations).To(HaveKey(platformv1.RunNumberAnnotation), "adopted")
		g.Expect(got.OwnerReferences).To(HaveLen(1), "adopted")
		g.Expect(got.Annotations).To(HaveKeyWithValue(platformv1.RequestedByAnnotation, "alice"))
	}, timeout, poll).Should(Succeed())

	maxInt := strconv.FormatInt(math.MaxInt64, 10)
	edits := []struct {
		name   string
		mutate func(*platformv1.TaskRun)
		field  string
	}{
		{"relabel to another task", func(tr *platformv1.TaskRun) { tr.Labels[platformv1.ScheduleTaskLabel] = "decoy" },
			"metadata.labels[platform.example.com/scheduletask]"},
		{"drop the task label", func(tr *platformv1.TaskRun) { delete(tr.Labels, platformv1.ScheduleTaskLabel) },
			"metadata.labels[platform.example.com/scheduletask]"},
		{"run-number to MaxInt64", setAnnotation[*platformv1.TaskRun](platformv1.RunNumberAnnotation, maxInt),
			"metadata.annotations[platform.example.com/run-number]"},
		{"drop the run-number", func(tr *platformv1.TaskRun) { delete(tr.Annotations, platformv1.RunNumberAnnotation) },
			"metadata.annotations[platform.example.com/run-number]"},
		{"ask the run to stop",
			setAnnotation[*platformv1.TaskRun](platformv1.StopReasonAnnotation, platformv1.ReasonCancelled),
			"metadata.annotations[platform.example.com/stop-reason]"},
		{"claim to be someone else", setAnnotation[*platformv1.TaskRun](platformv1.RequestedByAnnotation, "bob"),
			"metadata.annotations[platform.example.com/requested-by]"},
		{"drop the owner reference", func(tr *platformv1.TaskRun) { tr.OwnerReferences = nil },
			"metadata.ownerReferences"},
		{"hand the run to another controller", func(tr *platformv1.TaskRun) {
			tr.OwnerReferences[0].Name, tr.OwnerReferences[0].UID = "decoy", "forged"
		}, "metadata.ownerReferences"},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			expectRefused(t, editRun(ctx, alice, key, e.mutate), 403, e.field)
		})
	}
	t.Run("labels of the user's own are free", func(t *testing.T) {
		if err := editRun(ctx, alice, key, func(tr *platformv1.TaskRun) { tr.Labels["team"] = "a" }); err != nil {
			t.Errorf("label of alice's own: %v", err)
		}
	})

	// At create: the operator numbers runs and names their requester.
	creates := []struct {
		name   string
		mutate func(*platformv1.TaskRun)
		field  string
	}{
		{"own run-number", setAnnotation[*platformv1.TaskRun](platformv1.RunNumberAnnotation, maxInt),
			"metadata.annotations[platform.example.com/run-number]"},
		{"own requester", setAnnotation[*platformv1.TaskRun](platformv1.RequestedByAnnotation, "bob"),
			"metadata.annotations[platform.example.com/requested-by]"},
		{"label of another task", func(tr *platformv1.TaskRun) {
			tr.Labels = map[string]string{platformv1.ScheduleTaskLabel: "decoy"}
		}, "metadata.labels[platform.example.com/scheduletask]"},
	}
	for i, c := range creates {
		t.Run("create with "+c.name, func(t *testing.T) {
			tr := testutil.NewManualTaskRun(ns, "forged-"+strconv.Itoa(i), "counted")
			c.mutate(tr)
			expectRefused(t, alice.Create(ctx, tr), 403, c.field)
		})
	}
}

// A TaskRun controlled by anything but its task is refused at admission.
func TestTenant_TaskRunWithAForeignControllerIsRefused(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createTask(t, testutil.NewScheduleTask(ns, "target"))
	alice := userClient(t, ns, "alice", withRules(jobsRule))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "foreign"}}
	if err := k8sClient.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	tr := testutil.NewManualTaskRun(ns, "poison", "target")
	tr.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID,
		Controller: ptr.To(true)}}
	expectRefused(t, alice.Create(ctx, tr), 403, "metadata.ownerReferences[0]")
}
