// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"slices"
	"strings"
	"testing"
)

// The chart's webhook values reach the manager: webhook.maxInFlight as
// --webhook-max-in-flight, and webhook.clientCA as --webhook-client-ca
// naming a file of the ConfigMap it mounts. Without a ConfigMap there is
// no flag, so the admission paths stay open as before.
func TestHelm_WebhookValuesBecomeTheManagersFlagsAndMountTheClientCA(t *testing.T) {
	manager := managerContainer
	c, _ := manager(t)
	if !slices.Contains(c.Args, "--webhook-max-in-flight=64") {
		t.Errorf("defaults: args %v lack --webhook-max-in-flight=64", c.Args)
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--webhook-client-ca") {
			t.Errorf("defaults: %s without webhook.clientCA.configMap", a)
		}
	}

	c, pod := manager(t, "webhook.maxInFlight=10",
		"webhook.clientCA.configMap=apiserver-client-ca", "webhook.clientCA.key=bundle.pem")
	if !slices.Contains(c.Args, "--webhook-max-in-flight=10") {
		t.Errorf("args %v lack --webhook-max-in-flight=10", c.Args)
	}
	var file string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--webhook-client-ca="); ok {
			file = v
		}
	}
	if file == "" {
		t.Fatalf("args %v lack --webhook-client-ca", c.Args)
	}
	var volume string
	for _, m := range c.VolumeMounts {
		if file == strings.TrimSuffix(m.MountPath, "/")+"/bundle.pem" {
			volume = m.Name
		}
	}
	if volume == "" {
		t.Fatalf("--webhook-client-ca=%s is no key bundle.pem of a mounted volume (mounts %v)", file, c.VolumeMounts)
	}
	for _, v := range pod.Volumes {
		if v.Name == volume && (v.ConfigMap == nil || v.ConfigMap.Name != "apiserver-client-ca") {
			t.Errorf("volume %s is not the ConfigMap apiserver-client-ca: %+v", volume, v.VolumeSource)
		}
	}
}
