// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/httproute"
	"github.com/example/platform-operator/test/harness"
	"github.com/example/platform-operator/test/trafficsim"
)

// nsRouted holds figure 7e's weighted canaries, their routes and the
// Gateway the traffic simulator serves them through.
const nsRouted = "bench-routed"

// routedSteps are the weights of figure 7e's canaries, each step lasting
// routedPause once started.
var routedSteps = []int32{5, 25, 50}

const routedPause = 3 * time.Second

// routedName is the name of the i-th weighted canary of figure 7e, and of
// its HTTPRoute.
func routedName(i int) string { return fmt.Sprintf("routed-%05d", i) }

// routedApp is the i-th AppDeployment of figure 7e: a canary moved by
// weight on the HTTPRoute of its name, through routedSteps, each step
// passing on its own after routedPause.
func (b *appBench) routedApp(i int) *platformv1.AppDeployment {
	ad := b.rollingApp(nsRouted, i)
	ad.Name = routedName(i)
	steps := make([]platformv1.CanaryStep, 0, len(routedSteps))
	for _, w := range routedSteps {
		steps = append(steps, platformv1.CanaryStep{Weight: w, PauseSeconds: ptr.To(int32(routedPause / time.Second))})
	}
	ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyCanary, Steps: steps,
		TrafficRouting: platformv1.TrafficRouting{GatewayAPI: platformv1.GatewayAPIRouting{HTTPRoute: ad.Name}}}
	return ad
}

// routeTo is an HTTPRoute named name on the Gateway edge whose one rule
// sends to the Service service.
func routeTo(name, service string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsRouted, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: gatewayv1.ObjectName(service), Port: ptr.To[gatewayv1.PortNumber](8080)}}}}}},
		},
	}
}

// routed measures figure 7e: RoutedCanaries canaries moved by weight on
// routes the traffic simulator serves as their gateway, released at once;
// per step, from the step's start (the watch seeing the canary at the step
// with its pods for it ready, whichever comes last: the earliest the
// operator may write the weight) to the route seen carrying the step's
// weight, accepted by the gateway for that generation. Its floor is a bare
// client writing the same weights on routes of its own, from the write to
// the route seen accepted.
func (b *appBench) routed(ctx context.Context) error {
	if err := createNamespace(ctx, b.cluster.Client, nsRouted); err != nil {
		return err
	}
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: trafficsim.GatewayClassName},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: trafficsim.ControllerName}}
	if err := client.IgnoreAlreadyExists(b.cluster.Client.Create(ctx, class)); err != nil {
		return err
	}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: nsRouted, Name: "edge"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: trafficsim.GatewayClassName,
			Listeners: []gatewayv1.Listener{{Name: "http", Protocol: gatewayv1.HTTPProtocolType, Port: 80}}}}
	if err := b.cluster.Client.Create(ctx, gw); err != nil {
		return err
	}
	n := b.cfg.RoutedCanaries
	names := keys(nsRouted, n, routedName)
	err := parallel(ctx, n, b.cfg.Workers, func(i int) error {
		if err := b.client.Create(ctx, routeTo(routedName(i), routedName(i))); err != nil {
			return err
		}
		return b.client.Create(ctx, b.routedApp(i))
	})
	if err != nil {
		return err
	}
	if err := b.waitFirstReady(ctx, names, 10*time.Minute); err != nil {
		return err
	}
	image := appImage + appVersion2
	if err := b.setImage(ctx, names, image); err != nil {
		return err
	}
	promoted := 0
	err = poll(ctx, time.Now().Add(10*time.Minute), func() (bool, error) {
		promoted = b.watch.countPromoted(names, appVersion2)
		return promoted == n, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d routed canaries promoted: %w", promoted, n, err)
	}
	var took []time.Duration
	missing, early := 0, 0
	for _, k := range names {
		for i, w := range routedSteps {
			start, okStart := b.watch.routedStepStart(k, int32(i), image)
			end, okEnd := b.watch.routeAt(k, w)
			if okStart && okEnd && end.Before(start) {
				// The operator's watch saw the pods ready before the
				// benchmark's did: the step took less than the two
				// watches' skew, counted as nothing.
				early++
				took = append(took, 0)
				continue
			}
			if !okStart || !okEnd {
				if missing++; missing <= 3 {
					harness.Logf("bench: step %d (%d%%) of %s not placed: start seen %t (%s), route seen %t (%s); %s",
						i, w, k.Name, okStart, start.Format(time.StampMilli), okEnd, end.Format(time.StampMilli),
						b.watch.routedNotes(k))
				}
				continue
			}
			took = append(took, end.Sub(start))
		}
	}
	r := b.res
	r.RoutedCanaries, r.RoutedPromoted, r.RouteStepsUnplaced, r.RouteStepsEarly = n, promoted, missing, early
	r.RouteStep = newStats(took)
	if r.RouteFloor, err = b.routeFloor(ctx, n); err != nil {
		return fmt.Errorf("the bare client's route writes: %w", err)
	}
	return nil
}

// routeFloor times a bare client writing each of routedSteps' weights in
// turn on n routes of its own at once, sending to the routed canaries'
// Services: from each write to the route seen carrying the weight,
// accepted by the gateway for that generation.
func (b *appBench) routeFloor(ctx context.Context, n int) (stats, error) {
	floorName := func(i int) string { return fmt.Sprintf("floor-%05d", i) }
	err := parallel(ctx, n, b.cfg.Workers, func(i int) error {
		return b.bare.Create(ctx, routeTo(floorName(i), routedName(i)))
	})
	if err != nil {
		return stats{}, err
	}
	took := make([][]time.Duration, n)
	err = parallel(ctx, n, b.cfg.Workers, func(i int) error {
		key := types.NamespacedName{Namespace: nsRouted, Name: floorName(i)}
		backends := httproute.Backends{Stable: routedName(i), Canary: routedName(i) + "-canary"}
		for _, w := range routedSteps {
			start := time.Now()
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				r := &gatewayv1.HTTPRoute{}
				if err := b.bare.Get(ctx, key, r); err != nil {
					return err
				}
				rules, err := httproute.Targets(r, nil, backends)
				if err != nil {
					return err
				}
				httproute.SetWeight(r, rules, backends, w, false)
				return b.bare.Update(ctx, r)
			})
			if err != nil {
				return err
			}
			var at time.Time
			err = poll(ctx, time.Now().Add(time.Minute), func() (bool, error) {
				t, ok := b.watch.routeAt(key, w)
				at = t
				return ok, nil
			})
			if err != nil {
				return fmt.Errorf("route %s at %d%% never seen accepted: %w", key.Name, w, err)
			}
			took[i] = append(took[i], at.Sub(start))
		}
		return nil
	})
	if err != nil {
		return stats{}, err
	}
	var all []time.Duration
	for _, t := range took {
		all = append(all, t...)
	}
	if len(all) == 0 {
		return stats{}, errors.New("no route write measured")
	}
	return newStats(all), nil
}
