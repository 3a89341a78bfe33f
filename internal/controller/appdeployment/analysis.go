// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeployment

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/analysis"
	"github.com/example/platform-operator/internal/release"
	"github.com/example/platform-operator/internal/text"
)

// The analysis judges a canary against its criteria in Prometheus. What it
// decides is pure, like the rest of the release: the pass reads the
// measurement the measurer last finished (obs.measured), folds it into the
// recorded counts once, and asks for the next measurement when one is due
// (pass.measure); the measurer queries Prometheus off the reconcile workers
// and wakes the AppDeployment when it has an answer. The counts live in
// status, so a restarted manager goes on from them and never promotes on
// fewer Passes than it recorded.

// Reasons of the analysis, in outcomes, events and conditions.
const (
	// ReasonAnalysisFailed: a criterion failed failureLimit times in a row.
	ReasonAnalysisFailed = "AnalysisFailed"
	// ReasonAnalysisNoData: the analysis had no data failureLimit times in a
	// row and rollback.onNoData is Rollback.
	ReasonAnalysisNoData = "AnalysisNoData"
)

// settings are an AppDeployment's analysis settings, defaults applied.
type settings struct {
	interval        time.Duration
	minMeasurements int32
	failureLimit    int32
	minSamples      int64
	grace           time.Duration
	onNoData        platformv1.NoDataPolicy
}

// analysisSettings reads the settings of step i of ad's release (a
// blue-green release measures each analysis by its own), with the defaults
// the schema would give for what is unset.
func analysisSettings(ad *platformv1.AppDeployment, i int32) settings {
	a, rb := release.AnalysisOf(&ad.Spec.Strategy, i), &ad.Spec.Rollback
	orDefault := func(v, d int32) int32 {
		if v == 0 {
			return d
		}
		return v
	}
	s := settings{
		interval:        time.Duration(orDefault(a.IntervalSeconds, platformv1.DefaultAnalysisIntervalSeconds)) * time.Second,
		minMeasurements: orDefault(a.MinMeasurements, platformv1.DefaultMinMeasurements),
		failureLimit:    orDefault(a.FailureLimit, platformv1.DefaultFailureLimit),
		minSamples:      int64(ptr.Deref(a.MinSamples, platformv1.DefaultMinSamples)),
		grace:           time.Duration(orDefault(rb.ProviderErrorGraceSeconds, platformv1.DefaultProviderErrorGraceSeconds)) * time.Second,
		onNoData:        rb.OnNoData,
	}
	if s.onNoData == "" {
		s.onNoData = platformv1.NoDataPause
	}
	return s
}

// measureKey names what a measurement is of: a canary revision's step, or
// its preflight against the stable track.
type measureKey struct {
	revision  string
	step      int32
	preflight bool
}

// measureRequest asks the measurer for one measurement of every criterion.
type measureRequest struct {
	key      measureKey
	criteria []platformv1.CanaryCriterion
	// canary and stable are the template variables of the two tracks.
	canary, stable analysis.Vars
	minSamples     int64
	// due is when the measurement is due; zero when at once (a first
	// preflight). The measurer waits for it, and a finished measurement of
	// the same key taken at or after it answers the request, even before a
	// pass has recorded it.
	due time.Time
	// interval is the analysis interval: a measurement that starts more than
	// an interval after it was due is counted as delayed.
	interval time.Duration
	// timeout bounds the whole measurement: well under the interval, so a
	// Prometheus that never answers costs one goroutine, never a worker.
	timeout time.Duration
}

// measured is a finished measurement.
type measured struct {
	key     measureKey
	at      time.Time
	results []analysis.Measurement
	// delayed says that it started more than an interval after it was due.
	delayed bool
}

// criteria are the checks step i of the release must pass.
func (p *pass) criteria(i int32) []platformv1.CanaryCriterion {
	return release.Criteria(&p.ad.Spec.Strategy, i)
}

// analyzed reports whether step i of the spec's release is judged by an
// analysis: every step of a canary with criteria, a blue-green release's
// preview by prePromotionAnalysis and its switch by postPromotionAnalysis.
func (p *pass) analyzed(i int32) bool {
	return len(p.criteria(i)) > 0
}

// preflightPending reports whether a release waits for its preflight: no
// pod of the new version is made before each query of its first step has
// answered once for the stable track.
func (p *pass) preflightPending(c *platformv1.CanaryStatus) bool {
	return p.analyzed(0) && (c.Analysis == nil || c.Analysis.PreflightAt == nil)
}

// fresh returns the finished measurement of key that the record a has not
// counted yet, nil if there is none.
func (p *pass) fresh(key measureKey, a *platformv1.AnalysisStatus) *measured {
	m := p.obs.measured
	if m == nil || m.key != key {
		return nil
	}
	at := metav1.NewTime(m.at.Truncate(time.Second))
	if a != nil && a.MeasuredAt != nil && !a.MeasuredAt.Before(&at) {
		return nil
	}
	return m
}

// preflight runs the canary's queries once against the stable track before
// any canary pod is made; a query that does not answer holds the canary
// there (ProviderError or InvalidQuery), with nothing changed yet. It
// reports whether the preflight is done.
func (p *pass) preflight(c *platformv1.CanaryStatus) bool {
	if c.Analysis == nil {
		c.Analysis = &platformv1.AnalysisStatus{}
	}
	a := c.Analysis
	key := measureKey{revision: c.Revision, step: stepIndex(c), preflight: true}
	if m := p.fresh(key, a); m != nil {
		at := metav1.NewTime(m.at.Truncate(time.Second))
		answered := true
		for _, r := range m.results {
			if r.Result == platformv1.MeasurementError || r.Result == platformv1.MeasurementInvalid {
				answered = false
			}
		}
		if answered {
			now := p.now
			c.Analysis = &platformv1.AnalysisStatus{PreflightAt: &at, DelayedMeasurements: a.DelayedMeasurements}
			// The canary's pods are made from now on: its progress deadline
			// counts from here, not from a wait for Prometheus.
			c.Step.StartedAt = &now
			p.transition(corev1.EventTypeNormal, EventAnalysisStarted, "Analyze",
				fmt.Sprintf("%s %s: every query answered for the stable track; the %s's pods are made",
					p.noun(), describe(c.Version, c.Revision), p.track()))
			return true
		}
		p.count(a, m, false)
	}
	p.schedule(c, key, a.MeasuredAt, nil)
	return false
}

// analyze folds the newest measurement of the current step into the record,
// fails the canary on failureLimit Fails (or NoData, with onNoData Rollback)
// in a row, asks for the next measurement when it is due, and reports
// whether the analysis lets the step complete: every criterion measured
// minMeasurements Passes and passing at its last measurement, with
// Prometheus answering.
func (p *pass) analyze(c *platformv1.CanaryStatus) bool {
	i := stepIndex(c)
	if c.Analysis == nil {
		c.Analysis = &platformv1.AnalysisStatus{}
	}
	if a := c.Analysis; a.Step == nil || *a.Step != i {
		// A new step: the counts of the last one were its evidence. What
		// is of the canary, not of a step, goes on.
		c.Analysis = &platformv1.AnalysisStatus{Step: ptr.To(i), PreflightAt: a.PreflightAt,
			DelayedMeasurements: a.DelayedMeasurements, InvalidMeasurements: a.InvalidMeasurements,
			InvalidGeneration: a.InvalidGeneration}
	}
	a, s := c.Analysis, analysisSettings(p.ad, i)
	key := measureKey{revision: c.Revision, step: i}
	if m := p.fresh(key, a); m != nil {
		p.count(a, m, true)
		for _, cs := range a.Criteria {
			switch {
			case count(cs.ConsecutiveFails) >= s.failureLimit:
				p.fail(ReasonAnalysisFailed, fmt.Sprintf("%s failed %d measurements in a row: %s",
					cs.Name, count(cs.ConsecutiveFails), cs.Message))
				return false
			case s.onNoData == platformv1.NoDataRollback && count(cs.ConsecutiveNoData) >= s.failureLimit:
				p.fail(ReasonAnalysisNoData, fmt.Sprintf("%s had no data %d measurements in a row: %s",
					cs.Name, count(cs.ConsecutiveNoData), cs.Message))
				return false
			}
		}
	}
	p.schedule(c, key, a.MeasuredAt, c.Step.ReadyAt)
	if a.ProviderErrorSince != nil {
		p.wakeAt(a.ProviderErrorSince.Add(s.grace))
		return false
	}
	if len(a.Criteria) < len(p.criteria(i)) {
		return false
	}
	for _, cs := range a.Criteria {
		if count(cs.Passes) < s.minMeasurements || cs.LastResult != platformv1.MeasurementPass {
			return false
		}
	}
	return true
}

// schedule asks for the next measurement of key, due an interval after the
// last, or (for a step) an interval after its pods were ready, so the first
// measurement covers a whole window of canary traffic; a preflight is due
// at once. The measurer takes it when it is due, by its own timer: a pass
// woken then would wait for a worker, behind every other AppDeployment's,
// before it could start it.
func (p *pass) schedule(c *platformv1.CanaryStatus, key measureKey, last, ready *metav1.Time) {
	s := analysisSettings(p.ad, key.step)
	from := last
	if from == nil {
		from = ready
	}
	p.measure = p.measureRequest(c, key, s)
	start := p.now.Time
	if from != nil {
		p.measure.due = from.Add(p.invalidBackoff(c.Analysis, s.interval))
		start = later(start, p.measure.due)
	}
	// The measurer wakes the AppDeployment when it has an answer; should it
	// have been too busy to take the request, this pass asks again.
	p.wakeAt(start.Add(p.measure.timeout + time.Second))
}

// maxInvalidBackoff bounds the wait after Invalid measurements, and after
// timeouts, in intervals.
const maxInvalidBackoff = 10

// timeoutsBeforeBackoff is how many measurements in a row a criterion's
// query may time out before the next waits longer: one or two can be a
// busy Prometheus, three are the query's cost.
const timeoutsBeforeBackoff = 3

// invalidBackoff is the wait before the next measurement: the interval, or
// after n Invalid measurements in a row of today's spec 2^(n-1) intervals,
// or after a criterion's n-th timeout in a row (n >= 3) 2^(n-2) intervals,
// at most maxInvalidBackoff. A query Prometheus refuses is refused again
// until someone changes it, and one too costly to answer in time costs
// Prometheus the whole timeout again; asking every interval only loads
// Prometheus.
func (p *pass) invalidBackoff(a *platformv1.AnalysisStatus, interval time.Duration) time.Duration {
	if a == nil {
		return interval
	}
	shift := int32(0)
	if n := count(a.InvalidMeasurements); a.InvalidGeneration == p.ad.Generation && n > 1 {
		shift = n - 1
	}
	for _, cs := range a.Criteria {
		if n := count(cs.ConsecutiveTimeouts); n >= timeoutsBeforeBackoff {
			shift = max(shift, n-timeoutsBeforeBackoff+1)
		}
	}
	if shift == 0 {
		return interval
	}
	factor := int64(1) << min(shift, 4)
	return interval * time.Duration(min(factor, maxInvalidBackoff))
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// measureRequest is the request for a measurement of the canary c.
func (p *pass) measureRequest(c *platformv1.CanaryStatus, key measureKey, s settings) *measureRequest {
	vars := func(track, version, revision string) analysis.Vars {
		return analysis.Vars{Namespace: p.ad.Namespace, Name: p.ad.Name, Version: version, Revision: revision,
			Track: track, Interval: s.interval}
	}
	stableVersion := ""
	if p.obs.stable != nil {
		stableVersion = p.obs.stable.Spec.Template.Labels[platformv1.AppVersionLabel]
	}
	return &measureRequest{
		key:        key,
		criteria:   p.criteria(key.step),
		canary:     vars(p.track(), c.Version, c.Revision),
		stable:     vars(platformv1.TrackStable, stableVersion, p.stableRevision()),
		minSamples: s.minSamples,
		interval:   s.interval,
		timeout:    measureTimeout(s.interval),
	}
}

// measureTimeout bounds one measurement: half the interval, at most 10 s.
func measureTimeout(interval time.Duration) time.Duration {
	return min(interval/2, 10*time.Second)
}

// count folds a measurement into the record: each criterion's last result,
// value and counts, and whether Prometheus answers. When Prometheus answers
// again after errors, the step's pause is lengthened by the outage: the
// step's clock stood still meanwhile. step says whether the counts are a
// step's (a preflight's failures are shown, not counted towards anything).
func (p *pass) count(a *platformv1.AnalysisStatus, m *measured, step bool) {
	at := metav1.NewTime(m.at.Truncate(time.Second))
	a.MeasuredAt = &at
	byName := map[string]*platformv1.CriterionStatus{}
	for i := range a.Criteria {
		byName[a.Criteria[i].Name] = &a.Criteria[i]
	}
	out := make([]platformv1.CriterionStatus, 0, len(m.results))
	providerError, invalid := false, false
	for _, r := range m.results {
		// prev is the criterion's last record; old is what this record
		// counts on, nothing for a preflight.
		var old platformv1.CriterionStatus
		prev := byName[r.Name]
		if prev != nil && step {
			old = *prev
		}
		cs := platformv1.CriterionStatus{
			Name: r.Name, LastResult: r.Result, MeasuredAt: &at, Message: text.Truncate(r.Message, 1024),
			Value: formatValue(r.Value), StableValue: formatValue(r.Stable), Samples: r.Samples,
			Passes: ptr.To(count(old.Passes)), Fails: ptr.To(count(old.Fails)),
			NoData: ptr.To(count(old.NoData)), Errors: ptr.To(count(old.Errors)),
			ConsecutiveFails: ptr.To[int32](0), ConsecutiveNoData: ptr.To[int32](0),
		}
		if r.Threshold != "" {
			cs.Threshold = text.Truncate(r.Threshold, 1024)
		}
		switch r.Result {
		case platformv1.MeasurementPass:
			*cs.Passes++
		case platformv1.MeasurementFail:
			*cs.Fails++
			*cs.ConsecutiveFails = count(old.ConsecutiveFails) + 1
		case platformv1.MeasurementNoData:
			*cs.NoData++
			*cs.ConsecutiveNoData = count(old.ConsecutiveNoData) + 1
		case platformv1.MeasurementInvalid:
			invalid = true
		case platformv1.MeasurementError:
			*cs.Errors++
			providerError = true
			if analysis.TimedOut(r.Cause) {
				// Counted in a preflight too: its query costs the same.
				var timeouts *int32
				if prev != nil {
					timeouts = prev.ConsecutiveTimeouts
				}
				cs.ConsecutiveTimeouts = ptr.To(count(timeouts) + 1)
			}
			// An outage neither breaks nor makes a run of Fails or NoData.
			*cs.ConsecutiveFails, *cs.ConsecutiveNoData = count(old.ConsecutiveFails), count(old.ConsecutiveNoData)
		}
		if !step {
			// A preflight's answers are shown, not counted: its counts
			// would read as evidence for a step that has not begun.
			cs.Passes, cs.Fails, cs.NoData, cs.Errors, cs.ConsecutiveFails, cs.ConsecutiveNoData = nil, nil, nil, nil, nil, nil
		}
		out = append(out, cs)
	}
	a.Criteria = out
	if m.delayed {
		a.DelayedMeasurements = ptr.To(count(a.DelayedMeasurements) + 1)
	}
	switch {
	case !invalid:
		a.InvalidMeasurements, a.InvalidGeneration = nil, 0
	case a.InvalidGeneration == p.ad.Generation:
		a.InvalidMeasurements = ptr.To(count(a.InvalidMeasurements) + 1)
	default:
		a.InvalidMeasurements, a.InvalidGeneration = ptr.To[int32](1), p.ad.Generation
	}
	switch {
	case providerError && a.ProviderErrorSince == nil:
		a.ProviderErrorSince = &at
	case !providerError && a.ProviderErrorSince != nil:
		if c := p.next.canary; c != nil && c.Step != nil && c.Step.PauseUntil != nil {
			until := metav1.NewTime(c.Step.PauseUntil.Add(at.Sub(a.ProviderErrorSince.Time)))
			c.Step.PauseUntil = &until
		}
		a.ProviderErrorSince = nil
	}
}

// count is a count of the status, 0 when unset.
func count(n *int32) int32 { return ptr.Deref(n, 0) }

// formatValue writes a measured value for status, nil as "".
func formatValue(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', 6, 64)
}

// analysisPause says why the analysis holds a running canary, if it does:
// a query Prometheus refused (InvalidQuery, never promoted), Prometheus not
// answering past the grace (ProviderError; at once during the preflight),
// or no data to judge by failureLimit measurements in a row (NoData, with
// onNoData Pause). It resumes by itself when the next measurement finds
// otherwise.
func (p *pass) analysisPause(c *platformv1.CanaryStatus) (platformv1.PauseReason, string) {
	i := stepIndex(c)
	if p.preflightPending(c) {
		i = 0
	}
	if !p.analyzed(i) || c.Analysis == nil {
		return "", ""
	}
	a, s := c.Analysis, analysisSettings(p.ad, i)
	for _, cs := range a.Criteria {
		if cs.LastResult == platformv1.MeasurementInvalid {
			if strings.HasPrefix(cs.Message, cs.Name+" ") || strings.HasPrefix(cs.Message, cs.Name+":") {
				return platformv1.PauseInvalidQuery, cs.Message
			}
			return platformv1.PauseInvalidQuery, fmt.Sprintf("criterion %s: %s", cs.Name, cs.Message)
		}
	}
	if since := a.ProviderErrorSince; since != nil && (a.PreflightAt == nil || !p.now.Before(&metav1.Time{Time: since.Add(s.grace)})) {
		msg := "Prometheus has not answered since " + since.UTC().Format(time.RFC3339)
		for _, cs := range a.Criteria {
			if cs.LastResult == platformv1.MeasurementError {
				return platformv1.PauseProviderError, msg + ": " + cs.Message
			}
		}
		return platformv1.PauseProviderError, msg
	}
	if s.onNoData == platformv1.NoDataPause {
		// As many NoData in a row as onNoData Rollback needs to roll back:
		// one scrape missing from a window holds the step (NoData is no
		// Pass) without flipping the phase, and a CI job waiting on it.
		for _, cs := range a.Criteria {
			if cs.LastResult == platformv1.MeasurementNoData && count(cs.ConsecutiveNoData) >= s.failureLimit {
				return platformv1.PauseNoData, cs.Message
			}
		}
	}
	return "", ""
}

// evidence sums up the passes of a step's analysis for its event:
// "error_rate 0.1% <= 0.5% (n=600), 3 passes".
func evidence(a *platformv1.AnalysisStatus) string {
	if a == nil || len(a.Criteria) == 0 {
		return ""
	}
	parts := make([]string, 0, len(a.Criteria))
	for _, cs := range a.Criteria {
		parts = append(parts, fmt.Sprintf("%s, %d passes", cs.Message, count(cs.Passes)))
	}
	return strings.Join(parts, "; ")
}
