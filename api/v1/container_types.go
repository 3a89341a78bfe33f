// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	corev1 "k8s.io/api/core/v1"
)

// Bounds of ContainerFields. The manager caches every ScheduleTask and
// AppDeployment, so these bound its memory per object; they are far above
// what a real container uses, and the schema markers below repeat them
// (markers cannot refer to constants; internal/validation tests that the
// two agree).
const (
	// MaxCommandItems is the most entries command may have.
	MaxCommandItems = 64
	// MaxArgsItems is the most entries args may have.
	MaxArgsItems = 256
	// MaxArgumentLength is the longest entry of command or args, in characters.
	MaxArgumentLength = 16384
	// MaxEnvItems is the most variables env may have.
	MaxEnvItems = 128
	// MaxEnvNameLength is the longest name of an environment variable.
	MaxEnvNameLength = 256
	// MaxEnvValueLength is the longest value of an environment variable.
	MaxEnvValueLength = 16384
	// MaxCommandArgsEnvLength is the most characters command, args and env
	// (names, values, and the names, keys and paths a valueFrom refers to)
	// may hold together: the bound that matters for memory, so that a task
	// at every limit stays a few tens of KiB.
	MaxCommandArgsEnvLength = 32768
	// MaxReferenceLength is the longest name or key an env variable's
	// valueFrom refers to (a ConfigMap, Secret, key, field or resource).
	MaxReferenceLength = 253
	// MaxResourceEntries is the most entries resources.limits and
	// resources.requests may each have, and MaxResourceClaims the most claims.
	MaxResourceEntries = 16
	MaxResourceClaims  = 16
)

// MaxPodTemplateBytes is the most a spec's pod template may hold, as JSON:
// the manager caches the Deployments it renders, so it bounds their size as
// the bounds of ContainerFields do.
const MaxPodTemplateBytes = 64 << 10

// ContainerFields are the fields of a spec that become its container's:
// a ScheduleTask's task container and an AppDeployment's application
// container. Both kinds embed them, so that their schema markers and CEL
// rules, and the bounds behind them (MaxCommandItems and the rest), are
// written once. command, args and env together hold at most 32768
// characters (env counted with the names, keys and paths its valueFrom
// refers to).
// +kubebuilder:validation:XValidation:rule="(has(self.command) ? self.command.map(c, size(c)).sum() : 0) + (has(self.args) ? self.args.map(a, size(a)).sum() : 0) + (has(self.env) ? self.env.map(e, size(e.name) + (has(e.value) ? size(e.value) : 0) + (!has(e.valueFrom) ? 0 : (has(e.valueFrom.configMapKeyRef) ? size(e.valueFrom.configMapKeyRef.key) + (has(e.valueFrom.configMapKeyRef.name) ? size(e.valueFrom.configMapKeyRef.name) : 0) : 0) + (has(e.valueFrom.secretKeyRef) ? size(e.valueFrom.secretKeyRef.key) + (has(e.valueFrom.secretKeyRef.name) ? size(e.valueFrom.secretKeyRef.name) : 0) : 0) + (has(e.valueFrom.fieldRef) ? size(e.valueFrom.fieldRef.fieldPath) + (has(e.valueFrom.fieldRef.apiVersion) ? size(e.valueFrom.fieldRef.apiVersion) : 0) : 0) + (has(e.valueFrom.resourceFieldRef) ? size(e.valueFrom.resourceFieldRef.resource) + (has(e.valueFrom.resourceFieldRef.containerName) ? size(e.valueFrom.resourceFieldRef.containerName) : 0) : 0) + (has(e.valueFrom.fileKeyRef) ? size(e.valueFrom.fileKeyRef.volumeName) + size(e.valueFrom.fileKeyRef.path) + size(e.valueFrom.fileKeyRef.key) : 0))).sum() : 0) <= 32768",message="command, args and env (names, values and what valueFrom refers to) must hold at most 32768 characters together"
type ContainerFields struct {
	// command overrides the image's entrypoint. At most 64 entries of at
	// most 16384 characters each; command, args and env together hold at
	// most 32768 characters.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=16384
	Command []string `json:"command,omitempty"`

	// args are the arguments to the entrypoint. At most 256 entries of at
	// most 16384 characters each; command, args and env together hold at
	// most 32768 characters.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=16384
	Args []string `json:"args,omitempty"`

	// env sets environment variables in the container. At most 128
	// variables; a name has at most 256 characters, a value at most 16384,
	// and a valueFrom's names and keys at most 253 (a fileKeyRef's path
	// 4096); command, args and env together hold at most 32768 characters.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:XValidation:rule="size(self.name) <= 256",message="must be at most 256 characters",fieldPath=".name"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.value) || size(self.value) <= 16384",message="must be at most 16384 characters",fieldPath=".value"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.valueFrom) || !has(self.valueFrom.configMapKeyRef) || ((!has(self.valueFrom.configMapKeyRef.name) || size(self.valueFrom.configMapKeyRef.name) <= 253) && size(self.valueFrom.configMapKeyRef.key) <= 253)",message="name and key must be at most 253 characters each",fieldPath=".valueFrom.configMapKeyRef"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.valueFrom) || !has(self.valueFrom.secretKeyRef) || ((!has(self.valueFrom.secretKeyRef.name) || size(self.valueFrom.secretKeyRef.name) <= 253) && size(self.valueFrom.secretKeyRef.key) <= 253)",message="name and key must be at most 253 characters each",fieldPath=".valueFrom.secretKeyRef"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.valueFrom) || !has(self.valueFrom.fieldRef) || ((!has(self.valueFrom.fieldRef.apiVersion) || size(self.valueFrom.fieldRef.apiVersion) <= 253) && size(self.valueFrom.fieldRef.fieldPath) <= 253)",message="apiVersion and fieldPath must be at most 253 characters each",fieldPath=".valueFrom.fieldRef"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.valueFrom) || !has(self.valueFrom.resourceFieldRef) || ((!has(self.valueFrom.resourceFieldRef.containerName) || size(self.valueFrom.resourceFieldRef.containerName) <= 253) && size(self.valueFrom.resourceFieldRef.resource) <= 253 && (!has(self.valueFrom.resourceFieldRef.divisor) || type(self.valueFrom.resourceFieldRef.divisor) != string || size(self.valueFrom.resourceFieldRef.divisor) <= 64))",message="containerName and resource must be at most 253 characters each, divisor at most 64",fieldPath=".valueFrom.resourceFieldRef"
	// +kubebuilder:validation:items:XValidation:rule="!has(self.valueFrom) || !has(self.valueFrom.fileKeyRef) || (size(self.valueFrom.fileKeyRef.volumeName) <= 253 && size(self.valueFrom.fileKeyRef.path) <= 4096 && size(self.valueFrom.fileKeyRef.key) <= 253)",message="volumeName and key must be at most 253 characters each, path at most 4096",fieldPath=".valueFrom.fileKeyRef"
	Env []corev1.EnvVar `json:"env,omitempty"`

	// resources are the container's compute requests and limits. limits and
	// requests have at most 16 entries each, with names of at most 253
	// characters and quantities of at most 64; claims at most 16, with name
	// and request of at most 63 characters (DNS labels).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.limits) || (size(self.limits) <= 16 && self.limits.all(k, size(k) <= 253 && (type(self.limits[k]) != string || size(self.limits[k]) <= 64)))",message="must have at most 16 entries, names of at most 253 characters and quantities of at most 64",fieldPath=".limits"
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || (size(self.requests) <= 16 && self.requests.all(k, size(k) <= 253 && (type(self.requests[k]) != string || size(self.requests[k]) <= 64)))",message="must have at most 16 entries, names of at most 253 characters and quantities of at most 64",fieldPath=".requests"
	// +kubebuilder:validation:XValidation:rule="!has(self.claims) || (size(self.claims) <= 16 && self.claims.all(c, size(c.name) <= 63 && (!has(c.request) || size(c.request) <= 63)))",message="must have at most 16 claims, each with name and request of at most 63 characters",fieldPath=".claims"
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}
