// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// AnalysisWatch follows an AppDeployment's status through its canaries and
// records every moment that breaks the analysis's promise: a step recorded
// as completed while one of its criteria had fewer than minMeasurements
// Passes, or did not pass at its last measurement. (A completed step's
// counts stay in status.canary.analysis until the next step's first
// measurement, so every completion is seen with its evidence.) It sees every
// status the API server stores, not samples of them.
type AnalysisWatch struct {
	mu         sync.Mutex
	violations []string
	// completed holds the step completions seen, by revision and step.
	completed map[string]bool
	// results counts the criteria's last results seen, by result.
	results map[platformv1.MeasurementResult]int
	last    *platformv1.AppDeployment
}

// WatchAnalysis starts an AnalysisWatch of the AppDeployment name in
// namespace ns; it stops with the test.
func WatchAnalysis(t *testing.T, c *Cluster, ns, name string) *AnalysisWatch {
	t.Helper()
	wc, err := client.NewWithWatch(c.Config, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatalf("watch client: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, &platformv1.AppDeploymentList{}, client.InNamespace(ns),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	if err != nil {
		cancel()
		t.Fatalf("watch AppDeployment %s: %v", name, err)
	}
	aw := &AnalysisWatch{results: map[platformv1.MeasurementResult]int{}, completed: map[string]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ad, ok := ev.Object.(*platformv1.AppDeployment); ok {
				aw.observe(ad)
			}
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		cancel()
		<-done
	})
	return aw
}

func (aw *AnalysisWatch) observe(ad *platformv1.AppDeployment) {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	aw.last = ad
	c := ad.Status.Canary
	if c == nil || c.Analysis == nil || c.Analysis.Step == nil || c.Step == nil {
		return
	}
	a := c.Analysis
	for _, cs := range a.Criteria {
		aw.results[cs.LastResult]++
	}
	if ptr.Deref(c.Step.Index, 0) <= *a.Step {
		return
	}
	key := fmt.Sprintf("%s/%d", c.Revision, *a.Step)
	if aw.completed[key] {
		return
	}
	aw.completed[key] = true
	need := ad.Spec.Strategy.Analysis.MinMeasurements
	if need == 0 {
		need = platformv1.DefaultMinMeasurements
	}
	if len(a.Criteria) < len(ad.Spec.Strategy.CanaryCriteria) {
		aw.violations = append(aw.violations, fmt.Sprintf("step %d of %s completed with %d of %d criteria measured",
			*a.Step+1, c.Version, len(a.Criteria), len(ad.Spec.Strategy.CanaryCriteria)))
	}
	for _, cs := range a.Criteria {
		if ptr.Deref(cs.Passes, 0) < need || cs.LastResult != platformv1.MeasurementPass {
			aw.violations = append(aw.violations, fmt.Sprintf("step %d of %s completed on %d passes of %s (last %s), want %d",
				*a.Step+1, c.Version, ptr.Deref(cs.Passes, 0), cs.Name, cs.LastResult, need))
		}
	}
}

// Violations are the broken promises seen so far.
func (aw *AnalysisWatch) Violations() []string {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	return append([]string(nil), aw.violations...)
}

// Completed is how many step completions were seen with their evidence.
func (aw *AnalysisWatch) Completed() int {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	return len(aw.completed)
}

// Last is the last status seen, nil before the first.
func (aw *AnalysisWatch) Last() *platformv1.AppDeployment {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	return aw.last.DeepCopy()
}

// Saw reports whether any criterion's last result was r in a status seen.
func (aw *AnalysisWatch) Saw(r platformv1.MeasurementResult) bool {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	return aw.results[r] > 0
}
