// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"fmt"
	"sync"
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
	mu           sync.Mutex
	allowedUsers map[string]bool
	asked        int
	// answering, when set, holds every review until it is closed.
	answering chan struct{}
}

// count is the reviews asked so far.
func (r *reviewer) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked
}

// allow sets whether user is allowed.
func (r *reviewer) allow(user string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.allowedUsers[user] = ok
}

func (r *reviewer) client() client.Client {
	return fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			sar := obj.(*authorizationv1.LocalSubjectAccessReview)
			if sar.Namespace != sar.Spec.ResourceAttributes.Namespace {
				return fmt.Errorf("review in namespace %q about namespace %q: the API server refuses it",
					sar.Namespace, sar.Spec.ResourceAttributes.Namespace)
			}
			if r.answering != nil {
				<-r.answering
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.asked++
			sar.Status.Allowed = r.allowedUsers[sar.Spec.User]
			return nil
		},
	}).Build()
}

func TestAllowed_KeepsAllowedAnswersForTheTTLAndNoDenials(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	answersOn(t, clock)

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
		if got != s.want || r.count() != s.wantAsked {
			t.Errorf("%s: allowed %v after %d reviews, want %v after %d", s.name, got, r.count(), s.want, s.wantAsked)
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

// answersOn gives the test an empty answer cache on clock.
func answersOn(t *testing.T, clock *clocktesting.FakeClock) {
	t.Helper()
	savedAnswers, savedClock := allowedAnswers, answerClock
	allowedAnswers, answerClock = cache.NewLRUExpireCacheWithClock(16, clock), clock
	t.Cleanup(func() { allowedAnswers, answerClock = savedAnswers, savedClock })
}

// eventually waits up to a second for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within a second: %s", what)
		}
	}
}

func TestAllowed_AsksAgainAheadOfExpiryWithoutMakingAnyoneWait(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	answersOn(t, clock)
	r := &reviewer{allowedUsers: map[string]bool{"alice": true}}
	c := r.client()
	alice := authenticationv1.UserInfo{Username: "alice"}
	attrs := authorizationv1.ResourceAttributes{Namespace: "team-a", Verb: "create", Group: "batch", Resource: "cronjobs"}
	ask := func() bool {
		t.Helper()
		ok, err := allowed(context.Background(), c, alice, attrs)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !ask() || r.count() != 1 {
		t.Fatalf("want alice allowed after one review, got %d reviews", r.count())
	}
	// Past half the TTL the answer is still used, and asked again behind it.
	clock.Step(AllowedTTL * 3 / 4)
	if !ask() {
		t.Fatal("an answer within its TTL was not used")
	}
	eventually(t, "the answer asked again ahead of its expiry", func() bool { return r.count() == 2 })
	// The new answer counts from when it was given: past the first one's
	// TTL, nobody waits for a review.
	eventually(t, "the new answer kept", func() bool {
		keys := allowedAnswers.Keys()
		if len(keys) != 1 {
			return false
		}
		v, ok := allowedAnswers.Get(keys[0])
		return ok && v.(time.Time).Equal(clock.Now())
	})
	clock.Step(AllowedTTL / 2)
	if !ask() || r.count() != 2 {
		t.Errorf("want the renewed answer used without a review, got %d reviews", r.count())
	}
	// A right taken away: the refresh ahead of expiry drops the answer, and
	// the next request asks and is refused.
	r.allow("alice", false)
	clock.Step(AllowedTTL / 4)
	if !ask() {
		t.Fatal("an answer within its TTL was not used")
	}
	eventually(t, "the revoked answer dropped", func() bool { return len(allowedAnswers.Keys()) == 0 })
	if ask() {
		t.Error("alice is still allowed after the review that refused her")
	}
}

func TestAllowed_AsksTheSameQuestionOnceAtATime(t *testing.T) {
	answersOn(t, clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	r := &reviewer{allowedUsers: map[string]bool{"alice": true}, answering: make(chan struct{})}
	c := r.client()
	attrs := authorizationv1.ResourceAttributes{Namespace: "team-a", Verb: "create", Group: "batch", Resource: "cronjobs"}
	var wg sync.WaitGroup
	answers := make(chan bool, 20)
	for range 20 {
		wg.Go(func() {
			ok, err := allowed(context.Background(), c, authenticationv1.UserInfo{Username: "alice"}, attrs)
			answers <- ok && err == nil
		})
	}
	time.Sleep(50 * time.Millisecond) // the twenty arrive while the review is out
	close(r.answering)
	wg.Wait()
	close(answers)
	for ok := range answers {
		if !ok {
			t.Fatal("a request waiting on the shared review was not allowed")
		}
	}
	if r.count() != 1 {
		t.Errorf("%d reviews for twenty requests arriving together, want 1", r.count())
	}
}
