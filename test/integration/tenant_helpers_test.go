// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

// In the integration tests the manager and k8sClient share envtest's admin
// identity, so what k8sClient writes is what the operator may write: the
// tenant tests use it to put objects past the checks that exempt the
// operator, through the real API server.

// tenantRules are a tenant's rights on the platform kinds, named verb by
// verb: a "*" would also grant the custom verb run.
var tenantRules = []rbacv1.PolicyRule{{
	APIGroups: []string{platformv1.GroupVersion.Group},
	Resources: []string{"scheduletasks", "taskruns"},
	Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
}}

// editedImage is the image a test edits a task's spec to.
const editedImage = "busybox:1.37"

// jobsRule lets a user create Jobs, the right a manual run stands in for.
var jobsRule = rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create"}}

// runRule grants the custom verb run on the named tasks.
func runRule(tasks ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{platformv1.GroupVersion.Group},
		Resources: []string{"scheduletasks"}, Verbs: []string{"run"}, ResourceNames: tasks}
}

// withRules returns the tenant's rules and more.
func withRules(more ...rbacv1.PolicyRule) []rbacv1.PolicyRule {
	return append(slices.Clone(tenantRules), more...)
}

// expectRefused asserts that err is an API error with the HTTP code whose
// message contains every part.
func expectRefused(t *testing.T, err error, code int32, parts ...string) {
	t.Helper()
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		t.Errorf("got %v, want a refusal with HTTP %d", err, code)
		return
	}
	if got := status.Status().Code; got != code {
		t.Errorf("HTTP %d, want %d: %v", got, code, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("message does not contain %q: %v", p, err)
		}
	}
}

// editTask reads the task as c and writes it back changed, retrying on
// conflicts with the operator's own writes.
func editTask(ctx context.Context, c client.Client, key client.ObjectKey, mutate func(*platformv1.ScheduleTask)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var st platformv1.ScheduleTask
		if err := c.Get(ctx, key, &st); err != nil {
			return err
		}
		mutate(&st)
		return c.Update(ctx, &st)
	})
}

// editRun is editTask for TaskRuns.
func editRun(ctx context.Context, c client.Client, key client.ObjectKey, mutate func(*platformv1.TaskRun)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var tr platformv1.TaskRun
		if err := c.Get(ctx, key, &tr); err != nil {
			return err
		}
		mutate(&tr)
		return c.Update(ctx, &tr)
	})
}

// setAnnotation returns a mutation that sets one annotation.
func setAnnotation[T client.Object](key, value string) func(T) {
	return func(o T) {
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[key] = value
		o.SetAnnotations(a)
	}
}

// webhookConfigs returns the envtest-installed webhook configurations.
func webhookConfigs(t *testing.T) (
	*admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfiguration,
) {
	t.Helper()
	ctx := context.Background()
	var vl admissionregistrationv1.ValidatingWebhookConfigurationList
	var ml admissionregistrationv1.MutatingWebhookConfigurationList
	if err := k8sClient.List(ctx, &vl); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.List(ctx, &ml); err != nil {
		t.Fatal(err)
	}
	var v *admissionregistrationv1.ValidatingWebhookConfiguration
	for i := range vl.Items {
		for _, w := range vl.Items[i].Webhooks {
			if w.Name == "vscheduletask-v1.platform.example.com" {
				v = &vl.Items[i]
			}
		}
	}
	var m *admissionregistrationv1.MutatingWebhookConfiguration
	for i := range ml.Items {
		for _, w := range ml.Items[i].Webhooks {
			if w.Name == "mtaskrun-v1.platform.example.com" {
				m = &ml.Items[i]
			}
		}
	}
	if v == nil || m == nil {
		t.Fatal("the operator's webhook configurations are not installed")
	}
	return v, m
}

// deadURL is where nothing listens: a webhook pointed there is down.
func deadURL(u *string) *string {
	if u == nil {
		return nil
	}
	parsed, err := url.Parse(*u)
	if err != nil {
		return u
	}
	parsed.Host = "127.0.0.1:1"
	s := parsed.String()
	return &s
}

// webhooksServed reports whether a dry-run create of a good task passes the
// webhooks (nil), or the error the API server gave.
func webhooksServed(ctx context.Context, ns string) error {
	return k8sClient.Create(ctx, testutil.NewScheduleTask(ns, "probe"), client.DryRunAll)
}

// withWebhooksDown points every webhook of the operator at a dead port while
// fn runs, as in an outage of every manager replica, and restores them after.
// It waits for the API server to see each change.
func withWebhooksDown(t *testing.T, ns string, fn func()) {
	t.Helper()
	ctx := context.Background()
	v, m := webhookConfigs(t)
	origV, origM := v.DeepCopy(), m.DeepCopy()
	restore := func() {
		_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(origV), cur); err != nil {
				return err
			}
			cur.Webhooks = origV.Webhooks
			return k8sClient.Update(ctx, cur)
		})
		_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(origM), cur); err != nil {
				return err
			}
			cur.Webhooks = origM.Webhooks
			return k8sClient.Update(ctx, cur)
		})
		NewWithT(t).Eventually(func() error { return webhooksServed(ctx, ns) }, timeout, poll).Should(Succeed(),
			"webhooks serve again after the outage")
	}
	t.Cleanup(restore)
	for i := range v.Webhooks {
		v.Webhooks[i].ClientConfig.URL = deadURL(v.Webhooks[i].ClientConfig.URL)
	}
	for i := range m.Webhooks {
		m.Webhooks[i].ClientConfig.URL = deadURL(m.Webhooks[i].ClientConfig.URL)
	}
	if err := k8sClient.Update(ctx, v); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() string {
		err := webhooksServed(ctx, ns)
		if err == nil {
			return ""
		}
		return err.Error()
	}, timeout, poll).Should(ContainSubstring("failed calling webhook"), "the outage is in effect")
	fn()
	restore()
}

// withoutTaskWebhook removes the ScheduleTask validating webhook while fn
// runs, to store a task that today's rules refuse (one written before a rule
// tightened), and restores it after.
func withoutTaskWebhook(t *testing.T, ns string, fn func()) {
	t.Helper()
	ctx := context.Background()
	v, _ := webhookConfigs(t)
	orig := v.DeepCopy()
	restore := func() {
		_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(orig), cur); err != nil {
				return err
			}
			cur.Webhooks = orig.Webhooks
			return k8sClient.Update(ctx, cur)
		})
		NewWithT(t).Eventually(func() error {
			return k8sClient.Create(ctx, testutil.NewScheduleTask(ns, strings.Repeat("p", 60)), client.DryRunAll)
		}, timeout, poll).ShouldNot(Succeed(), "the ScheduleTask webhook is back")
	}
	t.Cleanup(restore)
	v.Webhooks = slices.DeleteFunc(v.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool {
		return w.Name == "vscheduletask-v1.platform.example.com"
	})
	if err := k8sClient.Update(ctx, v); err != nil {
		t.Fatal(err)
	}
	fn()
	restore()
}

// eventually retries fn until it succeeds or the test's timeout passes.
func eventually(t *testing.T, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(poll)
	}
}
