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

// Package reconcileutil holds small helpers that every reconciler shares.
package reconcileutil

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// conflictRetry is how soon a pass that lost an optimistic-concurrency race
// runs again; by then the cache has the newer object.
const conflictRetry = 250 * time.Millisecond

// RequeueOnConflict turns a conflict error into a quiet, quick retry. A
// conflict is the expected outcome of reading a cached object a moment
// before someone else wrote it; it is not worth an error log with a stack
// trace, nor the workqueue's growing back-off. Other results pass through.
func RequeueOnConflict(ctx context.Context, res ctrl.Result, err error) (ctrl.Result, error) {
	if err != nil && apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Object changed while reconciling, retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}
