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
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WriteStatus stores desired as obj's status when it differs from *status
// (the field of obj that holds it), and does nothing otherwise: a pass that
// changed nothing writes nothing. It reports whether it wrote.
//
// The write is an Update, not a patch: its resourceVersion makes a pass that
// read a stale object fail with a conflict and run again on fresh data. When
// writes is not nil the write is recorded there (see OwnWrites), so the next
// pass can tell that the cache still shows the version this write replaced,
// and the write's own watch event can be told apart.
//
// Never call it with an object the cache has slimmed (see CacheBlock): the
// Update would store the slimmed object's empty fields.
func WriteStatus[S any](ctx context.Context, c client.Client, obj client.Object, status *S, desired S, writes *OwnWrites) (bool, error) {
	if equality.Semantic.DeepEqual(*status, desired) {
		return false, nil
	}
	*status = desired
	done := func(error) {}
	if writes != nil {
		done = writes.Writing(obj)
	}
	err := c.Status().Update(ctx, obj)
	done(err)
	if err != nil {
		return false, fmt.Errorf("update status: %w", err)
	}
	return true, nil
}

// SetCondition sets c in conds, stamped with the generation it describes.
// The transition time moves only when the status does, so a condition whose
// message or generation changes keeps the time it last flipped.
func SetCondition(conds *[]metav1.Condition, c metav1.Condition, generation int64, now time.Time) {
	c.ObservedGeneration = generation
	c.LastTransitionTime = metav1.NewTime(now)
	meta.SetStatusCondition(conds, c)
}

// Truncate shortens s to at most n characters (the unit of a schema's
// maxLength), marking the cut.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
