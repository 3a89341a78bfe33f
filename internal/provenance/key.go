// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package provenance

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KeySecretName is the Secret, in the manager's namespace, that holds the
// signing key under KeySecretKey. Every replica uses the same key, so a Job
// signed under one leader verifies under the next.
const (
	KeySecretName = "platform-operator-signing-key"
	KeySecretKey  = "key"
)

// The manager reads and fills only its own key Secret, which the installs
// ship empty: creating a Secret cannot be narrowed to a name (RBAC has no
// name before an object exists), so the manager is not granted it. Run out
// of a cluster with wider rights (make run, the tests), it creates the
// Secret when it is missing.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;update,resourceNames=platform-operator-signing-key

// LoadSigner returns a Signer with the key of the Secret KeySecretName in
// namespace, making the key first if there is none. It is race-free among
// replicas starting together: a create that finds the Secret made by another
// replica reads that one's key, and filling a Secret the install shipped
// empty is an update on its resourceVersion, so of two replicas one wins and
// the other reads the winner's key. r must read past any cache (the manager's
// cache holds no Secrets, and must not start for this).
func LoadSigner(ctx context.Context, r client.Reader, w client.Writer, namespace string) (*Signer, error) {
	if namespace == "" {
		return nil, fmt.Errorf("the namespace of the signing key Secret %s is unknown", KeySecretName)
	}
	key := types.NamespacedName{Namespace: namespace, Name: KeySecretName}
	const attempts = 5
	for range attempts {
		secret := &corev1.Secret{}
		err := r.Get(ctx, key, secret)
		switch {
		case apierrors.IsNotFound(err):
			secret, err = newKeySecret(key)
			if err != nil {
				return nil, err
			}
			err = w.Create(ctx, secret)
			if apierrors.IsAlreadyExists(err) {
				continue // another replica made it first: use its key
			}
			if err != nil {
				return nil, fmt.Errorf("create signing key Secret %s: %w", key, err)
			}
			return NewSigner(secret.Data[KeySecretKey])
		case err != nil:
			return nil, fmt.Errorf("read signing key Secret %s: %w", key, err)
		}
		switch k := secret.Data[KeySecretKey]; {
		case len(k) >= MinKeySize:
			return NewSigner(k)
		case len(k) > 0:
			// Someone provisioned a key; a short one is refused rather than
			// replaced, so that an operator's choice is never overwritten.
			return nil, fmt.Errorf("signing key Secret %s: data.%s holds %d bytes, need at least %d",
				key, KeySecretKey, len(k), MinKeySize)
		}
		// Shipped empty by the install: fill it.
		fresh, err := newKey()
		if err != nil {
			return nil, err
		}
		if secret.Data == nil {
			secret.Data = map[string][]byte{}
		}
		secret.Data[KeySecretKey] = fresh
		err = w.Update(ctx, secret)
		if apierrors.IsConflict(err) {
			continue // another replica filled it first: use its key
		}
		if err != nil {
			return nil, fmt.Errorf("fill signing key Secret %s: %w", key, err)
		}
		return NewSigner(fresh)
	}
	return nil, fmt.Errorf("signing key Secret %s changed under every one of %d attempts to read it", key, attempts)
}

// newKeySecret returns a Secret holding a new random key.
func newKeySecret(key types.NamespacedName) (*corev1.Secret, error) {
	k, err := newKey()
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace,
			Name:      key.Name,
			Labels:    map[string]string{"app.kubernetes.io/name": "platform-operator"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{KeySecretKey: k},
	}, nil
}

// newKey returns MinKeySize random bytes.
func newKey() ([]byte, error) {
	k := make([]byte, MinKeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("make signing key: %w", err)
	}
	return k, nil
}
