// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/bench/internal/cached"
	"github.com/example/platform-operator/test/harness"
)

// nsForeign is the namespace of the attack's Deployments.
const nsForeign = "attacker"

// targetForeignBytes is what one foreign 700 KB object may cost the
// manager's steady heap (issue 42, B, for objects owned by nothing and for
// those claiming an AppDeployment alike): a stub's metadata. Each foreign
// Deployment brings a second such object, the ReplicaSet the Deployment
// controller makes from its template; the rows give both figures.
const targetForeignBytes = 2048

// targetColdStartRatio bounds the peak RSS of a cold start with the
// foreign objects present, streaming lists on, against the peak without
// them (issue 42, B).
const targetColdStartRatio = 1.5

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
	// after two forced collections; the median of five) before the objects
	// were created and once it had seen them. HeapDoubledMiB is the live
	// heap, and RSSDoubledMiB the RSS, of the manager reading the slope
	// once Objects more were created (2×Objects in all): it records every
	// allocation, which both carry.
	HeapBeforeMiB  float64 `json:"heapBeforeMiB"`
	HeapAfterMiB   float64 `json:"heapAfterMiB"`
	HeapDoubledMiB float64 `json:"heapDoubledMiB"`
	// HeapPerObjectBytes is the steady growth per Deployment, its
	// ReplicaSet included: the growth from Objects to 2×Objects divided by
	// Objects, the slope, which leaves out what the first large object
	// costs once and no later one adds. It is read from the heap profile
	// of a manager that records every allocation (the bytes of the live
	// objects, exactly); LiveHeapPerObjectBytes is the same slope of its
	// live heap, which also counts what other goroutines hold at each
	// collection, and LiveHeapResolutionBytes the spread of that. HeapFixedBytes is that once-only
	// cost: the growth to the first Objects less Objects × the slope (the
	// watch decoders' frame buffers, grown to the largest object seen, as
	// the heap profiles beside the JSON show).
	HeapPerObjectBytes      float64 `json:"heapPerObjectBytes"`
	LiveHeapPerObjectBytes  float64 `json:"liveHeapPerObjectBytes"`
	LiveHeapResolutionBytes float64 `json:"liveHeapResolutionBytes"`
	HeapFixedBytes          float64 `json:"heapFixedBytes"`
	// ClaimPerObjectBytes and ClaimResolutionBytes are the same slope for
	// Deployments that also claim to be the operator's: an owner reference
	// with controller true to the tenant's own AppDeployment (its real
	// UID), under names the operator does not give (issue 42, item 2).
	// ClaimFloorPerObjectBytes and ClaimFloorResolutionBytes are the bare
	// client's slope for them.
	ClaimPerObjectBytes       float64 `json:"claimPerObjectBytes"`
	ClaimResolutionBytes      float64 `json:"claimResolutionBytes"`
	ClaimFloorPerObjectBytes  float64 `json:"claimFloorPerObjectBytes"`
	ClaimFloorResolutionBytes float64 `json:"claimFloorResolutionBytes"`
	// HeapResolutionBytes is how finely the slope is read: the larger
	// spread of the five profiles at Objects and at 2×Objects, per object.
	// The figure is met only when the slope plus it is within the target,
	// so that noise cannot meet it.
	HeapResolutionBytes float64 `json:"heapResolutionBytes"`
	// FloorPerObjectBytes is the same slope for a bare client that keeps
	// what the manager's cache keeps, with the same selection and
	// transforms and nothing else (test/bench/cachefloor, run at Objects
	// and at 2×Objects, its heap read after a collection; the median of
	// three runs each), FloorResolutionBytes its spread per object: what
	// holding a stub of each object costs at the least.
	FloorPerObjectBytes  float64 `json:"floorPerObjectBytes"`
	FloorResolutionBytes float64 `json:"floorResolutionBytes"`
	RSSBeforeMiB         float64 `json:"rssBeforeMiB"`
	RSSAfterMiB          float64 `json:"rssAfterMiB"`
	RSSDoubledMiB        float64 `json:"rssDoubledMiB"`
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
	// SlopeHeaps are the heap profiles, every allocation recorded, that the
	// slopes are read from: the manager's and the floor's at each count,
	// by name, saved beside the JSON. A diff of two says where each
	// object's bytes go.
	SlopeHeaps map[string][]byte `json:"-"`
}

// foreignColdStart is one cold start of the manager.
type foreignColdStart struct {
	// Objects is how many foreign Deployments were in the cluster, of each
	// kind (unowned, and claiming the tenant's AppDeployment).
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
// streaming), the heap growth as the objects are created under the second
// manager, cold starts with them (plain list, then streaming), and the
// growth as as many more are created under a last manager that records
// every allocation — the slope.
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
	before, _, err := b.medianLiveMemory(ctx)
	if err != nil {
		return res, err
	}
	if res.HeapBefore, err = b.heapProfile(ctx); err != nil {
		return res, err
	}
	harness.Logf("bench: foreign objects, creating %d Deployments of %d KB", cfg.ForeignObjects,
		foreignDeploymentBytes/1000)
	if res.ObjectBytes, res.ReplicaSets, err = b.createForeign(ctx, "big", 0, cfg.ForeignObjects, nil); err != nil {
		return res, err
	}
	after, _, err := b.medianLiveMemory(ctx)
	if err != nil {
		return res, err
	}
	if res.HeapAfter, err = b.heapProfile(ctx); err != nil {
		return res, err
	}
	// The same number again, claiming the tenant's own AppDeployment: the
	// cold starts below have both kinds, and the slope reads each.
	claim, err := b.claimedOwner(ctx)
	if err != nil {
		return res, err
	}
	harness.Logf("bench: foreign objects, creating %d Deployments claiming AppDeployment %s",
		cfg.ForeignObjects, claim.Name)
	if _, _, err = b.createForeign(ctx, "claim", 0, cfg.ForeignObjects, claim); err != nil {
		return res, err
	}
	b.manager.Kill(syscall.SIGTERM)

	// With the objects: the plain list, then the streaming one.
	for _, streaming := range []bool{false, true} {
		cs, err := b.foreignColdStart(ctx, cfg.ForeignObjects, streaming)
		if err != nil {
			return res, err
		}
		res.ColdStarts = append(res.ColdStarts, cs)
		b.manager.Kill(syscall.SIGTERM)
	}

	// The slope is read on a manager of its own that records every
	// allocation (GODEBUG=memprofilerate=1; its cold start is none of the
	// figures above): its heap profile then counts the bytes of every live
	// object exactly, where the live heap also counts whatever other
	// goroutines hold at the collection, some hundred KiB that come and go,
	// of the order of the growth measured.
	if err := b.startProfiledManager(ctx); err != nil {
		return res, err
	}
	restarted, spread1, err := b.medianLiveMemory(ctx)
	if err != nil {
		return res, err
	}
	if err := b.saveSlopeHeap(ctx, res, "manager-1-restarted"); err != nil {
		return res, err
	}
	floor1, floorSpread1, err := b.medianFloorHeap(ctx, res, "floor-1")
	if err != nil {
		return res, err
	}
	harness.Logf("bench: foreign objects, creating %d more", cfg.ForeignObjects)
	if _, _, err = b.createForeign(ctx, "big", cfg.ForeignObjects, 2*cfg.ForeignObjects, nil); err != nil {
		return res, err
	}
	doubled, spread2, err := b.medianLiveMemory(ctx)
	if err != nil {
		return res, err
	}
	if err := b.saveSlopeHeap(ctx, res, "manager-2-doubled"); err != nil {
		return res, err
	}
	// The floor's second reading is taken here, before the claiming
	// objects double too, so that each of its slopes counts one kind.
	floor2, floorSpread2, err := b.medianFloorHeap(ctx, res, "floor-2")
	if err != nil {
		return res, err
	}
	harness.Logf("bench: foreign objects, creating %d more claiming AppDeployment %s", cfg.ForeignObjects, claim.Name)
	if _, _, err = b.createForeign(ctx, "claim", cfg.ForeignObjects, 2*cfg.ForeignObjects, claim); err != nil {
		return res, err
	}
	claimed, spread3, err := b.medianLiveMemory(ctx)
	if err != nil {
		return res, err
	}
	if err := b.saveSlopeHeap(ctx, res, "manager-3-claimed"); err != nil {
		return res, err
	}
	floor3, floorSpread3, err := b.medianFloorHeap(ctx, res, "floor-3")
	if err != nil {
		return res, err
	}
	b.manager.Kill(syscall.SIGTERM)
	res.HeapBeforeMiB, res.HeapAfterMiB = before.heap/(1<<20), after.heap/(1<<20)
	res.HeapDoubledMiB = doubled.heap / (1 << 20)
	res.RSSBeforeMiB, res.RSSAfterMiB, res.RSSDoubledMiB = before.rss/(1<<20), after.rss/(1<<20), doubled.rss/(1<<20)
	n := float64(cfg.ForeignObjects)
	res.HeapPerObjectBytes = (doubled.profiled - restarted.profiled) / n
	res.HeapResolutionBytes = max(spread1.profiled, spread2.profiled) / n
	res.LiveHeapPerObjectBytes = (doubled.heap - restarted.heap) / n
	res.LiveHeapResolutionBytes = max(spread1.heap, spread2.heap) / n
	res.HeapFixedBytes = (after.heap - before.heap) - n*res.HeapPerObjectBytes
	res.ClaimPerObjectBytes = (claimed.profiled - doubled.profiled) / n
	res.ClaimResolutionBytes = max(spread2.profiled, spread3.profiled) / n
	res.ClaimFloorPerObjectBytes = (floor3 - floor2) / n
	res.ClaimFloorResolutionBytes = max(floorSpread2, floorSpread3) / n
	res.FloorPerObjectBytes = (floor2 - floor1) / n
	res.FloorResolutionBytes = max(floorSpread1, floorSpread2) / n
	return res, nil
}

// medianFloorHeap runs the bare client (cacheFloor) three times on the
// cluster as it is, recording every allocation as the manager the slope is
// read on does, and returns the median of the bytes its heap profiles count
// in use after a collection, and their spread.
func (b *bench) medianFloorHeap(ctx context.Context, res *foreignResult, name string) (float64, float64, error) {
	const readings = 3
	heaps := make([]float64, 0, readings)
	profiles := map[float64][]byte{}
	for range readings {
		r, profile, err := b.profiledCacheFloor(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("bare client floor: %w", err)
		}
		if r.ProfiledInUseBytes == 0 {
			return 0, 0, fmt.Errorf("bare client floor: no heap profile in its reading")
		}
		heaps = append(heaps, r.ProfiledInUseBytes)
		profiles[r.ProfiledInUseBytes] = profile
	}
	slices.Sort(heaps)
	res.saveSlopeHeap(name, profiles[heaps[readings/2]])
	return heaps[readings/2], heaps[readings-1] - heaps[0], nil
}

// saveSlopeHeap keeps the manager's heap profile now as name.
func (b *bench) saveSlopeHeap(ctx context.Context, res *foreignResult, name string) error {
	profile, err := b.heapProfile(ctx)
	if err != nil {
		return err
	}
	res.saveSlopeHeap(name, profile)
	return nil
}

// saveSlopeHeap keeps profile as name in r.SlopeHeaps.
func (r *foreignResult) saveSlopeHeap(name string, profile []byte) {
	if r.SlopeHeaps == nil {
		r.SlopeHeaps = map[string][]byte{}
	}
	r.SlopeHeaps[name] = profile
}

// foreignMet says whether a slope of figure 8 is met: read at its worst
// (plus its resolution), it is within the target, or within 10 % of the
// bare client's slope for the same objects read at its best (less its
// own).
func foreignMet(objects int, slope, resolution, floorSlope, floorResolution float64) bool {
	worst := slope + resolution
	floor := floorSlope - floorResolution
	return objects > 0 && (worst <= targetForeignBytes || (floor > 0 && worst <= 1.1*floor))
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

// medianLiveMemory is liveMemory's reading five times over: the median of
// each figure, and the spread of the heap readings (largest less
// smallest), live heap and profiled.
//
// Before each reading it touches one foreign Deployment and one foreign
// ReplicaSet, when there are any. A watch decodes each event into a buffer
// grown to the largest object it has seen (1 MiB for one of these), and
// drops it when the watch restarts, every five to ten minutes: without the
// touch, a reading would hold both buffers or either or neither as the
// watches happen to have restarted, 2 MiB of noise in a growth of some
// hundred KiB. With it, every reading holds both.
func (b *bench) medianLiveMemory(ctx context.Context) (median, spread memoryReading, err error) {
	const readings = 5
	heaps, rsss, profiled := make([]float64, 0, readings), make([]float64, 0, readings), make([]float64, 0, readings)
	for i := range readings {
		if err := b.touchForeign(ctx, i); err != nil {
			return median, spread, err
		}
		r, err := b.liveMemory(ctx)
		if err != nil {
			return median, spread, err
		}
		heaps, rsss, profiled = append(heaps, r.heap), append(rsss, r.rss), append(profiled, r.profiled)
	}
	harness.Logf("bench: foreign objects, live heap readings %.0f, profiled %.0f", heaps, profiled)
	for _, xs := range [][]float64{heaps, rsss, profiled} {
		slices.Sort(xs)
	}
	median = memoryReading{heap: heaps[readings/2], rss: rsss[readings/2], profiled: profiled[readings/2]}
	spread = memoryReading{heap: heaps[readings-1] - heaps[0], profiled: profiled[readings-1] - profiled[0]}
	return median, spread, nil
}

// startProfiledManager starts a manager, with client-go's streaming list,
// that records every allocation in its heap profile.
func (b *bench) startProfiledManager(ctx context.Context) error {
	harness.Logf("bench: foreign objects, a manager recording every allocation for the slope")
	for k, v := range map[string]string{watchListEnv: "true", "GODEBUG": "memprofilerate=1"} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	err := b.startManager(ctx)
	_ = os.Unsetenv(watchListEnv)
	_ = os.Unsetenv("GODEBUG")
	return err
}

// touchForeign annotates the first foreign Deployment and its ReplicaSet,
// if they exist, so that the watches of both kinds see an object of the
// attack's size again.
func (b *bench) touchForeign(ctx context.Context, i int) error {
	patch := client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"annotations":{"bench.platform.example.com/touch":"%d"}}}`, i))
	var sets metav1.PartialObjectMetadataList
	sets.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"))
	if err := b.client.List(ctx, &sets, client.InNamespace(nsForeign), client.MatchingLabels{
		"example.com/attack": "big-0000"}); err != nil || len(sets.Items) == 0 {
		return client.IgnoreNotFound(err)
	}
	set := sets.Items[0]
	set.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	deployment := &metav1.PartialObjectMetadata{}
	deployment.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	deployment.Namespace, deployment.Name = nsForeign, "big-0000"
	for _, obj := range []*metav1.PartialObjectMetadata{deployment, &set} {
		if err := b.client.Patch(ctx, obj, patch); err != nil {
			return fmt.Errorf("touch %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.Name, err)
		}
	}
	return nil
}

// heapProfile is the manager's heap profile right after a collection.
func (b *bench) heapProfile(ctx context.Context) ([]byte, error) {
	return get(ctx, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", b.pprofPort))
}

// createForeign creates Deployments prefix-from..prefix-(to-1) of the
// attack in nsForeign (the namespace with the first unowned one), carrying
// the operator's managed-by label and, with owner, that controller
// reference, and waits until the Deployment controller has made a
// ReplicaSet for each. It returns the JSON size of one and the ReplicaSets
// counted.
func (b *bench) createForeign(ctx context.Context, prefix string, from, to int,
	owner *metav1.OwnerReference) (int, int, error) {
	if from == 0 && owner == nil {
		if err := b.createNamespace(ctx, nsForeign); err != nil {
			return 0, 0, err
		}
	}
	labels := map[string]string{platformv1.ManagedByLabel: platformv1.ManagedByValue}
	deployment := func(name string) *appsv1.Deployment {
		d := foreignDeployment(nsForeign, name, labels)
		if owner != nil {
			d.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return d
	}
	data, err := json.Marshal(deployment("size"))
	if err != nil {
		return 0, 0, err
	}
	// Few writers: each request carries 700 KB, and the two cores are
	// shared with the API server and etcd.
	err = parallel(ctx, to-from, 4, func(i int) error {
		return b.client.Create(ctx, deployment(fmt.Sprintf("%s-%04d", prefix, from+i)))
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
		sets = 0
		for _, rs := range list.Items {
			if strings.HasPrefix(rs.Name, prefix+"-") {
				sets++
			}
		}
		return sets >= to, nil
	})
	if err != nil {
		return 0, sets, fmt.Errorf("waiting for %d ReplicaSets of the foreign Deployments (have %d): %w", to, sets, err)
	}
	return len(data), sets, nil
}

// claimedOwner creates the tenant's own AppDeployment in nsForeign, which
// the operator serves, and returns a controller reference to it, its real
// UID: what a tenant puts on objects to claim they are its children.
func (b *bench) claimedOwner(ctx context.Context) (*metav1.OwnerReference, error) {
	ad := &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsForeign, Name: "shop"},
		Spec: platformv1.AppDeploymentSpec{Image: "registry.example.com/shop:v1.0.0", Replicas: ptr.To(int32(1)),
			Strategy: platformv1.Strategy{Type: platformv1.StrategyRolling}},
	}
	if err := b.client.Create(ctx, ad); err != nil {
		return nil, fmt.Errorf("create the tenant's AppDeployment: %w", err)
	}
	return metav1.NewControllerRef(ad, platformv1.GroupVersion.WithKind("AppDeployment")), nil
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
	// Each Deployment is two foreign objects of its size: itself and its
	// ReplicaSet (createForeign waits for every one).
	per := 1.0
	if f.Objects > 0 && f.ReplicaSets >= f.Objects {
		per = float64(f.Objects) / float64(f.Objects+f.ReplicaSets)
	}
	row(tw, "8", fmt.Sprintf("heap growth per foreign %d KB object, unowned, %d -> %d Deployments with their ReplicaSets",
		f.ObjectBytes/1000, f.Objects, 2*f.Objects),
		fmt.Sprintf("%.0f B ± %.0f B (%.0f B ± %.0f B per Deployment with its ReplicaSet), in the heap profile of a "+
			"manager recording every allocation (its live heap and RSS, %.0f B ± %.0f B per Deployment and %.0f MiB, "+
			"carry the recording); live heap %.1f -> %.1f MiB and RSS %.0f -> %.0f MiB at 0 and %d",
			per*f.HeapPerObjectBytes, per*f.HeapResolutionBytes, f.HeapPerObjectBytes, f.HeapResolutionBytes,
			f.LiveHeapPerObjectBytes, f.LiveHeapResolutionBytes,
			f.RSSDoubledMiB, f.HeapBeforeMiB, f.HeapAfterMiB, f.RSSBeforeMiB, f.RSSAfterMiB, f.Objects),
		fmt.Sprintf("<= %d B, or 1.1 x the floor", targetForeignBytes),
		foreignMet(f.Objects, per*f.HeapPerObjectBytes, per*f.HeapResolutionBytes,
			per*f.FloorPerObjectBytes, per*f.FloorResolutionBytes))
	fmt.Fprintf(tw, "8\tfloor: a bare client keeping the same stubs (cachefloor)\t%.0f B ± %.0f B per object "+
		"(%.0f B ± %.0f B per Deployment with its ReplicaSet), in its heap profiles (every allocation recorded)\t-\t-\n",
		per*f.FloorPerObjectBytes, per*f.FloorResolutionBytes, f.FloorPerObjectBytes, f.FloorResolutionBytes)
	row(tw, "8c", fmt.Sprintf("heap growth per foreign object claiming the tenant's AppDeployment, %d -> %d Deployments",
		f.Objects, 2*f.Objects),
		fmt.Sprintf("%.0f B ± %.0f B (%.0f B ± %.0f B per Deployment with its ReplicaSet), in the same heap profiles; "+
			"the floor's %.0f B ± %.0f B per object",
			per*f.ClaimPerObjectBytes, per*f.ClaimResolutionBytes, f.ClaimPerObjectBytes, f.ClaimResolutionBytes,
			per*f.ClaimFloorPerObjectBytes, per*f.ClaimFloorResolutionBytes),
		fmt.Sprintf("<= %d B, or 1.1 x the floor", targetForeignBytes),
		foreignMet(f.Objects, per*f.ClaimPerObjectBytes, per*f.ClaimResolutionBytes, per*f.ClaimFloorPerObjectBytes,
			per*f.ClaimFloorResolutionBytes))
	fmt.Fprintf(tw, "8\tonce, whatever the count: the watch decoders' buffers\t%.0f KiB (growth to the first %d less "+
		"%d x the slope; a buffer per watched kind, grown to the largest object, freed when the watch restarts)\t-\t-\n",
		f.HeapFixedBytes/1024, f.Objects, f.Objects)
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
		target, met := "-", "-"
		if streaming {
			target = fmt.Sprintf("<= %.1f x without", targetColdStartRatio)
			met = fmt.Sprint(with.PeakRSSMiB <= targetColdStartRatio*without.PeakRSSMiB)
			if met == "true" {
				met = "yes"
			} else {
				met = "no"
			}
		}
		fmt.Fprintf(tw, "%s\tcold start peak RSS, %s\twithout them %.0f MiB, with %d of each %.0f MiB (%.2f x); "+
			"ready in %.1fs / %.1fs; live heap %.1f / %.1f MiB; %.0f / %.0f LISTs of Deployments\t%s\t%s\n",
			n, how, without.PeakRSSMiB, f.Objects, with.PeakRSSMiB, with.PeakRSSMiB/without.PeakRSSMiB,
			without.ReadySeconds, with.ReadySeconds, without.LiveHeapMiB, with.LiveHeapMiB, without.Lists, with.Lists,
			target, met)
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
