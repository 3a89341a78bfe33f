// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/release"
)

// MaxAppNameLength is the longest AppDeployment name: it is the value of
// the app.kubernetes.io/name label on every pod and the Service's name,
// both at most 63 characters.
const MaxAppNameLength = 63

// AppDeployment returns every problem with an AppDeployment, each naming its
// field, and the warnings a valid one deserves (a canary weight the replica
// count cannot honour). It repeats the schema's checks, so that a manifest
// can be checked offline with nothing but this package. Its criteria's
// queries are checked against scope for the AppDeployment's namespace
// (analysis.CheckQuery): the operator's scope at admission, the default one
// offline.
func AppDeployment(ad *platformv1.AppDeployment, scope analysis.Scope) (field.ErrorList, []string) {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	switch {
	case strings.HasSuffix(ad.Name, platformv1.CanarySuffix):
		errs = append(errs, field.Invalid(name, ad.Name, "must not end with -canary: that name is the canary Deployment's"))
	case strings.HasSuffix(ad.Name, platformv1.PreviewSuffix):
		errs = append(errs, field.Invalid(name, ad.Name,
			"must not end with -preview: that name is the preview Deployment's and Service's of a blue-green release"))
	case ad.Name != "":
		for _, msg := range k8svalidation.IsDNS1035Label(ad.Name) {
			errs = append(errs, field.Invalid(name, ad.Name, msg+" (the name is the Service's and a label value)"))
		}
	}
	spec := field.NewPath("spec")
	s := &ad.Spec

	switch {
	case s.Adopts():
		errs = append(errs, workloadRef(spec, ad)...)
	case s.Image == "":
		errs = append(errs, field.Required(spec.Child("image"),
			"the container image to run, or else workloadRef: the Deployment whose pod template to run"))
	default:
		if _, err := reference.ParseNormalizedNamed(s.Image); err != nil {
			errs = append(errs, field.Invalid(spec.Child("image"), s.Image, "not a valid image reference: "+err.Error()))
		}
	}
	if s.Version != "" && !release.IsVersion(s.Version) {
		errs = append(errs, field.Invalid(spec.Child("version"), s.Version,
			"must be v and three numbers, such as v1.2.3 or v1.10.0"))
	}
	errs = append(errs, inRange(spec.Child("replicas"), s.Replicas, 0, platformv1.MaxAppReplicas)...)
	if s.Port != 0 {
		errs = append(errs, inRange(spec.Child("port"), &s.Port, 1, 65535)...)
	}
	errs = append(errs, healthCheck(spec, s)...)
	if s.ProgressDeadlineSeconds != 0 {
		errs = append(errs, inRange(spec.Child("progressDeadlineSeconds"), &s.ProgressDeadlineSeconds, 10, 86400)...)
	}
	errs = append(errs, inRange(spec.Child("minReadySeconds"), s.MinReadySeconds, 0, 3600)...)
	deadline := s.ProgressDeadlineSeconds
	if deadline == 0 {
		deadline = platformv1.DefaultProgressDeadlineSeconds
	}
	if minReady := ptr.Deref(s.MinReadySeconds, 0); minReady >= deadline {
		errs = append(errs, field.Invalid(spec.Child("minReadySeconds"), minReady,
			fmt.Sprintf("must be less than progressDeadlineSeconds (%d)", deadline)))
	}
	errs = append(errs, strategy(spec.Child("strategy"), &s.Strategy, queryScope{scope, ad.Namespace})...)
	if s.Strategy.Type == platformv1.StrategyBlueGreen && s.Port == 0 {
		errs = append(errs, field.Required(spec.Child("port"),
			"blueGreen needs port: promotion switches the Service that exposes it"))
	}
	switch s.Rollback.OnFailure {
	case "", platformv1.FailureRollback, platformv1.FailurePause:
	default:
		errs = append(errs, oneOf(spec.Child("rollback", "onFailure"), string(s.Rollback.OnFailure),
			platformv1.FailureRollback, platformv1.FailurePause))
	}
	errs = append(errs, inRange(spec.Child("rollback", "revisionHistoryLimit"), s.Rollback.RevisionHistoryLimit, 0, platformv1.MaxRevisionHistory)...)
	errs = append(errs, rollbackAnalysis(spec.Child("rollback"), &s.Rollback)...)
	errs = append(errs, containerBounds(spec, container{
		ContainerFields: s.ContainerFields, image: s.Image, serviceAccountName: s.ServiceAccountName,
	})...)
	errs = append(errs, podTemplate(spec.Child("template"), s.Template, platformv1.AppContainerName, appPodLabels,
		corev1.RestartPolicyAlways)...)
	if len(errs) > 0 {
		return errs, nil
	}
	if s.Strategy.Type != platformv1.StrategyCanary {
		return nil, nil
	}
	return nil, canaryWarnings(s)
}

// healthCheck checks the health check and that it has a port to check.
func healthCheck(spec *field.Path, s *platformv1.AppDeploymentSpec) field.ErrorList {
	hc := &s.HealthCheck
	if *hc == (platformv1.HealthCheck{}) {
		return nil
	}
	path := spec.Child("healthCheck")
	var errs field.ErrorList
	switch {
	case hc.Path == "":
		errs = append(errs, field.Required(path.Child("path"), "the HTTP path to check, such as /healthz"))
	case !strings.HasPrefix(hc.Path, "/"):
		errs = append(errs, field.Invalid(path.Child("path"), hc.Path, "must start with /"))
	}
	errs = append(errs, tooLong(path.Child("path"), hc.Path, 1024)...)
	if hc.Port == 0 && s.Port == 0 {
		errs = append(errs, field.Required(path.Child("port"), "the port to check; or set spec.port"))
	} else if hc.Port != 0 {
		errs = append(errs, inRange(path.Child("port"), &hc.Port, 1, 65535)...)
	}
	errs = append(errs, inRange(path.Child("initialDelaySeconds"), hc.InitialDelaySeconds, 0, 3600)...)
	for _, n := range []struct {
		name string
		v    int32
		hi   int64
	}{{"periodSeconds", hc.PeriodSeconds, 3600}, {"failureThreshold", hc.FailureThreshold, 100}, {"successThreshold", hc.SuccessThreshold, 100}} {
		if n.v != 0 { // unset: the schema's default
			errs = append(errs, inRange(path.Child(n.name), &n.v, 1, n.hi)...)
		}
	}
	return errs
}

// strategy checks the release strategy: which fields go with which type,
// the canary's steps and criteria.
func strategy(path *field.Path, st *platformv1.Strategy, qs queryScope) field.ErrorList {
	var errs field.ErrorList
	typ := st.Type
	switch typ {
	case "":
		typ = platformv1.StrategyRolling
	case platformv1.StrategyRolling, platformv1.StrategyRecreate, platformv1.StrategyCanary, platformv1.StrategyBlueGreen:
	default:
		return field.ErrorList{oneOf(path.Child("type"), string(st.Type),
			platformv1.StrategyRolling, platformv1.StrategyRecreate, platformv1.StrategyCanary, platformv1.StrategyBlueGreen)}
	}
	if typ != platformv1.StrategyBlueGreen && !isZeroBlueGreen(&st.BlueGreen) {
		errs = append(errs, field.Forbidden(path.Child("blueGreen"), "applies only to type blueGreen"))
	}
	if typ != platformv1.StrategyRolling {
		errs = append(errs, onlyWith(path, "rolling", []setField{
			{"maxSurge", st.MaxSurge != nil}, {"maxUnavailable", st.MaxUnavailable != nil}})...)
	} else if isZero(st.MaxSurge) && isZero(st.MaxUnavailable) && st.MaxSurge != nil && st.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(path.Child("maxUnavailable"), st.MaxUnavailable.String(),
			"may not be 0 when maxSurge is 0: the update could never make progress"))
	}
	if typ == platformv1.StrategyBlueGreen {
		errs = append(errs, blueGreen(path.Child("blueGreen"), &st.BlueGreen, qs)...)
	}
	if typ != platformv1.StrategyCanary {
		return append(errs, onlyWith(path, "canary", []setField{
			{"canaryPercent", st.CanaryPercent != 0}, {"steps", len(st.Steps) > 0}, {"canaryCriteria", len(st.CanaryCriteria) > 0},
			{"analysis", st.Analysis != (platformv1.Analysis{})}})...)
	}

	switch {
	case st.CanaryPercent != 0 && len(st.Steps) > 0:
		errs = append(errs, field.Forbidden(path.Child("steps"), "set canaryPercent or steps, not both"))
	case st.CanaryPercent == 0 && len(st.Steps) == 0:
		errs = append(errs, field.Required(path.Child("canaryPercent"), "a canary needs canaryPercent (e.g. 30) or steps"))
	case st.CanaryPercent != 0:
		if st.CanaryPercent < 1 || st.CanaryPercent > 99 {
			errs = append(errs, field.Invalid(path.Child("canaryPercent"), st.CanaryPercent, "must be between 1 and 99"))
		}
	}
	steps := path.Child("steps")
	errs = append(errs, tooMany(steps, len(st.Steps), platformv1.MaxCanarySteps)...)
	for i, step := range st.Steps {
		p := steps.Index(i)
		if step.Weight < 1 || step.Weight > 99 {
			errs = append(errs, field.Invalid(p.Child("weight"), step.Weight, "must be between 1 and 99"))
		} else if i > 0 && step.Weight <= st.Steps[i-1].Weight {
			errs = append(errs, field.Invalid(p.Child("weight"), step.Weight,
				fmt.Sprintf("must be higher than the previous step's weight (%d)", st.Steps[i-1].Weight)))
		}
		errs = append(errs, inRange(p.Child("pauseSeconds"), step.PauseSeconds, 0, 86400)...)
		switch step.Approval {
		case "", platformv1.ApprovalAuto, platformv1.ApprovalManual:
		default:
			errs = append(errs, oneOf(p.Child("approval"), string(step.Approval), platformv1.ApprovalAuto, platformv1.ApprovalManual))
		}
	}
	errs = append(errs, canaryCriteria(path.Child("canaryCriteria"), st.CanaryCriteria, qs)...)
	return append(errs, analysisSpec(path.Child("analysis"), &st.Analysis)...)
}

// blueGreen checks a blue-green release's settings and the criteria of
// both its analyses.
func blueGreen(path *field.Path, bg *platformv1.BlueGreenStrategy, qs queryScope) field.ErrorList {
	errs := inRange(path.Child("autoPromotionSeconds"), bg.AutoPromotionSeconds, 0, 86400)
	errs = append(errs, inRange(path.Child("scaleDownDelaySeconds"), bg.ScaleDownDelaySeconds, 0, 86400)...)
	for _, a := range []struct {
		name string
		a    *platformv1.BlueGreenAnalysis
	}{{"prePromotionAnalysis", &bg.PrePromotionAnalysis}, {"postPromotionAnalysis", &bg.PostPromotionAnalysis}} {
		if len(a.a.Criteria) == 0 && a.a.Analysis == (platformv1.Analysis{}) {
			continue // unset
		}
		p := path.Child(a.name)
		if len(a.a.Criteria) == 0 {
			errs = append(errs, field.Required(p.Child("criteria"), "an analysis needs at least one criterion"))
		}
		errs = append(errs, canaryCriteria(p.Child("criteria"), a.a.Criteria, qs)...)
		errs = append(errs, analysisSpec(p.Child("analysis"), &a.a.Analysis)...)
	}
	return errs
}

// isZeroBlueGreen reports whether no blue-green setting is set.
func isZeroBlueGreen(bg *platformv1.BlueGreenStrategy) bool {
	return bg.AutoPromotionSeconds == nil && bg.ScaleDownDelaySeconds == nil &&
		len(bg.PrePromotionAnalysis.Criteria) == 0 && bg.PrePromotionAnalysis.Analysis == (platformv1.Analysis{}) &&
		len(bg.PostPromotionAnalysis.Criteria) == 0 && bg.PostPromotionAnalysis.Analysis == (platformv1.Analysis{})
}

// isZero reports whether a maxSurge or maxUnavailable is 0 or 0%.
func isZero(v *intstr.IntOrString) bool {
	if v == nil {
		return false
	}
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	return v.StrVal == "0%" || v.StrVal == "0"
}

// oneOf is the error of an enum field with a value it does not take.
func oneOf[T ~string](path *field.Path, value string, allowed ...T) *field.Error {
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = fmt.Sprintf("%q", string(a))
	}
	return field.Invalid(path, value, "must be one of "+strings.Join(quoted, ", "))
}

// setField is a field of the strategy and whether it is set.
type setField struct {
	name string
	set  bool
}

// onlyWith refuses the fields that are set although they apply only to
// another strategy type.
func onlyWith(path *field.Path, typ string, fields []setField) field.ErrorList {
	var errs field.ErrorList
	for _, f := range fields {
		if f.set {
			errs = append(errs, field.Forbidden(path.Child(f.name), "applies only to type "+typ))
		}
	}
	return errs
}

// canaryWarnings says where a canary's weights cannot be honoured with the
// replica count: the canary gets whole pods, so 30 % of 3 replicas is 1 pod,
// 33 %. A canary weighted on a route (trafficRouting) gets its weight
// exactly at any pod count, so only the want of replicas is said of it.
func canaryWarnings(s *platformv1.AppDeploymentSpec) []string {
	replicas := release.Replicas(s)
	weighted := s.Strategy.TrafficRouting.GatewayAPI.HTTPRoute != ""
	var warnings []string
	path := "spec.strategy.canaryPercent"
	for i, step := range release.Steps(&s.Strategy) {
		if len(s.Strategy.Steps) > 0 {
			path = fmt.Sprintf("spec.strategy.steps[%d].weight", i)
		}
		switch {
		case replicas == 0:
			return []string{"spec.replicas: 0 replicas: a canary has no pods to take a share of until the AppDeployment is scaled up"}
		case weighted:
		case replicas == 1:
			warnings = append(warnings, fmt.Sprintf(
				"%s: with 1 replica the canary is one extra pod beside the stable one, so it takes 50%% of the traffic, not %d%%", path, step.Weight))
		default:
			canary := release.CanaryReplicas(step.Weight, replicas)
			if actual := release.Weight(canary, replicas); actual != step.Weight {
				warnings = append(warnings, fmt.Sprintf("%s: %d%% of %d replicas is %d canary pod(s), %d%% of the traffic",
					path, step.Weight, replicas, canary, actual))
			}
		}
	}
	return warnings
}

// workloadRef checks an AppDeployment that runs another Deployment's pod
// template: without image or template of its own (they come from that
// Deployment), and naming neither of its own Deployments.
func workloadRef(spec *field.Path, ad *platformv1.AppDeployment) field.ErrorList {
	var errs field.ErrorList
	s := &ad.Spec
	if s.Image != "" {
		errs = append(errs, field.Invalid(spec.Child("image"), s.Image,
			"must not be set with workloadRef: exactly one of image and workloadRef is set"))
	}
	if s.Template != nil {
		errs = append(errs, field.Forbidden(spec.Child("template"),
			"must not be set with workloadRef: the pod template is the referenced Deployment's"))
	}
	ref := spec.Child("workloadRef", "name")
	switch name := s.WorkloadRef.Name; name {
	case ad.Name, ad.Name + platformv1.CanarySuffix, ad.Name + platformv1.PreviewSuffix:
		errs = append(errs, field.Invalid(ref, name,
			"names one of the AppDeployment's own Deployments; give the AppDeployment another name than the Deployment it adopts"))
	default:
		for _, msg := range k8svalidation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(ref, name, msg))
		}
	}
	return errs
}
