// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"fmt"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/cacheblock"
	"github.com/example/platform-operator/internal/namespaces"
)

// Setup registers every v1 webhook. The TaskRun webhook tells the operator's
// own requests from its users' by the manager's user name, which it asks the
// API server for (a SelfSubjectReview) on the first TaskRun it admits: in a
// cluster or out of one, and without a request at start-up. Objects outside
// the served namespaces are admitted unjudged (see servedDefaulter).
//
// scope is the canary analysis's: a criterion's query that reads another
// namespace's series, or costs more than it allows, is refused.
func Setup(mgr ctrl.Manager, served namespaces.Set, scope analysis.Scope) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	if served.All() {
		// Every create reads its namespace's labels: from memory, as the
		// API server's own Pod Security admission does. A manager serving
		// some namespaces may only get those, so it reads them live.
		if err := cacheblock.WarmInformers(mgr.GetCache(), NamespaceMetadata()); err != nil {
			return err
		}
	}
	if err := SetupScheduleTaskWebhook(mgr, served); err != nil {
		return fmt.Errorf("set up ScheduleTask webhook: %w", err)
	}
	if err := SetupAppDeploymentWebhook(mgr, served, scope); err != nil {
		return fmt.Errorf("set up AppDeployment webhook: %w", err)
	}
	if err := SetupTaskRunWebhook(mgr, served, onceOK(func(ctx context.Context) (string, error) {
		user, err := WhoAmI(ctx, c)
		if err == nil {
			ctrl.LoggerFrom(ctx).Info("Operator identity for admission", "user", user)
		}
		return user, err
	})); err != nil {
		return fmt.Errorf("set up TaskRun webhook: %w", err)
	}
	return nil
}

// WhoAmI returns the user name the client authenticates as.
func WhoAmI(ctx context.Context, c client.Client) (string, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return "", fmt.Errorf("ask the API server who the operator is (SelfSubjectReview): %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

// onceOK returns a function that calls fn until it first succeeds, and from
// then on returns that result without calling it again.
func onceOK(fn func(context.Context) (string, error)) func(context.Context) (string, error) {
	var mu sync.Mutex
	var value string
	var done bool
	return func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return value, nil
		}
		v, err := fn(ctx)
		if err != nil {
			return "", err
		}
		value, done = v, true
		return value, nil
	}
}
