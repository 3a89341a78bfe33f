// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/sync/singleflight"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// RunVerb is the custom RBAC verb that lets a user start runs of a
// ScheduleTask without the right to create Jobs, as RBAC's own bind,
// escalate and use grant one act on one object:
//
//	rules:
//	- apiGroups: [platform.example.com]
//	  resources: [scheduletasks]
//	  verbs: [run]
//	  resourceNames: [nightly-backup]
const RunVerb = "run"

// requestUser returns the authenticated user of the admission request.
func requestUser(ctx context.Context) (authenticationv1.UserInfo, error) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return req.UserInfo, nil
}

// AllowedTTL is how long admission keeps an access review's "allowed": a
// user creating a thousand tasks in a namespace is asked about once, and a
// right taken away is seen by admission at most this long after. Denials
// are not kept, so a right granted counts at once. The API server's own
// webhook authorizer keeps allowed answers five minutes by default
// (--authorization-webhook-cache-authorized-ttl).
const AllowedTTL = 10 * time.Second

// allowedAnswers holds the allowed answers of access reviews, by review,
// each with the time the API server gave it, for AllowedTTL: apimachinery's
// LRU cache with expiry, as the API server's webhook authorizer uses it.
var allowedAnswers = cache.NewLRUExpireCache(4096)

// answerClock tells when an answer was given; the cache's own clock in
// tests.
var answerClock clock.PassiveClock = clock.RealClock{}

// asking shares the access reviews in flight among the requests that need
// the same one: when an answer is missing, every write arriving while the
// API server answers (hundreds of milliseconds under load) would otherwise
// ask again, and all of them wait.
var asking singleflight.Group

// reviewTimeout bounds an access review asked for several requests, or
// ahead of its answer's expiry, apart from any one request's deadline.
const reviewTimeout = 10 * time.Second

// allowed asks the API server whether the user may do what attrs say, in
// attrs' namespace: a LocalSubjectAccessReview, which a Role in that
// namespace lets the manager create, so that a manager serving a few
// namespaces needs no cluster-wide right to ask. The review carries the
// user's groups, UID and extra, so impersonated and service-account users
// are judged as themselves.
//
// An allowed answer is kept for AllowedTTL, keyed by the whole review; one
// used when more than half of that has passed is asked again in the
// background, so that a user writing steadily never waits for the answer to
// expire and be asked again, while an answer used is never older than
// AllowedTTL. The same review is asked once at a time (asking).
func allowed(ctx context.Context, c client.Client, u authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, error) {
	sar := &authorizationv1.LocalSubjectAccessReview{
		ObjectMeta: metav1.ObjectMeta{Namespace: attrs.Namespace},
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: u.Username, Groups: u.Groups, UID: u.UID, Extra: map[string]authorizationv1.ExtraValue{},
			ResourceAttributes: &attrs,
		}}
	for k, vals := range u.Extra {
		sar.Spec.Extra[k] = authorizationv1.ExtraValue(vals)
	}
	// The spec's JSON is the key: maps are written in key order, so equal
	// reviews have equal keys.
	raw, err := json.Marshal(&sar.Spec)
	if err != nil {
		return false, fmt.Errorf("encode the access review of %s: %w", u.Username, err)
	}
	key := string(raw)
	ask := func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reviewTimeout)
		defer cancel()
		review := sar.DeepCopy()
		if err := c.Create(ctx, review); err != nil {
			return false, fmt.Errorf("ask the API server whether %s may %s %s.%s: %w",
				u.Username, attrs.Verb, attrs.Resource, attrs.Group, err)
		}
		if review.Status.Allowed {
			allowedAnswers.Add(key, answerClock.Now(), AllowedTTL)
		} else {
			// A right taken away: a refresh ahead of expiry ends the answer
			// kept at once.
			allowedAnswers.Remove(key)
		}
		return review.Status.Allowed, nil
	}
	if given, ok := allowedAnswers.Get(key); ok {
		if answerClock.Since(given.(time.Time)) > AllowedTTL/2 {
			asking.DoChan(key, ask)
		}
		return true, nil
	}
	select {
	case r := <-asking.DoChan(key, ask):
		if r.Err != nil {
			return false, r.Err
		}
		return r.Val.(bool), nil
	case <-ctx.Done():
		return false, fmt.Errorf("ask the API server whether %s may %s %s.%s: %w",
			u.Username, attrs.Verb, attrs.Resource, attrs.Group, ctx.Err())
	}
}

// mayNotRun returns a Forbidden error at path unless the user may start a
// run of the task: a manual run starts the task's pod, under its
// ServiceAccount, as `kubectl create job --from=cronjob/...` would, so the
// user needs the right to create Jobs in the namespace, or the run verb on
// that very task.
func mayNotRun(ctx context.Context, c client.Client, u authenticationv1.UserInfo, path *field.Path, namespace, task string) (*field.Error, error) {
	ok, err := allowed(ctx, c, u, authorizationv1.ResourceAttributes{
		Namespace: namespace, Verb: "create", Group: "batch", Resource: "jobs",
	})
	if err != nil || ok {
		return nil, err
	}
	ok, err = allowed(ctx, c, u, authorizationv1.ResourceAttributes{
		Namespace: namespace, Verb: RunVerb, Group: platformv1.GroupVersion.Group, Resource: "scheduletasks", Name: task,
	})
	if err != nil || ok {
		return nil, err
	}
	return field.Forbidden(path, fmt.Sprintf(
		"user %q may neither create jobs.batch in namespace %q nor run scheduletasks.%s %q, and a manual run starts the task's pod as a Job would",
		u.Username, namespace, platformv1.GroupVersion.Group, task)), nil
}

// mayNotSetParameters returns a Forbidden error at path unless the user may
// create Jobs in the namespace: a run's own args or env change what runs
// under the task's ServiceAccount, which only someone who could create that
// Job directly may do; the run verb on the task starts it as written only.
func mayNotSetParameters(ctx context.Context, c client.Client, u authenticationv1.UserInfo, path *field.Path, namespace string) (*field.Error, error) {
	ok, err := allowed(ctx, c, u, authorizationv1.ResourceAttributes{
		Namespace: namespace, Verb: "create", Group: "batch", Resource: "jobs",
	})
	if err != nil || ok {
		return nil, err
	}
	return field.Forbidden(path, fmt.Sprintf(
		"user %q may not create jobs.batch in namespace %q: a run's own args and env change what runs under the task's "+
			"ServiceAccount, so they need the right to create the Job directly; the run verb starts the task only as written",
		u.Username, namespace)), nil
}
