// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Bounds of the strings inside the Kubernetes types a task embeds (env's
// valueFrom, resources, securityContext), which the schema bounds with CEL
// rules; they are repeated here, for the CLI's lint and for messages that
// name the exact field.
const (
	maxImageLength          = 512
	maxScheduleLength       = 256
	maxTimeZoneLength       = 64
	maxServiceAccountLength = 253
	maxPathLength           = 4096
	maxProfileLength        = 1024
	maxShortStringLength    = 64
	maxLabelLength          = 63
	maxCredentialSpecLength = 4096
)

// container is the part of a spec that becomes a container: the
// ContainerFields both kinds embed, and the fields each kind declares
// itself with the same bounds.
type container struct {
	platformv1.ContainerFields
	image, serviceAccountName string
	securityContext           *corev1.SecurityContext
}

// bounds returns every list or string of the spec that is over its limit
// (the constants in api/v1, which the CRD's schema repeats), each naming its
// field; lengths are in characters, as the schema's maxLength counts them.
func bounds(spec *field.Path, s *platformv1.ScheduleTaskSpec) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, tooLong(spec.Child("schedule"), s.Schedule, maxScheduleLength)...)
	errs = append(errs, tooLong(spec.Child("timeZone"), ptr.Deref(s.TimeZone, ""), maxTimeZoneLength)...)
	return append(errs, containerBounds(spec, container{
		ContainerFields: s.ContainerFields, image: s.Image, serviceAccountName: ptr.Deref(s.ServiceAccountName, ""),
		securityContext: s.SecurityContext,
	})...)
}

// containerBounds returns every list or string of a container's fields
// that is over its limit.
func containerBounds(spec *field.Path, c container) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, tooLong(spec.Child("image"), c.image, maxImageLength)...)
	errs = append(errs, tooLong(spec.Child("serviceAccountName"), c.serviceAccountName, maxServiceAccountLength)...)

	errs = append(errs, argumentBounds(spec, c)...)
	if total := argumentLength(c); total > platformv1.MaxCommandArgsEnvLength {
		errs = append(errs, field.Invalid(spec, fmt.Sprintf("%d characters", total), fmt.Sprintf(
			"command, args and env (names, values and what valueFrom refers to) must hold at most %d characters together", platformv1.MaxCommandArgsEnvLength)))
	}
	errs = append(errs, resourceBounds(spec.Child("resources"), c.Resources)...)
	errs = append(errs, securityContextBounds(spec.Child("securityContext"), c.securityContext)...)
	return errs
}

// argumentBounds checks the count and length of each entry of command,
// args and env.
func argumentBounds(spec *field.Path, c container) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name     string
		items    []string
		maxItems int
	}{
		{"command", c.Command, platformv1.MaxCommandItems},
		{"args", c.Args, platformv1.MaxArgsItems},
	} {
		path := spec.Child(l.name)
		errs = append(errs, tooMany(path, len(l.items), l.maxItems)...)
		for i, item := range l.items {
			errs = append(errs, tooLong(path.Index(i), item, platformv1.MaxArgumentLength)...)
		}
	}
	errs = append(errs, tooMany(spec.Child("env"), len(c.Env), platformv1.MaxEnvItems)...)
	for i := range c.Env {
		e := &c.Env[i]
		path := spec.Child("env").Index(i)
		errs = append(errs, tooLong(path.Child("name"), e.Name, platformv1.MaxEnvNameLength)...)
		errs = append(errs, tooLong(path.Child("value"), e.Value, platformv1.MaxEnvValueLength)...)
		errs = append(errs, envSourceBounds(path.Child("valueFrom"), e.ValueFrom)...)
	}
	return errs
}

// argumentLength is how many characters command, args and env hold
// together (env with the names, keys and paths its valueFrom refers to).
func argumentLength(c container) int {
	total := 0
	for _, item := range slices.Concat(c.Command, c.Args) {
		total += utf8.RuneCountInString(item)
	}
	for i := range c.Env {
		e := &c.Env[i]
		total += utf8.RuneCountInString(e.Name) + utf8.RuneCountInString(e.Value) + envSourceLength(e.ValueFrom)
	}
	return total
}

// RunParameters returns every problem with a manual run's args and env
// (spec.Args, spec.Env of a TaskRun), judged by the rules of the task's own
// fields: each entry within its bound, and the container the run gets (the
// task's command, the run's args or the task's, the task's env with the
// run's over it) within the bound of all of them together.
func RunParameters(run *platformv1.TaskRunSpec, task *platformv1.ScheduleTaskSpec) field.ErrorList {
	spec := field.NewPath("spec")
	errs := argumentBounds(spec, container{ContainerFields: platformv1.ContainerFields{Args: run.Args, Env: run.Env}})
	for i, e := range run.Env {
		if e.Name == "" {
			errs = append(errs, field.Required(spec.Child("env").Index(i).Child("name"), "the variable's name"))
		}
	}
	if len(errs) > 0 || task == nil {
		return errs
	}
	got := container{ContainerFields: platformv1.ContainerFields{
		Command: task.Command, Args: run.RunArgs(task.Args), Env: run.RunEnv(task.Env),
	}}
	if total := argumentLength(got); total > platformv1.MaxCommandArgsEnvLength {
		errs = append(errs, field.Invalid(spec, fmt.Sprintf("%d characters", total), fmt.Sprintf(
			"the run's container (the task's command, these args or the task's, the task's env with this env over it) "+
				"must hold at most %d characters together, as a task's", platformv1.MaxCommandArgsEnvLength)))
	}
	return errs
}

// envSourceBounds checks the names, keys and paths an env variable's
// valueFrom refers to.
func envSourceBounds(path *field.Path, src *corev1.EnvVarSource) field.ErrorList {
	if src == nil {
		return nil
	}
	var errs field.ErrorList
	ref := platformv1.MaxReferenceLength
	if r := src.ConfigMapKeyRef; r != nil {
		p := path.Child("configMapKeyRef")
		errs = append(errs, tooLong(p.Child("name"), r.Name, ref)...)
		errs = append(errs, tooLong(p.Child("key"), r.Key, ref)...)
	}
	if r := src.SecretKeyRef; r != nil {
		p := path.Child("secretKeyRef")
		errs = append(errs, tooLong(p.Child("name"), r.Name, ref)...)
		errs = append(errs, tooLong(p.Child("key"), r.Key, ref)...)
	}
	if r := src.FieldRef; r != nil {
		p := path.Child("fieldRef")
		errs = append(errs, tooLong(p.Child("apiVersion"), r.APIVersion, ref)...)
		errs = append(errs, tooLong(p.Child("fieldPath"), r.FieldPath, ref)...)
	}
	if r := src.ResourceFieldRef; r != nil {
		p := path.Child("resourceFieldRef")
		errs = append(errs, tooLong(p.Child("containerName"), r.ContainerName, ref)...)
		errs = append(errs, tooLong(p.Child("resource"), r.Resource, ref)...)
	}
	if r := src.FileKeyRef; r != nil {
		p := path.Child("fileKeyRef")
		errs = append(errs, tooLong(p.Child("volumeName"), r.VolumeName, ref)...)
		errs = append(errs, tooLong(p.Child("path"), r.Path, maxPathLength)...)
		errs = append(errs, tooLong(p.Child("key"), r.Key, ref)...)
	}
	return errs
}

// envSourceLength counts the characters of the names, keys and paths an env
// variable's valueFrom refers to, as the schema's total-length rule does.
func envSourceLength(src *corev1.EnvVarSource) int {
	if src == nil {
		return 0
	}
	var strs []string
	if r := src.ConfigMapKeyRef; r != nil {
		strs = append(strs, r.Name, r.Key)
	}
	if r := src.SecretKeyRef; r != nil {
		strs = append(strs, r.Name, r.Key)
	}
	if r := src.FieldRef; r != nil {
		strs = append(strs, r.APIVersion, r.FieldPath)
	}
	if r := src.ResourceFieldRef; r != nil {
		strs = append(strs, r.ContainerName, r.Resource)
	}
	if r := src.FileKeyRef; r != nil {
		strs = append(strs, r.VolumeName, r.Path, r.Key)
	}
	n := 0
	for _, s := range strs {
		n += utf8.RuneCountInString(s)
	}
	return n
}

// resourceBounds checks the number of requests, limits and claims and the
// length of their names.
func resourceBounds(path *field.Path, r *corev1.ResourceRequirements) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		p := path.Child(l.name)
		errs = append(errs, tooMany(p, len(l.list), platformv1.MaxResourceEntries)...)
		// Sorted, so that the same task always gets the same list.
		for _, k := range slices.Sorted(maps.Keys(l.list)) {
			errs = append(errs, tooLong(p.Key(string(k)), string(k), platformv1.MaxReferenceLength)...)
		}
	}
	p := path.Child("claims")
	errs = append(errs, tooMany(p, len(r.Claims), platformv1.MaxResourceClaims)...)
	for i, c := range r.Claims {
		errs = append(errs, tooLong(p.Index(i).Child("name"), c.Name, maxLabelLength)...)
		errs = append(errs, tooLong(p.Index(i).Child("request"), c.Request, maxLabelLength)...)
	}
	return errs
}

// securityContextBounds checks the lists and strings of a container's
// security context.
func securityContextBounds(path *field.Path, sc *corev1.SecurityContext) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if c := sc.Capabilities; c != nil {
		for name, caps := range [][]corev1.Capability{c.Add, c.Drop} {
			p := path.Child("capabilities", []string{"add", "drop"}[name])
			errs = append(errs, tooMany(p, len(caps), platformv1.MaxCapabilities)...)
			for i, capability := range caps {
				errs = append(errs, tooLong(p.Index(i), string(capability), maxShortStringLength)...)
			}
		}
	}
	if o := sc.SELinuxOptions; o != nil {
		p := path.Child("seLinuxOptions")
		errs = append(errs, tooLong(p.Child("user"), o.User, platformv1.MaxReferenceLength)...)
		errs = append(errs, tooLong(p.Child("role"), o.Role, platformv1.MaxReferenceLength)...)
		errs = append(errs, tooLong(p.Child("type"), o.Type, platformv1.MaxReferenceLength)...)
		errs = append(errs, tooLong(p.Child("level"), o.Level, platformv1.MaxReferenceLength)...)
	}
	if o := sc.WindowsOptions; o != nil {
		p := path.Child("windowsOptions")
		errs = append(errs, tooLong(p.Child("gmsaCredentialSpecName"), ptr.Deref(o.GMSACredentialSpecName, ""), platformv1.MaxReferenceLength)...)
		errs = append(errs, tooLong(p.Child("gmsaCredentialSpec"), ptr.Deref(o.GMSACredentialSpec, ""), maxCredentialSpecLength)...)
		errs = append(errs, tooLong(p.Child("runAsUserName"), ptr.Deref(o.RunAsUserName, ""), platformv1.MaxReferenceLength)...)
	}
	if sc.ProcMount != nil {
		errs = append(errs, tooLong(path.Child("procMount"), string(*sc.ProcMount), maxShortStringLength)...)
	}
	if o := sc.SeccompProfile; o != nil {
		p := path.Child("seccompProfile")
		errs = append(errs, tooLong(p.Child("type"), string(o.Type), maxShortStringLength)...)
		errs = append(errs, tooLong(p.Child("localhostProfile"), ptr.Deref(o.LocalhostProfile, ""), maxProfileLength)...)
	}
	if o := sc.AppArmorProfile; o != nil {
		p := path.Child("appArmorProfile")
		errs = append(errs, tooLong(p.Child("type"), string(o.Type), maxShortStringLength)...)
		errs = append(errs, tooLong(p.Child("localhostProfile"), ptr.Deref(o.LocalhostProfile, ""), maxProfileLength)...)
	}
	return errs
}

// tooLong returns an error when s has more than limit characters. The value
// itself is left out of the message: it is long by definition.
func tooLong(path *field.Path, s string, limit int) field.ErrorList {
	if n := utf8.RuneCountInString(s); n > limit {
		return field.ErrorList{field.Invalid(path, fmt.Sprintf("%d characters", n),
			fmt.Sprintf("must be at most %d characters", limit))}
	}
	return nil
}

// tooMany returns an error when a list has more than limit items.
func tooMany(path *field.Path, n, limit int) field.ErrorList {
	if n > limit {
		return field.ErrorList{field.TooMany(path, n, limit)}
	}
	return nil
}
