// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/internal/podsecurity"
)

// The mutating webhooks read a new object's namespace, once at create, for
// its Pod Security level. A Role in a served namespace grants this too: the
// API server authorizes a namespace's own read in that namespace.
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// restrictedNamespace reports whether namespace enforces the restricted Pod
// Security Standard. A nil reader (unit tests) reads no namespace.
func restrictedNamespace(ctx context.Context, r client.Reader, namespace string) (bool, error) {
	if r == nil {
		return false, nil
	}
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return false, fmt.Errorf("read namespace %s for its Pod Security level: %w", namespace, err)
	}
	return podsecurity.Enforced(ns.Labels), nil
}
