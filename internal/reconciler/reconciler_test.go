// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package reconciler

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestRead_SaysWhetherAPassHasAnythingToWorkOn(t *testing.T) {
	ctx := context.Background()
	stored := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "u1"}}
	key := client.ObjectKeyFromObject(stored)
	b := &Base{Client: fake.NewClientBuilder().WithObjects(stored).Build()}

	var gone []types.NamespacedName
	forget := func(k types.NamespacedName) { gone = append(gone, k) }

	// Fresh: the pass goes on.
	obj := &corev1.ConfigMap{}
	res, ok, err := b.Read(ctx, key, obj, forget)
	if err != nil || !ok || res.RequeueAfter != 0 || obj.Name != "cm" {
		t.Fatalf("fresh object: ok=%v res=%+v err=%v, read %q; want ok and the object", ok, res, err, obj.Name)
	}

	// A version this manager's own write replaced: skipped, retried later.
	b.Writes.Writing(obj)(nil)
	res, ok, err = b.Read(ctx, key, &corev1.ConfigMap{}, forget)
	if err != nil || ok || res.RequeueAfter != StaleRetry {
		t.Errorf("replaced version: ok=%v res=%+v err=%v; want skipped with a retry after %s", ok, res, err, StaleRetry)
	}

	// Gone: forgotten, nothing to do, no error.
	missing := types.NamespacedName{Namespace: "ns", Name: "gone"}
	res, ok, err = b.Read(ctx, missing, &corev1.ConfigMap{}, forget)
	if err != nil || ok || res.RequeueAfter != 0 || len(gone) != 1 || gone[0] != missing {
		t.Errorf("missing object: ok=%v res=%+v err=%v forgot %v; want skipped and %v forgotten", ok, res, err, gone, missing)
	}

	// Any other error ends the pass with it, and forgets nothing.
	failing := &Base{Client: fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("cache not synced")
		}}).Build()}
	gone = nil
	_, ok, err = failing.Read(ctx, key, &corev1.ConfigMap{}, forget)
	if err == nil || ok || len(gone) != 0 {
		t.Errorf("failing read: ok=%v err=%v forgot %v; want the error and nothing forgotten", ok, err, gone)
	}
}
