/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Setup registers every v1 webhook. It first asks the API server who the
// manager is (a SelfSubjectReview), so the TaskRun webhook can tell the
// operator's own requests from its users', in a cluster or out of one.
func Setup(ctx context.Context, mgr ctrl.Manager) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	user, err := WhoAmI(ctx, c)
	if err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Operator identity for admission", "user", user)
	if err := SetupScheduleTaskWebhook(mgr); err != nil {
		return fmt.Errorf("set up ScheduleTask webhook: %w", err)
	}
	if err := SetupTaskRunWebhook(mgr, user); err != nil {
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
