// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package trafficsim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestBehaviourOf_TheImageTagChoosesHowRequestsFare(t *testing.T) {
	healthy := Behaviour{ErrorRatio: 0.001, Latency: 50 * time.Millisecond}
	bad := Behaviour{ErrorRatio: 0.1, Latency: 2 * time.Second}
	idle := Behaviour{Idle: true}
	for image, want := range map[string]Behaviour{
		"example.com/app:v1.2.4":                  healthy,
		"example.com/app:v1.2.5-bad":              bad,
		"example.com/app:bad":                     bad,
		"example.com/app:v1.2.6-idle":             idle,
		"example.com/app:v1-bad-idle":             bad,
		"example.com/kwok-unready/app:v1.2.5-bad": bad,
		"example.com/app:v1.2.5-bad@sha256:0123":  bad,
		// Only the tag counts: not a repository, a registry or a digest.
		"example.com/bad-app:v1.2.4":     healthy,
		"example.com/idle/app":           healthy,
		"localhost:5000/bad":             healthy,
		"localhost:5000/app":             healthy,
		"example.com/app@sha256:badidle": healthy,
		"":                               healthy,
	} {
		if diff := cmp.Diff(want, BehaviourOf(image)); diff != "" {
			t.Errorf("BehaviourOf(%q) (-want +got):\n%s", image, diff)
		}
	}
}

// pod builds a pod of app "web" in namespace "shop".
func pod(name, track, revision, image string, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: map[string]string{
			"app.kubernetes.io/name":        "web",
			"platform.example.com/track":    track,
			"platform.example.com/revision": revision,
		}},
		// The sidecar's image does not count: only the first container's.
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Image: image},
			{Name: "sidecar", Image: "example.com/proxy:bad"},
		}},
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: status},
	}
	return p
}

// series flattens what the simulator exports into one value per series:
// counters by name and labels, histograms as _count, _sum and one _bucket
// per upper bound.
func series(t *testing.T, s *Simulator) map[string]float64 {
	t.Helper()
	families, err := s.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if l.GetName() == "namespace" || l.GetName() == "app" {
					continue // the same in every test: shop, web
				}
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := func(suffix string, extra ...string) string {
				return f.GetName() + suffix + "{" + strings.Join(append(slices.Clone(labels), extra...), ",") + "}"
			}
			if c := m.GetCounter(); c != nil {
				out[key("")] = c.GetValue()
			}
			if h := m.GetHistogram(); h != nil {
				out[key("_count")] = float64(h.GetSampleCount())
				out[key("_sum")] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[key("_bucket", fmt.Sprintf("le=%g", b.GetUpperBound()))] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

// requests is what a group's counters should say.
func requests(track, revision string, ok, errors float64) map[string]float64 {
	return map[string]float64{
		"http_requests_total{code=200,revision=" + revision + ",track=" + track + "}": ok,
		"http_requests_total{code=500,revision=" + revision + ",track=" + track + "}": errors,
	}
}

// latencies is what a group's histogram should say when n requests took
// seconds each: every bucket from the one bounded by seconds up holds them
// all, every bucket below holds none.
func latencies(track, revision string, n int, seconds float64) map[string]float64 {
	labels := "revision=" + revision + ",track=" + track
	out := map[string]float64{
		"http_request_duration_seconds_count{" + labels + "}": float64(n),
		"http_request_duration_seconds_sum{" + labels + "}":   float64(n) * seconds,
	}
	for _, le := range []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 2.5, 5, 10} {
		var count float64
		if le >= seconds {
			count = float64(n)
		}
		out[fmt.Sprintf("http_request_duration_seconds_bucket{%s,le=%g}", labels, le)] = count
	}
	return out
}

// merge joins expected series.
func merge(parts ...map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, p := range parts {
		maps.Copy(out, p)
	}
	return out
}

// approx compares counter sums, which add float fractions.
var approx = cmpopts.EquateApprox(0, 1e-9)

func newSimulator(t *testing.T, o Options) *Simulator {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTick_RequestsFollowTheReadyPodsAndTheirTag(t *testing.T) {
	s := newSimulator(t, Options{})
	for _, p := range []*corev1.Pod{
		pod("stable-1", "stable", "r1", "example.com/app:v1.2.4", true),
		pod("stable-2", "stable", "r1", "example.com/app:v1.2.4", true),
		pod("stable-3", "stable", "r1", "example.com/app:v1.2.4", true),
		pod("stable-4", "stable", "r1", "example.com/app:v1.2.4", false),
		pod("canary-1", "canary", "r2", "example.com/app:v1.2.5-bad", true),
		pod("idle-1", "canary", "r3", "example.com/app:v1.2.6-idle", true),
	} {
		s.SetPod(p)
	}
	untracked := pod("other", "", "", "example.com/app:v1.2.5-bad", true)
	delete(untracked.Labels, "platform.example.com/track")
	s.SetPod(untracked)

	s.Tick(time.Second)
	s.Tick(time.Second)
	// The default 10 requests per second per ready pod, for 2 s: 3 ready
	// stable pods, 60 requests, 0.1 % failed, 0.05 s each; 1 bad canary
	// pod, 20 requests, 10 % failed, 2 s each; the idle pod none at all.
	want := merge(
		requests("stable", "r1", 59.94, 0.06), latencies("stable", "r1", 60, 0.05),
		requests("canary", "r2", 18, 2), latencies("canary", "r2", 20, 2),
	)
	if diff := cmp.Diff(want, series(t, s), approx); diff != "" {
		t.Fatalf("series after 2 s (-want +got):\n%s", diff)
	}

	// A stable pod becomes unready, the unready one ready, one more canary
	// pod comes: 3 stable and 2 canary pods serve the next second.
	s.SetPod(pod("stable-1", "stable", "r1", "example.com/app:v1.2.4", false))
	s.SetPod(pod("stable-4", "stable", "r1", "example.com/app:v1.2.4", true))
	s.SetPod(pod("canary-2", "canary", "r2", "example.com/app:v1.2.5-bad", true))
	s.Tick(time.Second)
	want = merge(
		requests("stable", "r1", 89.91, 0.09), latencies("stable", "r1", 90, 0.05),
		requests("canary", "r2", 36, 4), latencies("canary", "r2", 40, 2),
	)
	if diff := cmp.Diff(want, series(t, s), approx); diff != "" {
		t.Fatalf("series after 3 s (-want +got):\n%s", diff)
	}

	// The canary's pods go: so do its series, as a deleted pod's would.
	s.DeletePod(types.NamespacedName{Namespace: "shop", Name: "canary-1"})
	s.DeletePod(types.NamespacedName{Namespace: "shop", Name: "canary-2"})
	s.Tick(time.Second)
	want = merge(requests("stable", "r1", 119.88, 0.12), latencies("stable", "r1", 120, 0.05))
	if diff := cmp.Diff(want, series(t, s), approx); diff != "" {
		t.Fatalf("series after the canary's pods went (-want +got):\n%s", diff)
	}
}

func TestTick_FractionsOfARequestAreCountedAndObservedOnceWhole(t *testing.T) {
	s := newSimulator(t, Options{Rate: 5})
	s.SetPod(pod("canary-1", "canary", "r2", "example.com/app:v2-bad", true))

	// 5 requests per second for 0.3 s: 1.5 requests, of which 10 % failed.
	s.Tick(300 * time.Millisecond)
	want := merge(requests("canary", "r2", 1.35, 0.15), latencies("canary", "r2", 1, 2))
	if diff := cmp.Diff(want, series(t, s), approx); diff != "" {
		t.Fatalf("series after 0.3 s (-want +got):\n%s", diff)
	}
	// 0.3 s more: 3 requests in all, the half carried over now observed.
	s.Tick(300 * time.Millisecond)
	want = merge(requests("canary", "r2", 2.7, 0.3), latencies("canary", "r2", 3, 2))
	if diff := cmp.Diff(want, series(t, s), approx); diff != "" {
		t.Fatalf("series after 0.6 s (-want +got):\n%s", diff)
	}
}

func TestSetPod_OneLogLinePerChangeOfAGroup(t *testing.T) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) },
		funcr.Options{LogInfoLevel: ptr.To("")})
	s := newSimulator(t, Options{Log: log})

	s.SetPod(pod("stable-1", "stable", "r1", "example.com/app:v1.2.4", false))
	s.SetPod(pod("stable-1", "stable", "r1", "example.com/app:v1.2.4", true))
	// The same pod again, say a status update that changes nothing here.
	s.SetPod(pod("stable-1", "stable", "r1", "example.com/app:v1.2.4", true))
	// Moved to another revision: two groups change.
	s.SetPod(pod("stable-1", "stable", "r9", "example.com/app:v1.2.5-bad", true))
	s.DeletePod(types.NamespacedName{Namespace: "shop", Name: "stable-1"})
	s.DeletePod(types.NamespacedName{Namespace: "shop", Name: "stable-1"})

	const common = `"msg"="Group changed" "namespace"="shop" "app"="web" "track"="stable" `
	want := []string{
		common + `"revision"="r1" "pods"=1 "readyPods"=0 "image"="example.com/app:v1.2.4" ` +
			`"behaviour"="0.1% errors, 50ms latency"`,
		common + `"revision"="r1" "pods"=1 "readyPods"=1 "image"="example.com/app:v1.2.4" ` +
			`"behaviour"="0.1% errors, 50ms latency"`,
		common + `"revision"="r1" "pods"=0 "readyPods"=0 "image"="example.com/app:v1.2.4" ` +
			`"behaviour"="0.1% errors, 50ms latency"`,
		common + `"revision"="r9" "pods"=1 "readyPods"=1 "image"="example.com/app:v1.2.5-bad" ` +
			`"behaviour"="10% errors, 2s latency"`,
		common + `"revision"="r9" "pods"=0 "readyPods"=0 "image"="example.com/app:v1.2.5-bad" ` +
			`"behaviour"="10% errors, 2s latency"`,
	}
	// The two groups of one change are logged in map order.
	slices.Sort(lines)
	slices.Sort(want)
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
	if got := s.Groups(); len(got) != 0 {
		t.Errorf("groups left after every pod went: %v", got)
	}
}

func TestNew_RefusesNegativeRateAndTick(t *testing.T) {
	for _, o := range []Options{{Rate: -1}, {Tick: -time.Second}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}
