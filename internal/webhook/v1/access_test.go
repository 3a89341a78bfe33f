// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// reviewer answers access reviews as the API server would for a fixed set of
// users allowed to create CronJobs, and counts the reviews asked.
type reviewer struct {
	allowedUsers map[string]bool
	asked        int
}

func (r *reviewer) client() client.Client {
	return fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			sar := obj.(*authorizationv1.LocalSubjectAccessReview)
			if sar.Namespace != sar.Spec.ResourceAttributes.Namespace {
				return fmt.Errorf("review in namespace %q about namespace %q: the API server refuses it",
					sar.Namespace, sar.Spec.ResourceAttributes.Namespace)
			}
			r.asked++
			sar.Status.Allowed = r.allowedUsers[sar.Spec.User]
			return nil
		},
	}).Build()
}

func TestAllowed_KeepsAllowedAnswersForTheTTLAndNoDenials(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	saved := allowedAnswers
	allowedAnswers = cache.NewLRUExpireCacheWithClock(16, clock)
	t.Cleanup(func() { allowedAnswers = saved })

	r := &reviewer{allowedUsers: map[string]bool{"alice": true}}
	c := r.client()
	cronJobs := func(ns string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Group: "batch", Resource: "cronjobs"}
	}
	alice := authenticationv1.UserInfo{Username: "alice", Groups: []string{"dev"}}
	bob := authenticationv1.UserInfo{Username: "bob", Groups: []string{"dev"}}
	steps := []struct {
		name      string
		user      authenticationv1.UserInfo
		namespace string
		advance   time.Duration
		want      bool
		wantAsked int
	}{
		{"first question is asked", alice, "team-a", 0, true, 1},
		{"the same question within the TTL is answered from memory", alice, "team-a", AllowedTTL / 2, true, 1},
		{"another namespace is another question", alice, "team-b", 0, true, 2},
		{"a denial is asked", bob, "team-a", 0, false, 3},
		{"and asked again: denials are not kept", bob, "team-a", 0, false, 4},
		{"past the TTL the allowed answer is asked again", alice, "team-a", AllowedTTL, true, 5},
	}
	for _, s := range steps {
		clock.Step(s.advance)
		got, err := allowed(context.Background(), c, s.user, cronJobs(s.namespace))
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want || r.asked != s.wantAsked {
			t.Errorf("%s: allowed %v after %d reviews, want %v after %d", s.name, got, r.asked, s.want, s.wantAsked)
		}
	}
}

func TestAllowed_GroupsAreOfTheQuestion(t *testing.T) {
	saved := allowedAnswers
	allowedAnswers = cache.NewLRUExpireCache(16)
	t.Cleanup(func() { allowedAnswers = saved })
	r := &reviewer{allowedUsers: map[string]bool{"carol": true}}
	c := r.client()
	attrs := authorizationv1.ResourceAttributes{Namespace: "team-a", Verb: "create", Group: "batch", Resource: "cronjobs"}
	for _, groups := range [][]string{{"dev"}, {"dev", "admins"}} {
		if _, err := allowed(context.Background(), c, authenticationv1.UserInfo{Username: "carol", Groups: groups}, attrs); err != nil {
			t.Fatal(err)
		}
	}
	if r.asked != 2 {
		t.Errorf("%d reviews for the same user in two sets of groups, want 2: the groups decide the answer", r.asked)
	}
}
