// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1alpha1

import (
	"bytes"
	"testing"

	"sigs.k8s.io/randfill"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// FuzzConvertRoundTrip protects what the conversion webhook promises a
// cluster that serves both versions: reading a task in the other version and
// writing it back loses nothing. The fuzz input drives randfill, which builds
// one v1 and one v1alpha1 task from it; v1 -> v1alpha1 -> v1 must give the v1
// task back (with the default policy when it had none), and v1alpha1 -> v1 ->
// v1alpha1 the v1alpha1 task (besides the annotation saving v1's fields). It
// is the randomized round-trip tests, steered by coverage instead of a seed.
func FuzzConvertRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add([]byte("v1 -> v1alpha1 -> v1 and back"))
	f.Add(bytes.Repeat([]byte{0x00, 0x7f, 0x80, 0xff}, 256))

	f.Fuzz(func(t *testing.T, data []byte) {
		fill := jsonSafe(randfill.NewFromGoFuzz(data))

		var hub platformv1.ScheduleTask
		fill.Fill(&hub)
		if err := hubSpokeHub(&hub); err != nil {
			t.Fatal(err)
		}

		var spoke ScheduleTask
		fill.Fill(&spoke)
		if err := spokeHubSpoke(&spoke); err != nil {
			t.Fatal(err)
		}
	})
}
