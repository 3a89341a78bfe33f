// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// maxForeignBytes is what one foreign object carrying the operator's labels
// may cost the manager's cache (issue 31, C): a stub's metadata.
const maxForeignBytes = 2048

// TestRetainedBytes_AForeignLabelledDeploymentCostsTheCacheAStub replays the
// attack of issue 31 (item 2) on the manager's own cache transform: 700 KB
// Deployments that carry the operator's labels but that nothing of the
// operator controls. Each may cost the cache at most maxForeignBytes,
// whichever of the operator's labels it copies.
func TestRetainedBytes_AForeignLabelledDeploymentCostsTheCacheAStub(t *testing.T) {
	opts, err := controller.CacheOptions()
	if err != nil {
		t.Fatal(err)
	}
	transform, _ := cachingOf(opts, &appsv1.Deployment{})
	scheme := testenv.Scheme()
	codec := protobuf.NewSerializer(scheme, scheme)
	managedBy := map[string]string{platformv1.ManagedByLabel: platformv1.ManagedByValue}
	appLabels := map[string]string{platformv1.ManagedByLabel: platformv1.ManagedByValue,
		platformv1.AppNameLabel: "order-service", platformv1.TrackLabel: platformv1.TrackStable}
	// The tenant's own AppDeployment, named as the controller (issue 42,
	// item 2): a claim under a name the operator does not give.
	claim := metav1.NewControllerRef(&platformv1.AppDeployment{ObjectMeta: metav1.ObjectMeta{Name: "order-service",
		UID: "5f0e2d4c-0000-4000-8000-000000000001"}}, platformv1.GroupVersion.WithKind("AppDeployment"))
	for name, c := range map[string]struct {
		labels map[string]string
		owner  *metav1.OwnerReference
	}{
		"managed-by label only":                   {labels: managedBy},
		"an application's labels":                 {labels: appLabels},
		"claiming the tenant's own AppDeployment": {labels: appLabels, owner: claim},
	} {
		t.Run(name, func(t *testing.T) {
			encoded, err := encodeForeignDeployments(codec, foreignObjects, c.labels, c.owner)
			if err != nil {
				t.Fatal(err)
			}
			if size := len(encoded[0]); size < foreignDeploymentBytes {
				t.Fatalf("a foreign Deployment encodes to %d B, want at least %d", size, foreignDeploymentBytes)
			}
			// The median of a few measurements: other goroutines of the
			// process allocate and free between the heap readings.
			per := make([]float64, 0, 3)
			for range 3 {
				b, err := retainedBytes(encoded, codec, transform)
				if err != nil {
					t.Fatal(err)
				}
				per = append(per, b)
			}
			slices.Sort(per)
			got := per[len(per)/2]
			t.Logf("steady heap growth per foreign labelled %d KB Deployment, %d of them: %.0f B",
				len(encoded[0])/1000, len(encoded), got)
			if got > maxForeignBytes {
				t.Errorf("each foreign labelled Deployment costs the cache %.0f B, want at most %d", got, maxForeignBytes)
			}
		})
	}
}
