/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/bench/internal/cached"
	"github.com/example/platform-operator/test/harness"
)

// nsForeign is the namespace of the attack's Deployments.
const nsForeign = "attacker"

// targetForeignBytes is what one foreign labelled Deployment may cost the
// manager's steady heap (issue 31, C): a stub's metadata.
const targetForeignBytes = 2048

// watchListEnv is client-go's switch of its streaming list (the
// WatchListClient feature gate, on by default since client-go v0.35),
// read from the environment of the process: the manager has no flag for it.
const watchListEnv = "KUBE_FEATURE_" + string(clientfeatures.WatchListClient)

// foreignResult is figure 8: what the attack of issue 31 (item 2) costs the
// manager — Deployments of some 700 KB that carry the operator's labels,
// scaled to zero and owned by nothing.
type foreignResult struct {
	// Objects is how many foreign Deployments were created, each
	// ObjectBytes long as JSON; ReplicaSets how many the Deployment
	// controller made for them (each a copy of its Deployment's template,
	// with its labels, so foreign labelled objects of another kind).
	Objects     int `json:"objects"`
	ObjectBytes int `json:"objectBytes"`
	ReplicaSets int `json:"replicaSets"`
	// HeapBeforeMiB and HeapAfterMiB are the manager's live heap (right
	// after a forced collection; the median of three) before the objects
	// were created and once it had seen them; HeapPerObjectBytes their
	// difference per Deployment, its ReplicaSet included.
	HeapBeforeMiB      float64 `json:"heapBeforeMiB"`
	HeapAfterMiB       float64 `json:"heapAfterMiB"`
	HeapPerObjectBytes float64 `json:"heapPerObjectBytes"`
	RSSBeforeMiB       float64 `json:"rssBeforeMiB"`
	RSSAfterMiB        float64 `json:"rssAfterMiB"`
	// APIServerWatchList says whether the cluster's kube-apiserver serves
	// streaming lists (its WatchList feature gate, as its
	// kubernetes_feature_enabled metric says).
	APIServerWatchList bool `json:"apiServerWatchList"`
	// ColdStarts are the manager started with and without the objects,
	// with client-go's streaming list and without it.
	ColdStarts []foreignColdStart `json:"coldStarts"`
	// HeapBefore and HeapAfter are the manager's heap profiles (pprof,
	// after a collection) at the two readings, saved beside the JSON.
	HeapBefore, HeapAfter []byte `json:"-"`
}

// foreignColdStart is one cold start of the manager.
type foreignColdStart struct {
	// Objects is how many foreign Deployments were in the cluster.
	Objects int `json:"objects"`
	// Streaming says whether the manager ran with client-go's
	// WatchListClient on; Lists counts the LIST requests for Deployments the
	// API server answered during the start (0 when the initial list was a
	// stream, which is a WATCH).
	Streaming bool    `json:"streaming"`
	Lists     float64 `json:"deploymentLists"`
	// ReadySeconds is from the process's start to /readyz; PeakRSSMiB its
	// RSS high-water mark once idle, RSSMiB its RSS then and LiveHeapMiB
	// its live heap after a collection.
	ReadySeconds float64 `json:"readySeconds"`
	PeakRSSMiB   float64 `json:"peakRssMiB"`
	RSSMiB       float64 `json:"rssMiB"`
	LiveHeapMiB  float64 `json:"liveHeapMiB"`
}

// runForeign measures figure 8 on a cluster of its own, with one manager
// at a time: cold starts without the foreign objects (plain list, then
// streaming), the steady heap growth as the objects are created under the
// second manager, and cold starts with them (streaming, then plain list).
func runForeign(ctx context.Context, cfg config) (*foreignResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Read the benchmark's own feature gates before any manager is started
	// with the variable set, so that only the manager sees it.
	_ = clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	c, teardown, err := harness.StartCluster(ctx, fmt.Sprintf("bench-foreign-%d", time.Now().Unix()),
		harness.ClusterOptions{Nodes: 1, KwokctlArgs: []string{"--disable-qps-limits"}})
	if err != nil {
		return nil, err
	}
	defer func() { cancel(); teardown() }()
	res := &foreignResult{Objects: cfg.ForeignObjects}
	b := &bench{cfg: cfg, cluster: c, res: &results{}}
	restCfg := rest.CopyConfig(c.Config)
	restCfg.QPS, restCfg.Burst = float32(cfg.QPS), cfg.Burst
	if b.client, err = client.New(restCfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return nil, err
	}
	if res.APIServerWatchList, err = apiServerFeature(ctx, c.Config, "WatchList"); err != nil {
		return nil, err
	}
	if b.operator, err = harness.StartOperator(ctx, c, harness.OperatorOptions{Args: b.managerArgs()}); err != nil {
		return nil, err
	}
	defer b.operator.Stop()

	// Without the objects: the plain list first, then the streaming one,
	// whose manager stays to see the objects come.
	for _, streaming := range []bool{false, true} {
		cs, err := b.foreignColdStart(ctx, 0, streaming)
		if err != nil {
			return res, err
		}
		res.ColdStarts = append(res.ColdStarts, cs)
		if !streaming {
			b.manager.Kill(syscall.SIGTERM)
		}
	}
	before, err := b.medianLiveMemory(ctx)
	if err != nil {
		return res, err
	}
	if res.HeapBefore, err = b.heapProfile(ctx); err != nil {
		return res, err
	}
	harness.Logf("bench: foreign objects, creating %d Deployments of %d KB", cfg.ForeignObjects,
		foreignDeploymentBytes/1000)
	if res.ObjectBytes, res.ReplicaSets, err = b.createForeign(ctx, 0, cfg.ForeignObjects); err != nil {
		return res, err
	}
	after, err := b.medianLiveMemory(ctx)
	if err != nil {
		return res, err
	}
	if res.HeapAfter, err = b.heapProfile(ctx); err != nil {
		return res, err
	}
	res.HeapBeforeMiB, res.HeapAfterMiB = before.heap/(1<<20), after.heap/(1<<20)
	res.RSSBeforeMiB, res.RSSAfterMiB = before.rss/(1<<20), after.rss/(1<<20)
	res.HeapPerObjectBytes = (after.heap - before.heap) / float64(cfg.ForeignObjects)
	b.manager.Kill(syscall.SIGTERM)

	for _, streaming := range []bool{true, false} {
		cs, err := b.foreignColdStart(ctx, cfg.ForeignObjects, streaming)
		if err != nil {
			return res, err
		}
		res.ColdStarts = append(res.ColdStarts, cs)
		b.manager.Kill(syscall.SIGTERM)
	}
	return res, nil
}

// foreignColdStart starts a manager on the cluster as it is, with or
// without client-go's streaming list, and reads its memory once idle. The
// manager is left running.
func (b *bench) foreignColdStart(ctx context.Context, objects int, streaming bool) (foreignColdStart, error) {
	cs := foreignColdStart{Objects: objects, Streaming: streaming}
	harness.Logf("bench: foreign objects, cold start with %d of them, streaming list %t", objects, streaming)
	listsBefore, err := apiServerRequests(ctx, b.cluster.Config, "LIST", "deployments")
	if err != nil {
		return cs, err
	}
	// The manager inherits the benchmark's environment (StartReplica).
	if err := os.Setenv(watchListEnv, fmt.Sprint(streaming)); err != nil {
		return cs, err
	}
	err = b.startManager(ctx)
	_ = os.Unsetenv(watchListEnv)
	if err != nil {
		return cs, err
	}
	cs.ReadySeconds = time.Since(b.manager.Started).Seconds()
	live, err := b.liveMemory(ctx)
	if err != nil {
		return cs, err
	}
	mem, err := cached.ProcessMemory(b.manager.PID())
	if err != nil {
		return cs, err
	}
	listsAfter, err := apiServerRequests(ctx, b.cluster.Config, "LIST", "deployments")
	if err != nil {
		return cs, err
	}
	cs.Lists = listsAfter - listsBefore
	cs.PeakRSSMiB, cs.RSSMiB, cs.LiveHeapMiB = mem.Peak/(1<<20), mem.RSS/(1<<20), live.heap/(1<<20)
	return cs, nil
}

// medianLiveMemory is liveMemory's reading three times over, the median of
// each: the growth measured is a few hundred KiB, of the order of what the
// manager's other goroutines allocate between a collection and the scrape.
func (b *bench) medianLiveMemory(ctx context.Context) (memoryReading, error) {
	const readings = 3
	heaps, rsss := make([]float64, 0, readings), make([]float64, 0, readings)
	for range readings {
		r, err := b.liveMemory(ctx)
		if err != nil {
			return memoryReading{}, err
		}
		heaps, rsss = append(heaps, r.heap), append(rsss, r.rss)
	}
	slices.Sort(heaps)
	slices.Sort(rsss)
	return memoryReading{heap: heaps[1], rss: rsss[1]}, nil
}

// heapProfile is the manager's heap profile right after a collection.
func (b *bench) heapProfile(ctx context.Context) ([]byte, error) {
	return get(ctx, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", b.pprofPort))
}

// createForeign creates Deployments from..to-1 of the attack in nsForeign
// (the namespace with the first), carrying the operator's managed-by label,
// and waits until the Deployment controller has made a ReplicaSet for each.
// It returns the JSON size of one and the ReplicaSets counted.
func (b *bench) createForeign(ctx context.Context, from, to int) (int, int, error) {
	if from == 0 {
		if err := b.createNamespace(ctx, nsForeign); err != nil {
			return 0, 0, err
		}
	}
	labels := map[string]string{platformv1.ManagedByLabel: platformv1.ManagedByValue}
	data, err := json.Marshal(foreignDeployment(nsForeign, "size", labels))
	if err != nil {
		return 0, 0, err
	}
	// Few writers: each request carries 700 KB, and the two cores are
	// shared with the API server and etcd.
	err = parallel(ctx, to-from, 4, func(i int) error {
		return b.client.Create(ctx, foreignDeployment(nsForeign, fmt.Sprintf("big-%04d", from+i), labels))
	})
	if err != nil {
		return 0, 0, err
	}
	var sets int
	err = poll(ctx, time.Now().Add(10*time.Minute), func() (bool, error) {
		// Metadata only: the benchmark need not hold 140 MB of them.
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"))
		if err := b.client.List(ctx, &list, client.InNamespace(nsForeign)); err != nil {
			return false, err
		}
		sets = len(list.Items)
		return sets >= to, nil
	})
	if err != nil {
		return 0, sets, fmt.Errorf("waiting for %d ReplicaSets of the foreign Deployments (have %d): %w", to, sets, err)
	}
	return len(data), sets, nil
}

// apiServerMetrics reads the metrics of the cluster's kube-apiserver.
func apiServerMetrics(ctx context.Context, cfg *rest.Config) (map[string]*dto.MetricFamily, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("kube-apiserver /metrics: %s: %s", resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// apiServerFeature reports whether the kube-apiserver has a feature gate
// enabled.
func apiServerFeature(ctx context.Context, cfg *rest.Config, name string) (bool, error) {
	families, err := apiServerMetrics(ctx, cfg)
	if err != nil {
		return false, err
	}
	for _, m := range families["kubernetes_feature_enabled"].GetMetric() {
		if label(m, "name") == name {
			return m.GetGauge().GetValue() == 1, nil
		}
	}
	return false, fmt.Errorf("kube-apiserver reports no feature gate %s", name)
}

// apiServerRequests counts the requests of a verb for a resource the
// kube-apiserver has answered.
func apiServerRequests(ctx context.Context, cfg *rest.Config, verb, resource string) (float64, error) {
	families, err := apiServerMetrics(ctx, cfg)
	if err != nil {
		return 0, err
	}
	var n float64
	for _, m := range families["apiserver_request_total"].GetMetric() {
		if label(m, "verb") == verb && label(m, "resource") == resource {
			n += m.GetCounter().GetValue()
		}
	}
	return n, nil
}

// foreignRows are figure 8's rows: the steady heap growth per foreign
// labelled Deployment, and the cold starts with and without them.
func foreignRows(tw io.Writer, r *results) {
	f := r.Foreign
	if f == nil {
		fmt.Fprintf(tw, "8\tforeign labelled Deployments\tnot measured\t-\t-\n")
		return
	}
	row(tw, "8", fmt.Sprintf("heap growth per foreign labelled Deployment, %d of %d KB", f.Objects, f.ObjectBytes/1000),
		fmt.Sprintf("%.0f B (live heap %.1f -> %.1f MiB, RSS %.0f -> %.0f MiB; with their %d ReplicaSets)",
			f.HeapPerObjectBytes, f.HeapBeforeMiB, f.HeapAfterMiB, f.RSSBeforeMiB, f.RSSAfterMiB, f.ReplicaSets),
		fmt.Sprintf("<= %d B", targetForeignBytes), f.Objects > 0 && f.HeapPerObjectBytes <= targetForeignBytes)
	peak := func(objects int, streaming bool) (foreignColdStart, bool) {
		for _, cs := range f.ColdStarts {
			if cs.Objects == objects && cs.Streaming == streaming {
				return cs, true
			}
		}
		return foreignColdStart{}, false
	}
	for _, streaming := range []bool{true, false} {
		without, ok1 := peak(0, streaming)
		with, ok2 := peak(f.Objects, streaming)
		if !ok1 || !ok2 {
			continue
		}
		how := "streaming list (WatchListClient)"
		if !streaming {
			how = "plain list (WatchListClient=false)"
		}
		n := "8a"
		if !streaming {
			n = "8b"
		}
		fmt.Fprintf(tw, "%s\tcold start peak RSS, %s\twithout them %.0f MiB, with them %.0f MiB (+%.0f); "+
			"ready in %.1fs / %.1fs; live heap %.1f / %.1f MiB; %.0f / %.0f LISTs of Deployments\t-\t-\n",
			n, how, without.PeakRSSMiB, with.PeakRSSMiB, with.PeakRSSMiB-without.PeakRSSMiB,
			without.ReadySeconds, with.ReadySeconds, without.LiveHeapMiB, with.LiveHeapMiB, without.Lists, with.Lists)
	}
	server := "serves streaming lists (WatchList on)"
	if !f.APIServerWatchList {
		server = "serves no streaming list (WatchList off): the client falls back to a list"
	}
	fmt.Fprintf(tw, "\tthe cluster's kube-apiserver\t%s\t-\t-\n", server)
	fmt.Fprintf(tw, "\twhat the initial list costs\tplain: one LIST decoded whole before any transform "+
		"(the reflector pages by 500, and the watch cache serves its resourceVersion=0 list whole anyway), "+
		"so the peak grows with every object; streaming: each object transformed as it arrives, "+
		"so the peak is bounded\t-\t-\n")
}
