// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// The CEL of the webhook configurations repeats what the code interprets:
// a key missing from the CEL would let its change past an unreachable or
// skipped webhook.
func TestMatchConditions_NameEveryInterpretedKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	expressions := map[string]string{}
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var cfg struct {
			Webhooks []admissionregistrationv1.ValidatingWebhook `json:"webhooks"`
		}
		if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
			t.Fatal(err)
		}
		for _, w := range cfg.Webhooks {
			var all []string
			for _, c := range w.MatchConditions {
				all = append(all, c.Expression)
			}
			expressions[w.Name] = strings.Join(all, " && ")
		}
	}
	for _, k := range interpretedTaskAnnotations {
		if !strings.Contains(expressions["vscheduletask-v1.platform.example.com"], "'"+k+"'") {
			t.Errorf("the ScheduleTask webhook's matchConditions do not name %s", k)
		}
	}
	for _, want := range []string{"object.spec != oldObject.spec", "deletionTimestamp"} {
		for _, name := range []string{"vscheduletask-v1.platform.example.com", "vtaskrun-v1.platform.example.com"} {
			if !strings.Contains(expressions[name], want) {
				t.Errorf("%s's matchConditions lack %q", name, want)
			}
		}
	}
	for _, want := range []string{"'" + platformv1.OperatorKeyPrefix + "'", "ownerReferences"} {
		if !strings.Contains(expressions["vtaskrun-v1.platform.example.com"], want) {
			t.Errorf("the TaskRun webhook's matchConditions lack %q", want)
		}
	}
}

// allowAll answers every SubjectAccessReview with allowed.
type allowAll struct{ client.Client }

func (allowAll) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	obj.(*authorizationv1.LocalSubjectAccessReview).Status.Allowed = true
	return nil
}

// asUser is a context carrying an admission request by the user.
func asUser(user string, op admissionv1.Operation) context.Context {
	return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: op, UserInfo: authenticationv1.UserInfo{Username: user}}})
}

// Without matchConditions in the configuration (an older install), the
// code lets through what the conditions would: updates of objects being
// deleted, and updates of uninterpreted metadata, however the stored
// object fares against today's rules. No access review is made for them
// (the webhooks here have no client: one would panic).
func TestValidateUpdate_PassesWhatNeverNeedsJudging(t *testing.T) {
	ctx := asUser("alice", admissionv1.Update)
	now := metav1.NewTime(time.Now())
	badTask := &platformv1.ScheduleTask{
		ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("l", 60), Namespace: "ns", Finalizers: []string{"x"}},
		Spec:       platformv1.ScheduleTaskSpec{Schedule: "every day", Image: "busybox:1.36"},
	}
	st := &ScheduleTaskWebhook{}
	tests := []struct {
		name   string
		mutate func(old, cur *platformv1.ScheduleTask)
	}{
		{"finalizer removed while deleting", func(old, cur *platformv1.ScheduleTask) {
			old.DeletionTimestamp, cur.DeletionTimestamp, cur.Finalizers = &now, &now, nil
		}},
		{"spec changed while deleting", func(old, cur *platformv1.ScheduleTask) {
			old.DeletionTimestamp, cur.DeletionTimestamp, cur.Spec.Image = &now, &now, "busybox:1.37"
		}},
		{"finalizer added", func(_, cur *platformv1.ScheduleTask) { cur.Finalizers = append(cur.Finalizers, "y") }},
		{"label and annotation", func(_, cur *platformv1.ScheduleTask) {
			cur.Labels, cur.Annotations = map[string]string{"team": "a"}, map[string]string{"note": "b"}
		}},
	}
	for _, tt := range tests {
		t.Run("ScheduleTask: "+tt.name, func(t *testing.T) {
			old, cur := badTask.DeepCopy(), badTask.DeepCopy()
			tt.mutate(old, cur)
			if _, err := st.ValidateUpdate(ctx, old, cur); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
	t.Run("ScheduleTask: spec changed is still judged", func(t *testing.T) {
		old, cur := badTask.DeepCopy(), badTask.DeepCopy()
		cur.Spec.Suspend = new(bool)
		judged := &ScheduleTaskWebhook{Client: allowAll{}}
		_, err := judged.ValidateUpdate(ctx, old, cur)
		if err == nil || !strings.Contains(err.Error(), "spec.schedule") {
			t.Errorf("a spec change of a task failing today's rules: %v, want refused naming spec.schedule", err)
		}
	})

	tr := &TaskRunWebhook{OperatorUser: func(context.Context) (string, error) { return "operator", nil }}
	run := &platformv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", Finalizers: []string{"x"},
			Labels:      map[string]string{platformv1.ScheduleTaskLabel: "t"},
			Annotations: map[string]string{platformv1.RunNumberAnnotation: "3"}},
		Spec: platformv1.TaskRunSpec{ScheduleTaskName: "t", Trigger: platformv1.TriggerManual},
	}
	runTests := []struct {
		name   string
		mutate func(old, cur *platformv1.TaskRun)
		ok     bool
	}{
		{"finalizer removed while deleting", func(old, cur *platformv1.TaskRun) {
			old.DeletionTimestamp, cur.DeletionTimestamp, cur.Finalizers = &now, &now, nil
		}, true},
		{"label of the user's own", func(_, cur *platformv1.TaskRun) { cur.Labels["team"] = "a" }, true},
		{"run number", func(_, cur *platformv1.TaskRun) { cur.Annotations[platformv1.RunNumberAnnotation] = "4" }, false},
	}
	for _, tt := range runTests {
		t.Run("TaskRun: "+tt.name, func(t *testing.T) {
			old, cur := run.DeepCopy(), run.DeepCopy()
			tt.mutate(old, cur)
			_, err := tr.ValidateUpdate(ctx, old, cur)
			if (err == nil) != tt.ok {
				t.Errorf("ValidateUpdate = %v, want allowed %v", err, tt.ok)
			}
		})
	}
}
