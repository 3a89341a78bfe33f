// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGCPercent_TheFlagUnlessGOGCIsSet(t *testing.T) {
	var o options
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.bindFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	if p, ok := gcPercent(o.gcPercent, noEnv); !ok || p != defaultGCPercent {
		t.Errorf("default: %d, %v; want %d applied", p, ok, defaultGCPercent)
	}
	if err := fs.Parse([]string{"--gc-percent=100"}); err != nil {
		t.Fatal(err)
	}
	if p, ok := gcPercent(o.gcPercent, noEnv); !ok || p != 100 {
		t.Errorf("--gc-percent=100: %d, %v; want 100 applied", p, ok)
	}
	gogc := func(k string) string {
		if k == "GOGC" {
			return "off"
		}
		return ""
	}
	if _, ok := gcPercent(o.gcPercent, gogc); ok {
		t.Error("GOGC is set, yet the flag would override it")
	}
}

// TestWorkers_AppDeploymentsHaveAsManyAsTheOtherControllers protects the
// canary analysis's timing: the benchmark measured the passes that record
// 100 canaries' measurements queueing for seconds behind 4 workers.
func TestWorkers_AppDeploymentsHaveAsManyAsTheOtherControllers(t *testing.T) {
	var o options
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.bindFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.appDeploymentWorkers < 16 {
		t.Errorf("--appdeployment-max-concurrent-reconciles defaults to %d, want at least 16", o.appDeploymentWorkers)
	}
}

// The manager says at start when its first lists are decoded whole, and
// only then.
func TestListNotice_OnlyWithoutStreamingLists(t *testing.T) {
	if msg := listNotice(true); msg != "" {
		t.Errorf("with streaming lists: %q, want nothing", msg)
	}
	if msg := listNotice(false); !strings.Contains(msg, "bounded only by what the API server lists") {
		t.Errorf("without streaming lists: %q, want it to say what bounds memory", msg)
	}
}

// syncs is a cache whose informers have synced when it says so.
type syncs struct{ synced bool }

func (s *syncs) WaitForCacheSync(context.Context) bool { return s.synced }

func TestCachesSynced_ReadyOnceTheFirstListsEndAndAfterwards(t *testing.T) {
	c := &syncs{}
	check := cachesSynced(c)
	req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
	if err := check(req); err == nil {
		t.Fatal("ready before the informers' first lists ended")
	}
	c.synced = true
	if err := check(req); err != nil {
		t.Fatalf("not ready once they ended: %v", err)
	}
	// A controller or a webhook reads a new kind: its informer lists, and
	// the replica must stay in its Service meanwhile.
	c.synced = false
	if err := check(req); err != nil {
		t.Fatalf("not ready while a new informer lists: %v", err)
	}
}
