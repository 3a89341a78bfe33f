// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/example/platform-operator/internal/namespaces"
)

// servedDefaulter defaults only objects in the namespaces the manager
// serves. The Helm chart scopes the webhook configurations to those
// namespaces already; this holds where an install does not (a kustomize
// install run with --watch-namespaces), so that a manager never judges, nor
// asks access reviews about, objects it will not reconcile.
type servedDefaulter[T client.Object] struct {
	served namespaces.Set
	next   admission.Defaulter[T]
}

// Default defaults obj when its namespace is served and leaves it as it is
// otherwise.
func (d servedDefaulter[T]) Default(ctx context.Context, obj T) error {
	if !d.served.Serves(obj.GetNamespace()) {
		return nil
	}
	return d.next.Default(ctx, obj)
}

// servedValidator validates only objects in the namespaces the manager
// serves and admits the others unjudged; see servedDefaulter.
type servedValidator[T client.Object] struct {
	served namespaces.Set
	next   admission.Validator[T]
}

// ValidateCreate validates obj when its namespace is served.
func (v servedValidator[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	if !v.served.Serves(obj.GetNamespace()) {
		return nil, nil
	}
	return v.next.ValidateCreate(ctx, obj)
}

// ValidateUpdate validates the change when the object's namespace is served.
func (v servedValidator[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	if !v.served.Serves(newObj.GetNamespace()) {
		return nil, nil
	}
	return v.next.ValidateUpdate(ctx, oldObj, newObj)
}

// ValidateDelete validates the delete when the object's namespace is served.
func (v servedValidator[T]) ValidateDelete(ctx context.Context, obj T) (admission.Warnings, error) {
	if !v.served.Serves(obj.GetNamespace()) {
		return nil, nil
	}
	return v.next.ValidateDelete(ctx, obj)
}
