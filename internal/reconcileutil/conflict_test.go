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

package reconcileutil

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestRequeueOnConflict(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "taskruns"}, "x", errors.New("changed"))
	other := errors.New("boom")
	tests := []struct {
		name    string
		res     ctrl.Result
		err     error
		wantRes ctrl.Result
		wantErr error
	}{
		{"conflict becomes a quick requeue", ctrl.Result{}, conflict, ctrl.Result{RequeueAfter: conflictRetry}, nil},
		{"wrapped conflict too", ctrl.Result{}, fmt.Errorf("update status: %w", conflict), ctrl.Result{RequeueAfter: conflictRetry}, nil},
		{"other errors pass", ctrl.Result{}, other, ctrl.Result{}, other},
		{"results pass", ctrl.Result{RequeueAfter: time.Minute}, nil, ctrl.Result{RequeueAfter: time.Minute}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RequeueOnConflict(context.Background(), tt.res, tt.err)
			if res != tt.wantRes || !errors.Is(err, tt.wantErr) && err != tt.wantErr {
				t.Errorf("got %v, %v; want %v, %v", res, err, tt.wantRes, tt.wantErr)
			}
		})
	}
}
