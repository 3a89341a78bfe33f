// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestQuantile_InterpolatesWithinTheBucket(t *testing.T) {
	// 100 observations: 50 up to 0.1 s, 40 more up to 0.2 s, 10 up to 1 s.
	buckets := []bucket{{0.1, 50}, {0.2, 90}, {1, 100}, {math.Inf(1), 100}}
	for _, tt := range []struct{ q, want float64 }{{0.5, 0.1}, {0.7, 0.15}, {0.95, 0.6}, {0.25, 0.05}} {
		if got := quantile(buckets, tt.q); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("quantile %.2f = %g, want %g", tt.q, got, tt.want)
		}
	}
	if got := quantile(nil, 0.99); got != 0 {
		t.Errorf("quantile of nothing = %g, want 0", got)
	}
}

func TestCapacity_FitsALineThroughThePoints(t *testing.T) {
	// 40 MiB, and 20 MiB and 10 CPU-seconds per 1,000 tasks, exactly.
	points := make([]curvePoint, 0, 3)
	for _, n := range []int{1000, 2000, 5000} {
		k := float64(n) / 1000
		points = append(points, curvePoint{Tasks: n, RSSMiB: 40 + 20*k, CPUSeconds: 10 * k})
	}
	c, ok := capacityOf(points)
	if !ok {
		t.Fatal("no capacity from three points")
	}
	if math.Abs(c.MiBPerKTask-20) > 1e-6 || math.Abs(c.BaseMiB-40) > 1e-6 || math.Abs(c.CPUPerKTask-10) > 1e-6 {
		t.Errorf("capacity %+v, want 20 MiB per 1000 tasks over 40 MiB and 10 CPU-seconds per 1000", c)
	}
	// 512 MiB with a fifth spare is 409.6 MiB: (409.6 - 40) / 20 thousand tasks.
	if c.TasksAt != 18480 {
		t.Errorf("tasks within %v MiB: %d, want 18480", c.LimitMiB, c.TasksAt)
	}
	if _, ok := capacityOf(points[:1]); ok {
		t.Error("a capacity from one point")
	}
}

func TestSaveCurve_DrawsTheNewestPointOfEachSize(t *testing.T) {
	dir := t.TempDir()
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	saved := map[string][]curvePoint{
		"a.json": {{Tasks: 1000, RSSMiB: 999, Measured: old}, {Tasks: 2000, RSSMiB: 80, Measured: old}},
		"b.json": {{Tasks: 1000, RSSMiB: 60, Measured: old.Add(time.Hour)}},
	}
	for name, points := range saved {
		data, err := json.Marshal(map[string]any{"curve": points})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	points, err := savedPoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 2 || points[1000].RSSMiB != 60 || points[2000].RSSMiB != 80 {
		t.Errorf("points %+v, want the newest of each size: 1000 at 60 MiB, 2000 at 80 MiB", points)
	}
	path, err := saveCurve(dir, []curvePoint{{Tasks: 5000, RSSMiB: 120, Measured: old.Add(2 * time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, new(struct{})); err != nil {
		t.Fatalf("the chart is not well-formed SVG: %v", err)
	}
	for _, pn := range curvePanels {
		if !strings.Contains(string(data), pn.title) {
			t.Errorf("the chart has no panel %q", pn.title)
		}
	}
}

func TestFlatness_ComparesEachSizeWithItsHalf(t *testing.T) {
	at := time.Date(2026, 12, 1, 5, 21, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		points  []curvePoint
		earlier map[int]curvePoint
		ok      bool
		says    string
	}{
		{"flat", []curvePoint{{Tasks: 5000, RSSMiB: 150}, {Tasks: 10000, RSSMiB: 300}}, nil, true, "= 2.00"},
		{"grows faster than the tasks", []curvePoint{{Tasks: 5000, RSSMiB: 150}, {Tasks: 10000, RSSMiB: 320}}, nil,
			false, "= 2.13"},
		{"half from an earlier run", []curvePoint{{Tasks: 10000, RSSMiB: 300}},
			map[int]curvePoint{5000: {Tasks: 5000, RSSMiB: 150, Measured: at}}, true, "measured earlier (2026-12-01 05:21)"},
		{"this run's half wins", []curvePoint{{Tasks: 5000, RSSMiB: 150}, {Tasks: 10000, RSSMiB: 300}},
			map[int]curvePoint{5000: {Tasks: 5000, RSSMiB: 100, Measured: at}}, true, "5000 tasks 150 MiB = 2.00"},
		{"no half", []curvePoint{{Tasks: 1000, RSSMiB: 80}, {Tasks: 5000, RSSMiB: 150}}, nil, false, "no size"},
	} {
		says, ok := flatness(tt.points, tt.earlier)
		if ok != tt.ok || !strings.Contains(says, tt.says) {
			t.Errorf("%s: %q, met %v; want met %v and %q", tt.name, says, ok, tt.ok, tt.says)
		}
	}
}
