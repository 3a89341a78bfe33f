// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package objstatus

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Write stores desired as obj's status when it differs from *status
// (the field of obj that holds it), and does nothing otherwise: a pass that
// changed nothing writes nothing. It reports whether it wrote.
//
// The write is an Update, not a patch: its resourceVersion makes a pass that
// read a stale object fail with a conflict and run again on fresh data. A
// client wrapped by expectations.TrackWrites records it, so the next pass
// can tell that the cache still shows the version this write replaced, and
// the write's own watch event can be told apart.
//
// Never call it with an object the cache has slimmed (see cacheblock.Block): the
// Update would store the slimmed object's empty fields.
func Write[S any](ctx context.Context, c client.Client, obj client.Object, status *S, desired S) (bool, error) {
	if equality.Semantic.DeepEqual(*status, desired) {
		return false, nil
	}
	*status = desired
	if err := c.Status().Update(ctx, obj); err != nil {
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
