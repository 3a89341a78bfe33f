// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/platform-operator/internal/podsecurity"
)

// The mutating webhooks read a new object's namespace, once at create, for
// its Pod Security level: from the manager's cache of namespaces' metadata
// when it serves every namespace (NamespaceMetadata), by a get otherwise. A
// Role in a served namespace grants the get too: the API server authorizes
// a namespace's own read in that namespace.
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// NamespaceMetadata is what admission reads of a namespace: the metadata
// informer the manager warms when it serves every namespace.
func NamespaceMetadata() *metav1.PartialObjectMetadata {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	return ns
}

// restrictedNamespace reports whether namespace enforces the restricted Pod
// Security Standard. A nil reader (unit tests) reads no namespace.
func restrictedNamespace(ctx context.Context, r client.Reader, namespace string) (bool, error) {
	if r == nil {
		return false, nil
	}
	ns := NamespaceMetadata()
	if err := r.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return false, fmt.Errorf("read namespace %s for its Pod Security level: %w", namespace, err)
	}
	return podsecurity.Enforced(ns.Labels), nil
}
