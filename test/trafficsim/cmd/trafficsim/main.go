// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command trafficsim serves the request metrics of the AppDeployment pods of
// a cluster whose pods serve nothing (kwok): see package trafficsim for what
// it simulates. `make run` starts it beside the manager and a Prometheus that
// scrapes it:
//
//	go build -o bin/trafficsim ./test/trafficsim/cmd/trafficsim
//	bin/trafficsim --kubeconfig "$(hack/kwok/cluster.sh kubeconfig platform-dev)"
//	curl -s 127.0.0.1:9102/metrics
//
// Scrape it with honor_labels: true, so that its namespace label is not
// renamed to exported_namespace where a scrape configuration adds its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example/platform-operator/test/trafficsim"
)

func main() {
	var (
		listen, kubeconfig string
		rate               float64
		tick               = trafficsim.DefaultTick
	)
	flag.StringVar(&listen, "listen", "127.0.0.1:9102", "The address to serve "+trafficsim.MetricsPath+" on.")
	flag.Float64Var(&rate, "rate", trafficsim.DefaultRate, "Requests per second that each ready pod gets.")
	flag.DurationVar(&tick, "tick", tick, "How often requests are added.")
	flag.StringVar(&kubeconfig, "kubeconfig", "",
		"The kubeconfig of the cluster whose pods to watch; $KUBECONFIG or ~/.kube/config when unset.")
	zapOpts := zap.Options{Development: true}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	log := zap.New(zap.UseFlagOptions(&zapOpts))

	if err := run(listen, kubeconfig, rate, tick, log); err != nil {
		fmt.Fprintf(os.Stderr, "trafficsim: %v\n", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM.
func run(listen, kubeconfig string, rate float64, tick time.Duration, log logr.Logger) error {
	// Zero would mean "the default" to the library; on the command line it
	// is more likely a mistake.
	if rate <= 0 || tick <= 0 {
		return fmt.Errorf("--rate (%v) and --tick (%s) must be positive", rate, tick)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	sim, err := trafficsim.New(trafficsim.Options{Rate: rate, Tick: tick, Log: log})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		select {
		case <-sim.Ready():
			log.Info("Serving metrics", "address", "http://"+l.Addr().String()+trafficsim.MetricsPath,
				"rate", rate, "tick", tick.String(), "apiServer", cfg.Host)
		case <-ctx.Done():
		}
	}()
	return sim.Serve(ctx, cfg, l)
}
