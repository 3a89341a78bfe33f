// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/namespaces"
	"github.com/example/platform-operator/internal/webhook/admit"
)

// hooks are the webhooks as Setup registers them, by path, over a fake
// client that allows every access review; with controllerRuntime, served
// by controller-runtime's typed handlers instead, for comparison.
func hooks(tb testing.TB, controllerRuntime bool) map[string]http.Handler {
	tb.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, platformv1.AddToScheme} {
		if err := add(scheme); err != nil {
			tb.Fatal(err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	seed := &platformv1.ScheduleTask{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "seed"},
		Spec: platformv1.ScheduleTaskSpec{Schedule: "* * * * *", Image: "busybox:1.36"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ns, seed).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if sar, ok := obj.(*authorizationv1.LocalSubjectAccessReview); ok {
				sar.Status.Allowed = true
				return nil
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	all := namespaces.Set{}
	st := &ScheduleTaskWebhook{Client: c, Namespaces: c}
	ad := &AppDeploymentWebhook{Client: c, Namespaces: c}
	tr := &TaskRunWebhook{Reader: c, Client: c, OperatorUser: func(context.Context) (string, error) {
		return "system:serviceaccount:platform-system:platform-operator", nil
	}}
	if controllerRuntime {
		return map[string]http.Handler{
			"/mutate-scheduletask":    admission.WithDefaulter(scheme, servedDefaulter[*platformv1.ScheduleTask]{all, st}),
			"/validate-scheduletask":  admission.WithValidator(scheme, servedValidator[*platformv1.ScheduleTask]{all, st}),
			"/mutate-appdeployment":   admission.WithDefaulter(scheme, servedDefaulter[*platformv1.AppDeployment]{all, ad}),
			"/validate-appdeployment": admission.WithValidator(scheme, servedValidator[*platformv1.AppDeployment]{all, ad}),
			"/mutate-taskrun":         admission.WithDefaulter(scheme, servedDefaulter[*platformv1.TaskRun]{all, tr}),
			"/validate-taskrun":       admission.WithValidator(scheme, servedValidator[*platformv1.TaskRun]{all, tr}),
		}
	}
	log := func(logr.Logger, *admission.Request) logr.Logger { return logr.Discard() }
	return map[string]http.Handler{
		"/mutate-scheduletask":    admit.Serve(admit.Defaulting(servedDefaulter[*platformv1.ScheduleTask]{all, st}), log),
		"/validate-scheduletask":  admit.Serve(admit.Validating(servedValidator[*platformv1.ScheduleTask]{all, st}), log),
		"/mutate-appdeployment":   admit.Serve(admit.Defaulting(servedDefaulter[*platformv1.AppDeployment]{all, ad}), log),
		"/validate-appdeployment": admit.Serve(admit.Validating(servedValidator[*platformv1.AppDeployment]{all, ad}), log),
		"/mutate-taskrun":         admit.Serve(admit.Defaulting(servedDefaulter[*platformv1.TaskRun]{all, tr}), log),
		"/validate-taskrun":       admit.Serve(admit.Validating(servedValidator[*platformv1.TaskRun]{all, tr}), log),
	}
}

// stored is obj as the API server sends it to a webhook: with its type,
// a uid, a creation time and the managed fields of the client that wrote
// it.
func stored(tb testing.TB, obj client.Object, kind string) []byte {
	tb.Helper()
	obj.GetObjectKind().SetGroupVersionKind(platformv1.GroupVersion.WithKind(kind))
	obj.SetUID("6f1b3c52-8f43-4b43-9d0b-5a0c0b1f2a11")
	obj.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC)))
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "platform.example.com/v1",
		Time: ptr.To(obj.GetCreationTimestamp()), FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{".":{},"f:image":{},"f:schedule":{},"f:suspend":{},` +
			`"f:command":{},"f:strategy":{".":{},"f:type":{},"f:canaryPercent":{},"f:canaryCriteria":{}}}}`)},
	}})
	raw, err := json.Marshal(obj)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// review is the AdmissionReview of a request by a tenant.
func review(tb testing.TB, kind string, op admissionv1.Operation, obj, old []byte) []byte {
	tb.Helper()
	ar := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:      "0d5e3f0a-2b8c-4d8e-9f1a-3c2b1a0e9d8c",
			Kind:     metav1.GroupVersionKind{Group: platformv1.GroupVersion.Group, Version: "v1", Kind: kind},
			Resource: metav1.GroupVersionResource{Group: platformv1.GroupVersion.Group, Version: "v1", Resource: kind},
			Name:     "x", Namespace: "team", Operation: op,
			UserInfo:  authenticationv1.UserInfo{Username: "alice", Groups: []string{"team-devs", "system:authenticated"}},
			Object:    runtime.RawExtension{Raw: obj},
			OldObject: runtime.RawExtension{Raw: old},
			DryRun:    ptr.To(false),
		},
	}
	raw, err := json.Marshal(ar)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// reviewCase is one webhook request of the admission bench's mix.
type reviewCase struct {
	name, path string
	body       []byte
}

// reviewCases are the webhook requests of the admission bench's mix, by a
// tenant, each of which every webhook admits.
func reviewCases(b testing.TB) []reviewCase {
	task := func(schedule string) *platformv1.ScheduleTask {
		st := &platformv1.ScheduleTask{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "task-00001-0"},
			Spec: platformv1.ScheduleTaskSpec{Schedule: schedule, Image: "busybox:1.36", Suspend: ptr.To(true),
				ContainerFields: platformv1.ContainerFields{Command: []string{"sh", "-c", "echo hello"}}}}
		return st
	}
	app := func(interval int32) *platformv1.AppDeployment {
		return &platformv1.AppDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "app-00001-5"},
			Spec: platformv1.AppDeploymentSpec{
				Image: "harbor.example.com/shop:v1.2.3", Replicas: ptr.To[int32](0),
				Strategy: platformv1.Strategy{
					Type: platformv1.StrategyCanary, CanaryPercent: 20,
					CanaryCriteria: []platformv1.CanaryCriterion{
						{Metric: platformv1.MetricErrorRate, Threshold: ptr.To(0.5)},
						{Name: "saturation", Query: `max(rate(process_cpu_seconds_total{namespace="{{namespace}}",` +
							`app="{{name}}",track="{{track}}"}[{{interval}}]))`, SuccessCondition: "result < 0.8"},
					},
					Analysis: platformv1.Analysis{IntervalSeconds: interval},
				},
			},
		}
	}
	storedTask := func() []byte {
		st := task("* * * * *")
		st.Finalizers = []string{platformv1.ScheduleTaskFinalizer}
		return stored(b, st, "ScheduleTask")
	}
	run := &platformv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "run-00001"},
		Spec: platformv1.TaskRunSpec{ScheduleTaskName: "seed", Trigger: platformv1.TriggerManual}}
	return []reviewCase{
		{"create scheduletask/mutate", "/mutate-scheduletask",
			review(b, "ScheduleTask", admissionv1.Create, stored(b, task("* * * * *"), "ScheduleTask"), nil)},
		{"create scheduletask/validate", "/validate-scheduletask",
			review(b, "ScheduleTask", admissionv1.Create, storedTask(), nil)},
		{"update scheduletask/mutate", "/mutate-scheduletask",
			review(b, "ScheduleTask", admissionv1.Update, func() []byte {
				st := task("7 * * * *")
				st.Finalizers = []string{platformv1.ScheduleTaskFinalizer}
				return stored(b, st, "ScheduleTask")
			}(), storedTask())},
		{"update scheduletask/validate", "/validate-scheduletask",
			review(b, "ScheduleTask", admissionv1.Update, func() []byte {
				st := task("7 * * * *")
				st.Finalizers = []string{platformv1.ScheduleTaskFinalizer}
				return stored(b, st, "ScheduleTask")
			}(), storedTask())},
		{"create appdeployment/mutate", "/mutate-appdeployment",
			review(b, "AppDeployment", admissionv1.Create, stored(b, app(30), "AppDeployment"), nil)},
		{"create appdeployment/validate", "/validate-appdeployment",
			review(b, "AppDeployment", admissionv1.Create, stored(b, app(30), "AppDeployment"), nil)},
		{"update appdeployment/mutate", "/mutate-appdeployment",
			review(b, "AppDeployment", admissionv1.Update, stored(b, app(31), "AppDeployment"), stored(b, app(30), "AppDeployment"))},
		{"update appdeployment/validate", "/validate-appdeployment",
			review(b, "AppDeployment", admissionv1.Update, stored(b, app(31), "AppDeployment"), stored(b, app(30), "AppDeployment"))},
		{"create taskrun/mutate", "/mutate-taskrun",
			review(b, "TaskRun", admissionv1.Create, stored(b, run.DeepCopy(), "TaskRun"), nil)},
		{"create taskrun/validate", "/validate-taskrun",
			review(b, "TaskRun", admissionv1.Create, func() []byte {
				r := run.DeepCopy()
				r.Labels = map[string]string{platformv1.ScheduleTaskLabel: "seed"}
				r.Annotations = map[string]string{platformv1.RequestedByAnnotation: "alice"}
				return stored(b, r, "TaskRun")
			}(), nil)},
	}
}

// BenchmarkServe is what one webhook request of the admission bench's mix
// costs the handler, served as Setup serves it and by controller-runtime's
// typed handlers: `go test -run '^$' -bench Serve -benchmem
// ./internal/webhook/v1/`.
func BenchmarkServe(b *testing.B) {
	cases := reviewCases(b)
	for _, side := range []struct {
		name  string
		hooks map[string]http.Handler
	}{{"admit", hooks(b, false)}, {"controller-runtime", hooks(b, true)}} {
		for _, c := range cases {
			h := side.hooks[c.path]
			b.Run(side.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.body)))
				for b.Loop() {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, request(c.body))
					if rec.Code != http.StatusOK {
						b.Fatal(rec.Code)
					}
				}
			})
		}
	}
}

// TestServe_AnswersAsControllerRuntimesHandlersDo: every request of the mix
// is admitted, with the same patch (as a set of operations) and warnings,
// whether served as Setup serves it or by controller-runtime's typed
// handlers.
func TestServe_AnswersAsControllerRuntimesHandlersDo(t *testing.T) {
	ours, theirs := hooks(t, false), hooks(t, true)
	for _, c := range reviewCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got, want := answer(t, ours[c.path], c.body), answer(t, theirs[c.path], c.body)
			if !got.Allowed {
				t.Fatalf("refused: %+v", got.Result)
			}
			if strings.HasPrefix(c.name, "create scheduletask/mutate") && got.Patch == nil {
				t.Error("a new task's finalizer is not patched in")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the answer differs from controller-runtime's (-theirs +ours):\n%s", diff)
			}
		})
	}
}

func TestServe_RefusesAsControllerRuntimesHandlersDo(t *testing.T) {
	ours, theirs := hooks(t, false), hooks(t, true)
	st := &platformv1.ScheduleTask{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bad"},
		Spec: platformv1.ScheduleTaskSpec{Schedule: "every minute", Image: "busybox:1.36"}}
	body := review(t, "ScheduleTask", admissionv1.Create, stored(t, st, "ScheduleTask"), nil)
	got, want := answer(t, ours["/validate-scheduletask"], body), answer(t, theirs["/validate-scheduletask"], body)
	if got.Allowed || got.Result == nil || !strings.Contains(got.Result.Message, "spec.schedule") {
		t.Fatalf("want the task refused naming spec.schedule, got %+v", got)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the refusal differs from controller-runtime's (-theirs +ours):\n%s", diff)
	}
}

// answer is the response of h to the review body, its patch's operations
// sorted.
func answer(t *testing.T, h http.Handler, body []byte) admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, request(body))
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &ar); err != nil || ar.Response == nil {
		t.Fatalf("no AdmissionReview answered (%v): %s", err, rec.Body.String())
	}
	if ar.APIVersion != "admission.k8s.io/v1" || ar.Kind != "AdmissionReview" {
		t.Errorf("answered a %s %s", ar.APIVersion, ar.Kind)
	}
	if ar.Response.Patch != nil {
		var ops []map[string]any
		if err := json.Unmarshal(ar.Response.Patch, &ops); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(ops, func(a, b map[string]any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		sorted, err := json.Marshal(ops)
		if err != nil {
			t.Fatal(err)
		}
		ar.Response.Patch = sorted
	}
	return *ar.Response
}

// request is a webhook call carrying body.
func request(body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}
