// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/example/platform-operator/test/harness"
)

// runsPerTask is how many finished runs each task of the growth curve has:
// the history a CronJob keeps of a task that runs a few times a day.
const runsPerTask = 4

// curvePoint is the cost of one size of cluster, measured on a cluster and
// a manager of its own: N tasks created at once, then runsPerTask finished
// runs each.
type curvePoint struct {
	Tasks int `json:"tasks"`
	Runs  int `json:"runs"`
	// ConvergenceSeconds is the time from the first create to the last task
	// Ready; BaselineSeconds a bare client's for the same writes.
	ConvergenceSeconds float64 `json:"convergenceSeconds"`
	BaselineSeconds    float64 `json:"baselineSeconds"`
	// Ratio is ConvergenceSeconds over BaselineSeconds; FloorRatio over
	// the bare client's time through the operator's admission (figure 1's
	// floor), measured in the same run.
	Ratio      float64 `json:"ratio,omitempty"`
	FloorRatio float64 `json:"floorRatio,omitempty"`
	// WritesPerTask is the manager's writes per new task; Writes all its
	// writes of the point, the runs' included.
	WritesPerTask float64 `json:"managerWritesPerTask"`
	Writes        float64 `json:"managerWrites"`
	// WritesBy is Writes by "verb resource[/subresource]".
	WritesBy map[string]float64 `json:"managerWritesBy,omitempty"`
	// RSSMiB and LiveHeapMiB are the manager's memory once it is idle with
	// every task and run in its cache.
	RSSMiB      float64 `json:"rssMiB"`
	LiveHeapMiB float64 `json:"liveHeapMiB"`
	// CPUSeconds is the manager's CPU time from its start until it is idle
	// with every run recorded.
	CPUSeconds float64 `json:"cpuSeconds"`
	// ReconcileP99 is the p99 of every reconcile of the point, all
	// controllers, interpolated in the histogram's bucket.
	ReconcileP99 float64 `json:"reconcileP99Seconds"`
	// ColdStartSeconds is a new manager's time to ready with every task and
	// run in place (figure 5 at this size), ColdStartFloorSeconds a bare
	// client's cache sync of the same objects, and ColdStartWrites the
	// writes of the full reconcile that follows.
	ColdStartSeconds      float64 `json:"coldStartSeconds,omitempty"`
	ColdStartFloorSeconds float64 `json:"coldStartFloorSeconds,omitempty"`
	ColdStartWrites       float64 `json:"coldStartWrites"`
	// Measured is when the point was measured, so the newest of a size wins
	// when the chart is drawn from several runs.
	Measured time.Time `json:"measured"`
}

// runCurve measures each size of cfg.Curve, one after the other, each on a
// cluster of its own, so a point does not carry what the one before it left.
// The size of the memory figure (MemoryTasks tasks, MemoryRuns runs) is that
// figure too: when res did not measure it, it takes the curve's.
func runCurve(ctx context.Context, cfg config, res *results) ([]curvePoint, error) {
	points := make([]curvePoint, 0, len(cfg.Curve))
	for _, n := range cfg.Curve {
		pc := cfg
		pc.Tasks, pc.MemoryTasks, pc.MemoryRuns, pc.MaxSizeTasks = n, n, runsPerTask*n, 0
		pc.Suites = []string{suiteConvergence, suiteMemory, suiteColdStart}
		harness.Logf("bench: growth curve, %d tasks and %d runs", n, pc.MemoryRuns)
		r, err := run(ctx, pc)
		if err != nil {
			return points, fmt.Errorf("%d tasks: %w", n, err)
		}
		c, m, cold := r.Convergence, r.Memory, r.ColdStart
		res.Duplicates, res.RunsChecked = append(res.Duplicates, r.Duplicates...), true
		if res.Memory.Tasks == 0 && m.Tasks == cfg.MemoryTasks && m.Runs == cfg.MemoryRuns {
			res.Memory, res.HeapProfile = m, r.HeapProfile
		}
		points = append(points, curvePoint{
			Tasks: n, Runs: m.Runs,
			ConvergenceSeconds: c.OperatorSeconds, BaselineSeconds: c.BaselineSeconds,
			Ratio: c.Ratio, FloorRatio: c.FloorRatio,
			ColdStartSeconds: cold.ReadySeconds, ColdStartFloorSeconds: cold.FloorSeconds, ColdStartWrites: cold.Writes,
			WritesPerTask: c.ManagerWritesPer, Writes: m.ManagerWrites, WritesBy: m.ManagerWritesBy,
			RSSMiB: m.RSSMiB, LiveHeapMiB: m.LiveHeapMiB,
			CPUSeconds: m.ManagerCPUSeconds, ReconcileP99: m.ReconcileP99Seconds,
			Measured: time.Now().UTC(),
		})
	}
	return points, nil
}

// capacity is what one more task (with its runs) costs the manager, from a
// straight line through the curve's points, and what a manager with a given
// memory limit serves by it.
type capacity struct {
	// MiBPerKTask and BaseMiB are the line of RSS over tasks: MiB per 1,000
	// tasks and the intercept.
	MiBPerKTask float64 `json:"rssMiBPer1000Tasks"`
	BaseMiB     float64 `json:"rssBaseMiB"`
	// CPUPerKTask is CPU-seconds per 1,000 tasks created and their runs
	// recorded.
	CPUPerKTask float64 `json:"cpuSecondsPer1000Tasks"`
	// TasksAt is how many tasks a manager serves within LimitMiB with a
	// fifth of it to spare, by the RSS line.
	LimitMiB float64 `json:"limitMiB"`
	TasksAt  int     `json:"tasksWithinLimit"`
}

// capacityLimitMiB is the memory limit the capacity statement is made for:
// the Helm chart's and the kustomize manager's default.
const capacityLimitMiB = 512

// capacityOf fits the points with straight lines; it needs two sizes.
func capacityOf(points []curvePoint) (capacity, bool) {
	if len(points) < 2 {
		return capacity{}, false
	}
	n, rss, cpu := make([]float64, len(points)), make([]float64, len(points)), make([]float64, len(points))
	for i, p := range points {
		n[i], rss[i], cpu[i] = float64(p.Tasks)/1000, p.RSSMiB, p.CPUSeconds
	}
	base, slope := stat.LinearRegression(n, rss, nil, false)
	_, cpuSlope := stat.LinearRegression(n, cpu, nil, false)
	c := capacity{MiBPerKTask: slope, BaseMiB: base, CPUPerKTask: cpuSlope, LimitMiB: capacityLimitMiB}
	if slope > 0 {
		c.TasksAt = int((capacityLimitMiB*0.8 - base) / slope * 1000)
	}
	return c, true
}

// Targets of the growth curve (issue 35): the convergence ratio at every
// point; memory per task flat, the RSS of a size at most
// curveFlatness times what its share of the size half as large would be
// (10,000 tasks at most 2.1 times 5,000); and a cold start at every point
// within curveColdStartSec with no write.
const (
	curveFlatness     = 1.05
	curveColdStartSec = 20
)

// curveRows are the growth curve's rows: one per size, the capacity the
// line through them gives, and the curve's targets.
func curveRows(tw io.Writer, r *results) {
	if len(r.Curve) == 0 {
		fmt.Fprintf(tw, "6\tgrowth curve\tno point measured\t-\t-\n")
		return
	}
	for _, p := range r.Curve {
		fmt.Fprintf(tw, "6\tgrowth: %d tasks, %d runs\tconverge %.1fs (bare %.1fs = %.2f, floor ratio %.2f), "+
			"%.2f writes per task, %.0f writes in all; RSS %.0f MiB, live heap %.0f MiB; CPU %.0fs; reconcile p99 %.3fs; "+
			"cold start %.1fs (bare cache sync %.1fs), %.0f writes\t-\t-\n",
			p.Tasks, p.Runs, p.ConvergenceSeconds, p.BaselineSeconds, p.Ratio, p.FloorRatio, p.WritesPerTask, p.Writes,
			p.RSSMiB, p.LiveHeapMiB, p.CPUSeconds, p.ReconcileP99, p.ColdStartSeconds, p.ColdStartFloorSeconds,
			p.ColdStartWrites)
	}
	if c, ok := capacityOf(r.Curve); ok {
		fmt.Fprintf(tw, "6a\tcapacity, by a line through the points\tRSS %.0f MiB + %.1f MiB per 1000 tasks "+
			"(with %d runs each); CPU %.0fs per 1000 tasks; within %.0f MiB (a fifth spare): %d tasks\t-\t-\n",
			c.BaseMiB, c.MiBPerKTask, runsPerTask, c.CPUPerKTask, c.LimitMiB, c.TasksAt)
	}
	ratios, converges := make([]string, 0, len(r.Curve)), true
	colds, coldOK := make([]string, 0, len(r.Curve)), true
	for _, p := range r.Curve {
		ratios = append(ratios, fmt.Sprintf("%d: %.2f (floor %.2f)", p.Tasks, p.Ratio, p.FloorRatio))
		converges = converges && p.Ratio > 0 && (p.Ratio <= targetRatio || p.FloorRatio > 0 && p.FloorRatio <= floorMargin)
		colds = append(colds, fmt.Sprintf("%d: %.1fs, %.0f writes", p.Tasks, p.ColdStartSeconds, p.ColdStartWrites))
		coldOK = coldOK && p.ColdStartSeconds > 0 && p.ColdStartWrites == 0 &&
			(p.ColdStartSeconds <= curveColdStartSec || p.ColdStartSeconds <= p.ColdStartFloorSeconds*floorMargin)
	}
	row(tw, "6b", "growth: convergence / bare client at every point", strings.Join(ratios, "; "),
		fmt.Sprintf("<= %.2f or <= %.1f x floor", targetRatio, floorMargin), converges)
	row(tw, "", "growth: cold start at every point", strings.Join(colds, "; "),
		fmt.Sprintf("<= %ds or <= %.1f x bare, 0 writes", curveColdStartSec, floorMargin), coldOK)
	flat, flatOK := flatness(r.Curve, r.EarlierCurve)
	row(tw, "", "growth: memory per task flat", flat,
		fmt.Sprintf("RSS of 2N <= %.1f x RSS of N", 2*curveFlatness), flatOK)
}

// flatness compares the RSS of each size with that of the size half as
// large: from this run's points, or, for a half not measured in this run,
// the newest saved point of that size (named as earlier). It says so when
// no size has its half.
func flatness(points []curvePoint, earlier map[int]curvePoint) (string, bool) {
	bySize := map[int]curvePoint{}
	for _, p := range points {
		bySize[p.Tasks] = p
	}
	parts := make([]string, 0, len(points))
	ok := true
	for _, p := range points {
		if p.Tasks%2 != 0 {
			continue // no size is its half
		}
		half, here := bySize[p.Tasks/2]
		from := ""
		if !here {
			if half, here = earlier[p.Tasks/2]; !here {
				continue
			}
			from = fmt.Sprintf(", measured earlier (%s)", half.Measured.Format("2006-01-02 15:04"))
		}
		if half.RSSMiB <= 0 {
			continue
		}
		r := p.RSSMiB / half.RSSMiB
		parts = append(parts, fmt.Sprintf("%d tasks %.0f MiB / %d tasks %.0f MiB%s = %.2f",
			p.Tasks, p.RSSMiB, half.Tasks, half.RSSMiB, from, r))
		ok = ok && r <= 2*curveFlatness
	}
	if len(parts) == 0 {
		return "no size with its half measured", false
	}
	return strings.Join(parts, "; "), ok
}

// chartName is the growth curve's chart under the results directory.
const chartName = "growth.svg"

// saveCurve writes the chart of the growth curve under dir: the points of
// this run, and for the sizes it did not measure the newest point of an
// earlier run's JSON there, so a curve can be measured a size at a time.
func saveCurve(dir string, current []curvePoint) (string, error) {
	points, err := savedPoints(dir)
	if err != nil {
		return "", err
	}
	for _, p := range current {
		points[p.Tasks] = p
	}
	if len(points) == 0 {
		return "", nil
	}
	all := make([]curvePoint, 0, len(points))
	for _, p := range points {
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b curvePoint) int { return a.Tasks - b.Tasks })
	path := filepath.Join(dir, chartName)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := drawCurve(f, all); err != nil {
		_ = f.Close()
		return "", err
	}
	return path, f.Close()
}

// savedPoints reads the newest growth-curve point of each size from the
// results under dir.
func savedPoints(dir string) (map[int]curvePoint, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	points := map[int]curvePoint{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var saved struct {
			Curve []curvePoint `json:"curve"`
		}
		if err := json.Unmarshal(data, &saved); err != nil {
			continue // not a result of this program
		}
		for _, p := range saved.Curve {
			if old, ok := points[p.Tasks]; !ok || p.Measured.After(old.Measured) {
				points[p.Tasks] = p
			}
		}
	}
	return points, nil
}

// panel is one figure of the chart against the number of tasks.
type panel struct {
	title, unit string
	lines       []panelLine
}

// panelLine is one series of a panel.
type panelLine struct {
	name  string
	value func(curvePoint) float64
}

// curvePanels are the chart's figures.
var curvePanels = []panel{
	{"Convergence", "seconds", []panelLine{
		{"operator", func(p curvePoint) float64 { return p.ConvergenceSeconds }},
		{"bare client", func(p curvePoint) float64 { return p.BaselineSeconds }},
	}},
	{"Manager writes", "writes", []panelLine{{"all writes", func(p curvePoint) float64 { return p.Writes }}}},
	{"Memory", "MiB", []panelLine{
		{"RSS", func(p curvePoint) float64 { return p.RSSMiB }},
		{"live heap", func(p curvePoint) float64 { return p.LiveHeapMiB }},
	}},
	{"Manager CPU", "CPU-seconds", []panelLine{{"CPU", func(p curvePoint) float64 { return p.CPUSeconds }}}},
	{"Reconcile p99", "seconds", []panelLine{{"p99", func(p curvePoint) float64 { return p.ReconcileP99 }}}},
}

// drawCurve draws each panel against the number of tasks, side by side, as
// SVG.
func drawCurve(w io.Writer, points []curvePoint) error {
	canvas := vgsvg.New(curveSize())
	if err := drawPanels(canvas, points); err != nil {
		return err
	}
	_, err := canvas.WriteTo(w)
	return err
}

// curveCols is how many panels the chart has side by side.
const curveCols = 3

// curveSize is the chart's width and height.
func curveSize() (vg.Length, vg.Length) {
	rows := (len(curvePanels) + curveCols - 1) / curveCols
	return vg.Length(curveCols) * 3.6 * vg.Inch, vg.Length(rows) * 3 * vg.Inch
}

// drawPanels draws the panels on canvas, of curveSize.
func drawPanels(canvas vg.CanvasSizer, points []curvePoint) error {
	const cols = curveCols
	rows := (len(curvePanels) + cols - 1) / cols
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	palette := []color.Color{
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	}
	for i, pn := range curvePanels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = fmt.Sprintf("tasks (%d runs each)", runsPerTask)
		p.Y.Label.Text = pn.unit
		p.X.Min, p.Y.Min = 0, 0 // from the origin, so a straight line shows as one
		p.Legend.Top, p.Legend.Left = true, true
		for j, l := range pn.lines {
			xy := make(plotter.XYs, len(points))
			for k, pt := range points {
				xy[k].X, xy[k].Y = float64(pt.Tasks), l.value(pt)
			}
			line, dots, err := plotter.NewLinePoints(xy)
			if err != nil {
				return fmt.Errorf("%s: %w", pn.title, err)
			}
			line.Color, dots.Color = palette[j%len(palette)], palette[j%len(palette)]
			p.Add(line, dots)
			p.Legend.Add(l.name, line, dots)
		}
		p.Draw(tiles.At(dc, i%cols, i/cols))
	}
	return nil
}

// parseCurve reads BENCH_CURVE, sizes separated by commas.
func parseCurve(v string) ([]int, error) {
	fields := strings.Split(v, ",")
	sizes := make([]int, 0, len(fields))
	for _, s := range fields {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(s), "%d", &n); err != nil || n < 1 {
			return nil, fmt.Errorf("BENCH_CURVE=%q: want task counts separated by commas, such as 1000,2000,5000", v)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
