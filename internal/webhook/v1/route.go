// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/httproute"
	"github.com/example/platform-operator/internal/release"
)

// HTTPRouteCRD is the name of the Gateway API's HTTPRoute CRD, which
// admission reads to learn whether its rules have names.
const HTTPRouteCRD = "httproutes.gateway.networking.k8s.io"

// The webhook reads the HTTPRoute CRD's schema (rule names) and the route a
// weighted canary names (the Gateway API's limits).
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=httproutes.gateway.networking.k8s.io

// routeErrors judges a weighted canary against the cluster: rule names
// need an HTTPRoute CRD that has them (Gateway API v1.4), and the header
// rules of every step must fit the route within the Gateway API's limits.
// A cluster without the CRD, or a route not made yet, is left to the
// controller, which says so in status: an AppDeployment may be applied
// before its route, as a GitOps tool applies a directory.
func routeErrors(ctx context.Context, reader client.Reader, ad *platformv1.AppDeployment) (field.ErrorList, error) {
	g := ad.Spec.Strategy.TrafficRouting.GatewayAPI
	if g.HTTPRoute == "" {
		return nil, nil
	}
	path := field.NewPath("spec", "strategy", "trafficRouting", "gatewayAPI")
	var errs field.ErrorList
	if len(g.Rules) > 0 {
		named, err := ruleNamesServed(ctx, reader)
		if err != nil {
			return nil, err
		}
		if !named {
			errs = append(errs, field.Invalid(path.Child("rules"), g.Rules,
				"the installed HTTPRoute CRD has no rule names (Gateway API older than v1.4): upgrade it, or leave rules unset "+
					"to move every rule that sends to the application's Service"))
		}
	}
	route := &gatewayv1.HTTPRoute{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: g.HTTPRoute}, route)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return errs, nil
	case err != nil:
		return nil, fmt.Errorf("read HTTPRoute %s: %w", g.HTTPRoute, err)
	}
	b := httproute.Backends{Stable: ad.Name, Canary: ad.Name + release.Suffix(&ad.Spec.Strategy)}
	targets, err := httproute.Targets(route, g.Rules, b)
	if err != nil {
		return errs, nil //nolint:nilerr // the controller pauses with the reason; the route may be fixed later
	}
	steps := field.NewPath("spec", "strategy", "steps")
	for i, step := range ad.Spec.Strategy.Steps {
		if len(step.HeaderRoute.Matches) == 0 {
			continue
		}
		c := route.DeepCopy()
		headers := make([]gatewayv1.HTTPHeaderMatch, len(step.HeaderRoute.Matches))
		for k, m := range step.HeaderRoute.Matches {
			headers[k] = gatewayv1.HTTPHeaderMatch{Name: gatewayv1.HTTPHeaderName(m.Name), Value: m.Value}
		}
		httproute.SetHeaderRules(c, targets, b, ad.Name, headers)
		if err := httproute.CheckLimits(c); err != nil {
			errs = append(errs, field.Invalid(steps.Index(i).Child("headerRoute"),
				fmt.Sprintf("%d header rule(s)", len(targets)), fmt.Sprintf("with this step's header rules, %v", err)))
		}
		for _, rule := range c.Spec.Rules {
			for _, m := range rule.Matches {
				if len(m.Headers) > 16 {
					errs = append(errs, field.Invalid(steps.Index(i).Child("headerRoute", "matches"), len(step.HeaderRoute.Matches),
						fmt.Sprintf("a rule of HTTPRoute %s already matches %d headers; with these it would match %d, more than the Gateway API's 16",
							route.Name, len(m.Headers)-len(headers), len(m.Headers))))
				}
			}
		}
	}
	return errs, nil
}

// ruleNamesServed reports whether the installed HTTPRoute CRD's served
// version v1 has rule names; true when there is no such CRD to ask.
func ruleNamesServed(ctx context.Context, reader client.Reader) (bool, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := reader.Get(ctx, client.ObjectKey{Name: HTTPRouteCRD}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("read CRD %s: %w", HTTPRouteCRD, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != gatewayv1.GroupVersion.Version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		spec, ok := v.Schema.OpenAPIV3Schema.Properties["spec"]
		if !ok {
			return false, nil
		}
		rules, ok := spec.Properties["rules"]
		if !ok || rules.Items == nil || rules.Items.Schema == nil {
			return false, nil
		}
		_, named := rules.Items.Schema.Properties["name"]
		return named, nil
	}
	return false, nil
}
