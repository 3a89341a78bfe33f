// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	platformv1 "github.com/example/platform-operator/api/v1"
)

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
	// Finished and Succeeded count the runs that ended, and those of them
	// that succeeded.
	Finished, Succeeded int
	// P50 and Max are the median and the longest duration of the finished
	// runs, from start to completion.
	P50, Max time.Duration
}

// Summarize computes the Summary of runs; runs still going are left out.
func Summarize(runs []platformv1.TaskRun) Summary {
	var s Summary
	var ds []time.Duration
	for i := range runs {
		tr := &runs[i]
		if !tr.IsFinished() {
			continue
		}
		if tr.Status.Phase == platformv1.TaskRunSucceeded {
			s.Succeeded++
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
	return fmt.Sprintf("%d/%d succeeded (%.0f%%), p50 %s, max %s", s.Succeeded, s.Finished,
		100*float64(s.Succeeded)/float64(s.Finished), duration.HumanDuration(s.P50), duration.HumanDuration(s.Max))
}
