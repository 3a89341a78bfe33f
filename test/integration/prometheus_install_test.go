// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The chart's Prometheus and analysis values reach the manager as its
// flags, and every file a flag names is in a volume the pod mounts: the
// Secret of prometheus.tls, the projected token of
// prometheus.bearerToken.audience.
func TestHelm_PrometheusValuesBecomeTheManagersFlagsAndMountTheirFiles(t *testing.T) {
	c, _ := managerContainer(t)
	for _, want := range []string{"--prometheus-namespace-label=namespace", "--analysis-max-range=1h",
		"--analysis-max-in-flight=8", "--analysis-max-in-flight-per-namespace=2"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("defaults: args %v lack %s", c.Args, want)
		}
	}

	c, pod := managerContainer(t, "prometheus.address=https://thanos-query.monitoring:9090",
		"prometheus.namespaceLabel=kubernetes_namespace",
		"prometheus.namespaceLabelFor[0].metric=envoy_cluster_upstream_rq_total",
		"prometheus.namespaceLabelFor[0].label=route_namespace",
		"prometheus.namespaceLabelFor[0].namespace=gateway-system",
		`prometheus.extraMatchers[0]=cluster="east"`,
		"prometheus.tls.secretName=prometheus-client", "prometheus.tls.certKey=tls.crt", "prometheus.tls.keyKey=tls.key",
		"prometheus.bearerToken.audience=prometheus", "prometheus.headers.X-Scope-OrgID=platform",
		"analysis.maxInFlight=4", "analysis.maxInFlightPerNamespace=1")
	for _, want := range []string{"--prometheus-namespace-label=kubernetes_namespace",
		"--prometheus-namespace-label-for=envoy_cluster_upstream_rq_total=route_namespace@gateway-system",
		`--prometheus-extra-matcher=cluster="east"`,
		"--prometheus-header=X-Scope-OrgID=platform", "--analysis-max-in-flight=4",
		"--analysis-max-in-flight-per-namespace=1"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %v lack %s", c.Args, want)
		}
	}
	sources := map[string]corev1.VolumeSource{}
	for _, v := range pod.Volumes {
		sources[v.Name] = v.VolumeSource
	}
	tlsSecret := func(v corev1.VolumeSource) bool { return v.Secret != nil && v.Secret.SecretName == "prometheus-client" }
	files := map[string]func(corev1.VolumeSource) bool{
		"--prometheus-ca-file":   tlsSecret,
		"--prometheus-cert-file": tlsSecret,
		"--prometheus-key-file":  tlsSecret,
		"--prometheus-bearer-token-file": func(v corev1.VolumeSource) bool {
			return v.Projected != nil && len(v.Projected.Sources) == 1 && v.Projected.Sources[0].ServiceAccountToken != nil &&
				v.Projected.Sources[0].ServiceAccountToken.Audience == "prometheus"
		},
	}
	for flag, isSource := range files {
		var file string
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				file = v
			}
		}
		if file == "" {
			t.Errorf("args %v lack %s", c.Args, flag)
			continue
		}
		mounted := false
		for _, m := range c.VolumeMounts {
			if strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/") && isSource(sources[m.Name]) {
				mounted = true
			}
		}
		if !mounted {
			t.Errorf("%s=%s is in no volume of the expected source (mounts %v)", flag, file, c.VolumeMounts)
		}
	}
}
