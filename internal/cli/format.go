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

package cli

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Relative renders t against now for a table: "in 3m", "2h ago", "now";
// "-" for the zero time.
func Relative(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := t.Sub(now)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d > 0:
		return "in " + Short(d)
	default:
		return Short(-d) + " ago"
	}
}

// Short renders a duration in its two largest units, as kubectl's AGE
// column does: 45s, 3m12s, 2h5m, 3d4h.
func Short(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return trim(fmt.Sprintf("%dm%ds", int(d.Minutes()), int(d.Seconds())%60))
	case d < 24*time.Hour:
		return trim(fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60))
	default:
		return trim(fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24))
	}
}

// trim drops a zero second unit: "3m0s" becomes "3m".
func trim(s string) string {
	if n := len(s); n > 2 && s[n-2:n-1] == "0" && (s[n-1] == 's' || s[n-1] == 'm' || s[n-1] == 'h') &&
		(s[n-3] < '0' || s[n-3] > '9') {
		return s[:n-2]
	}
	return s
}

// RunDuration is how long a run took or has been running; zero when it has
// not started.
func RunDuration(tr *platformv1.TaskRun, now time.Time) time.Duration {
	if tr.Status.StartTime == nil {
		return 0
	}
	end := now
	if tr.Status.CompletionTime != nil {
		end = tr.Status.CompletionTime.Time
	}
	return end.Sub(tr.Status.StartTime.Time)
}

// Summary describes finished runs: how many succeeded, and the median and
// longest duration.
type Summary struct {
	Finished, Succeeded int
	P50, Max            time.Duration
}

// Summarize computes the Summary of runs.
func Summarize(runs []platformv1.TaskRun) Summary {
	var s Summary
	var ds []time.Duration
	for i := range runs {
		tr := &runs[i]
		switch tr.Status.Phase {
		case platformv1.TaskRunSucceeded:
			s.Succeeded++
		case platformv1.TaskRunFailed:
		default:
			continue
		}
		s.Finished++
		if tr.Status.StartTime != nil && tr.Status.CompletionTime != nil {
			ds = append(ds, tr.Status.CompletionTime.Sub(tr.Status.StartTime.Time))
		}
	}
	if len(ds) > 0 {
		slices.Sort(ds)
		s.P50 = ds[int(math.Ceil(float64(len(ds))/2))-1]
		s.Max = ds[len(ds)-1]
	}
	return s
}

// String renders the summary on one line.
func (s Summary) String() string {
	if s.Finished == 0 {
		return "no finished runs"
	}
	return fmt.Sprintf("%d/%d succeeded (%.0f%%), p50 %s, max %s",
		s.Succeeded, s.Finished, 100*float64(s.Succeeded)/float64(s.Finished), Short(s.P50), Short(s.Max))
}

// Colours of phases and results, only on a terminal and never with NO_COLOR.
const (
	green = "\x1b[32m"
	red   = "\x1b[31m"
	reset = "\x1b[0m"
)

// colorize paints the words Succeeded and Failed in an already aligned
// table, so the escape codes do not upset the column widths.
func colorize(table string) string {
	r := strings.NewReplacer(" Succeeded ", " "+green+"Succeeded"+reset+" ", " Failed ", " "+red+"Failed"+reset+" ")
	lines := strings.Split(table, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(r.Replace(l+" "), " ")
	}
	return strings.Join(lines, "\n")
}

// useColor reports whether output to w may be coloured.
func useColor(w any) bool {
	_, noColor := os.LookupEnv("NO_COLOR")
	return !noColor && isTerminal(w)
}
