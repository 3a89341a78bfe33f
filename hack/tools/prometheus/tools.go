//go:build tools

// Package tools pins the Prometheus server the e2e tests query (and the
// AppDeployment canary analysis does), and promtool, which tests the alert
// rules. It is a module of its own because its
// dependency graph (client-go among them) would otherwise have to agree with
// the Kubernetes control plane's in hack/tools/go.mod. It is built with the
// tag remove_all_sd, Prometheus' own switch that leaves out the cloud
// service-discovery providers; static and file targets remain.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
