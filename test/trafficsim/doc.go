// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package trafficsim stands in for the applications on a kwok cluster, whose
// pods run no containers and so answer no requests: it watches the pods of
// AppDeployments and exports, for each group of ready pods, the request
// metrics a real application would, under the labels a PodMonitor would give
// them. The canary analysis then has something to judge in e2e tests and
// under `make run`.
//
// A group is the pods of one (namespace, app, track, revision), told apart by
// the labels the operator puts on its pods. Each tick adds
// rate × ready pods × tick requests to the group's series
// http_requests_total{namespace,app,track,revision,code} and observes their
// latency in http_request_duration_seconds{namespace,app,track,revision}.
// How the requests fare is chosen by the image tag of the group's pods, since
// the image is all an AppDeployment lets a user choose of its pods:
//
//	tag contains "bad"   10 % answered 500, the rest 200; every request takes 2 s
//	tag contains "idle"  no requests at all (no series either)
//	any other tag        0.1 % answered 500, the rest 200; every request takes 0.05 s
//
// so a test releases example.com/app:v1.2.5-bad to get a canary that fails
// its analysis, and example.com/app:v1.2.5 to get one that passes.
//
// It also plays the gateway of the GatewayClass platform-sim (controller
// ControllerName), as kwok plays the kubelets: it writes the status a
// gateway would on its classes, Gateways and the HTTPRoutes attached to
// them, so that a weighted canary's steps start; gateway.go lists exactly
// which Gateway API semantics it follows. Pods behind a Service that a
// served route sends to get their requests through it, split by its
// weights and header rules (routing.go says how); every other ready pod
// gets its rate. Of a group's requests, those a rule with header matches
// sent (the testers') are also counted in
// trafficsim_header_requests_total{namespace,app,track,revision}, as a
// gateway's access log would tell them apart.
//
// The package is a test tool: the manager's image does not contain it. The
// command in cmd/trafficsim runs it on its own (`make run` starts it); the
// e2e harness runs it in-process (harness.StartTrafficSim).
package trafficsim
