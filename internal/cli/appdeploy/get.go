// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/release"
)

// Sections of get are short: the newest few say what a release is doing;
// the rest is what history and kubectl events are for.
const (
	recentEvents    = 10
	recentRevisions = 5
)

func newGetCommand(o *options) *cobra.Command {
	return apps.Describe(o.Options, help.Command("get"), func(ctx context.Context, c client.WithWatch, ad *platformv1.AppDeployment) error {
		events, err := core.EventsAbout(ctx, c, kind, ad, recentEvents)
		if err != nil {
			return err
		}
		describeApp(o.Out(), ad, events, o.Now(), core.UseColor(o.OutIsTerminal(), os.Getenv))
		return nil
	})
}

// describeApp writes what get shows by default: a header of the spec and
// the summary of the status, the tree of what runs, and the events.
func describeApp(w io.Writer, ad *platformv1.AppDeployment, events []eventsv1.Event, now time.Time, color bool) {
	s, st := &ad.Spec, &ad.Status
	// Every text of the object is escaped with core.Safe: a tenant wrote it,
	// and someone else may be reading it.
	fmt.Fprintf(w, "Name:        %s\nNamespace:   %s\n", core.Safe(ad.Name), core.Safe(ad.Namespace))
	fmt.Fprintf(w, "Image:       %s\n", core.Safe(s.Image))
	fmt.Fprintf(w, "Version:     %s\n", core.Safe(core.OrDash(release.Version(s))))
	fmt.Fprintf(w, "Replicas:    %d\n", release.Replicas(s))
	fmt.Fprintf(w, "Strategy:    %s\n", strategyLine(&s.Strategy))
	if g := s.Strategy.TrafficRouting.GatewayAPI; g.HTTPRoute != "" {
		line := "by weight on HTTPRoute " + g.HTTPRoute
		if len(g.Rules) > 0 {
			line += ", rules " + strings.Join(g.Rules, ", ")
		}
		fmt.Fprintf(w, "Traffic:     %s\n", core.Safe(line))
	}
	if len(s.Strategy.CanaryCriteria) > 0 {
		fmt.Fprintf(w, "Criteria:    %s\n", core.Safe(criteriaLine(s.Strategy.CanaryCriteria)))
	}
	if c := s.Strategy.BlueGreen.PrePromotionAnalysis.Criteria; len(c) > 0 {
		fmt.Fprintf(w, "Before:      %s\n", core.Safe(criteriaLine(c)))
	}
	if c := s.Strategy.BlueGreen.PostPromotionAnalysis.Criteria; len(c) > 0 {
		fmt.Fprintf(w, "After:       %s\n", core.Safe(criteriaLine(c)))
	}
	if s.Paused {
		fmt.Fprintln(w, "Paused:      true (kubectl appdeploy resume continues the release)")
	}
	// Escaped before it is painted, so that only the plugin's own colour
	// codes reach the terminal.
	phase := "Phase:       " + core.Safe(phaseOf(st))
	if color {
		phase = core.Colorize(phase, palette)
	}
	fmt.Fprintln(w, phase)
	if st.Message != "" {
		fmt.Fprintf(w, "Message:     %s\n", core.Safe(st.Message))
	}
	if ready := meta.FindStatusCondition(st.Conditions, platformv1.ConditionReady); ready != nil {
		fmt.Fprintf(w, "Ready:       %s (%s), changed %s\n", core.Safe(string(ready.Status)), core.Safe(ready.Reason), core.Relative(ready.LastTransitionTime.Time, now))
	}
	if st.ObservedGeneration != ad.Generation {
		fmt.Fprintf(w, "Generation:  %d, but the status is of generation %d: the operator has not caught up with the spec yet\n",
			ad.Generation, st.ObservedGeneration)
	}

	fmt.Fprintln(w)
	releaseTree(ad, now).Write(w)
	writeAnalysis(w, ad, now)

	fmt.Fprintln(w, "\nRecent events:")
	core.WriteEvents(w, events, now)
}

// writeAnalysis writes the measurements of the canary's current step as a
// table, one row per criterion, when the canary is analysed.
func writeAnalysis(w io.Writer, ad *platformv1.AppDeployment, now time.Time) {
	c := ad.Status.Canary
	if c == nil || c.Analysis == nil {
		return
	}
	a := c.Analysis
	settings := release.AnalysisOf(&ad.Spec.Strategy, ptr.Deref(a.Step, 0))
	interval := settings.IntervalSeconds
	if interval == 0 {
		interval = platformv1.DefaultAnalysisIntervalSeconds
	}
	need := settings.MinMeasurements
	if need == 0 {
		need = platformv1.DefaultMinMeasurements
	}
	fmt.Fprintf(w, "\nAnalysis (every %ds, %d passes per step", interval, need)
	switch {
	case a.PreflightAt == nil:
		fmt.Fprint(w, "; preflight against the stable track: waiting for every query to answer")
	case a.ProviderErrorSince != nil:
		fmt.Fprintf(w, "; Prometheus not answering since %s", core.Relative(a.ProviderErrorSince.Time, now))
	}
	if n := ptr.Deref(a.DelayedMeasurements, 0); n > 0 {
		// The operator's query slots were full: the platform team's
		// --analysis-max-in-flight, or this namespace's share of it.
		fmt.Fprintf(w, "; %d measurement(s) started over an interval late", n)
	}
	fmt.Fprintln(w, "):")
	if len(a.Criteria) == 0 {
		fmt.Fprintln(w, "  no measurement yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CRITERION\tRESULT\tVALUE\tSTABLE\tTHRESHOLD\tSAMPLES\tPASS\tFAIL\tNODATA\tERROR\tMEASURED\tMESSAGE")
	for _, cs := range a.Criteria {
		samples := "-"
		if cs.Samples != nil {
			samples = fmt.Sprint(*cs.Samples)
		}
		measured := "-"
		if cs.MeasuredAt != nil {
			measured = core.Relative(cs.MeasuredAt.Time, now)
		}
		// Escaped cells: a tab or a newline in one cannot move the columns.
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", core.Safe(cs.Name), core.Safe(core.OrDash(string(cs.LastResult))),
			core.Safe(core.OrDash(cs.Value)), core.Safe(core.OrDash(cs.StableValue)), core.Safe(core.OrDash(cs.Threshold)), samples,
			ptr.Deref(cs.Passes, 0), ptr.Deref(cs.Fails, 0), ptr.Deref(cs.NoData, 0), ptr.Deref(cs.Errors, 0), measured, core.Safe(cs.Message))
	}
	_ = tw.Flush()
}

// phaseOf is the phase and, when paused, why: "Paused (Approval)".
func phaseOf(st *platformv1.AppDeploymentStatus) string {
	phase := core.OrDash(string(st.Phase))
	if st.PauseReason != "" {
		phase += " (" + string(st.PauseReason) + ")"
	}
	return phase
}

// strategyLine describes the strategy: "rolling", a canary's steps as
// the controller follows them, "canary: 25% (approval) → 50% (pause 5m) →
// 75%", or a blue-green release's "blueGreen: promoted 5m after the preview
// is ready, old pods kept 30s".
func strategyLine(s *platformv1.Strategy) string {
	if s.Type == platformv1.StrategyBlueGreen {
		steps := release.Steps(s)
		promote := "promoted by kubectl appdeploy promote"
		if p := s.BlueGreen.AutoPromotionSeconds; p != nil {
			promote = "promoted " + duration.HumanDuration(time.Duration(*p)*time.Second) + " after the preview is ready"
		}
		return fmt.Sprintf("blueGreen: %s, old pods kept %s", promote,
			duration.HumanDuration(time.Duration(ptr.Deref(steps[release.BlueGreenSwitched].PauseSeconds, 0))*time.Second))
	}
	steps := release.Steps(s)
	if len(steps) == 0 {
		return strategyType(s)
	}
	parts := make([]string, len(steps))
	for i, step := range steps {
		var notes []string
		if p := ptr.Deref(step.PauseSeconds, 0); p > 0 {
			notes = append(notes, "pause "+duration.HumanDuration(time.Duration(p)*time.Second))
		}
		if step.Approval == platformv1.ApprovalManual {
			notes = append(notes, "approval")
		}
		parts[i] = fmt.Sprintf("%d%%", step.Weight)
		if len(notes) > 0 {
			parts[i] += " (" + strings.Join(notes, ", ") + ")"
		}
	}
	return "canary: " + strings.Join(parts, " → ")
}

// criteriaLine lists a canary's criteria: "error_rate at most 0.5".
func criteriaLine(criteria []platformv1.CanaryCriterion) string {
	parts := make([]string, len(criteria))
	for i, c := range criteria {
		if c.Query != "" {
			parts[i] = fmt.Sprintf("%s (%s)", c.Name, c.SuccessCondition)
		} else {
			bound := "at most"
			if c.Metric == platformv1.MetricSuccessRate {
				bound = "at least"
			}
			parts[i] = fmt.Sprintf("%s %s %g", c.Metric, bound, ptr.Deref(c.Threshold, 0))
		}
		if cmp := c.CompareToStable; cmp != (platformv1.CompareToStable{}) {
			var bounds []string
			if cmp.MaxDelta != nil {
				bounds = append(bounds, fmt.Sprintf("+%g", *cmp.MaxDelta))
			}
			if cmp.MaxRatio != nil {
				bounds = append(bounds, fmt.Sprintf("x%g", *cmp.MaxRatio))
			}
			parts[i] += " and at most " + strings.Join(bounds, " and ") + " worse than stable"
		}
	}
	return strings.Join(parts, ", ")
}

// releaseTree is what runs and how releases went, as a tree under the
// AppDeployment's name.
func releaseTree(ad *platformv1.AppDeployment, now time.Time) *core.Tree {
	st := &ad.Status
	root := &core.Tree{Label: "AppDeployment/" + ad.Name}

	// The status counts the pods of both tracks; the stable track's are
	// what the canary's leave.
	var canaryReplicas, canaryReady int32
	if c := st.Canary; c != nil {
		canaryReplicas, canaryReady = ptr.Deref(c.Replicas, 0), ptr.Deref(c.ReadyReplicas, 0)
	}
	if st.StableRevision == "" {
		root.Add("Stable: none yet")
	} else {
		stable := root.Add("Stable: %s, revision %s, %d/%d pods ready", core.OrDash(st.StableVersion), st.StableRevision,
			max(ptr.Deref(st.ReadyReplicas, 0)-canaryReady, 0), max(ptr.Deref(st.Replicas, 0)-canaryReplicas, 0))
		stable.Add("Image: %s", core.OrDash(st.StableImage))
	}
	if c := st.Canary; c != nil {
		canaryBranch(root, c, now, &ad.Spec.Strategy)
	}
	if pending := pendingRequests(ad); len(pending) > 0 {
		requests := root.Add("Requests not handled yet")
		for _, p := range pending {
			requests.Add("%s", p)
		}
	}
	if st.LastOutcome.Result != "" {
		root.Add("Last outcome: %s", outcomeLine(&st.LastOutcome, now))
	}
	revisions := root.Add("Revisions")
	if len(st.Revisions) == 0 {
		revisions.Add("none promoted yet")
	}
	shown := st.Revisions[:min(len(st.Revisions), recentRevisions)]
	rows := make([][]string, 0, len(shown))
	for _, r := range shown {
		rows = append(rows, []string{r.Revision, core.OrDash(r.Version), "promoted " + promotedAt(r.PromotedAt, now), core.OrDash(r.Image)})
	}
	for _, line := range core.Columns(rows) {
		revisions.Add("%s", line)
	}
	if more := len(st.Revisions) - recentRevisions; more > 0 {
		revisions.Add("%d more: kubectl appdeploy history %s", more, ad.Name)
	}
	return root
}

// canaryBranch adds the canary in progress to root, or a blue-green
// release's preview and which track the Service serves.
func canaryBranch(root *core.Tree, c *platformv1.CanaryStatus, now time.Time, strategy *platformv1.Strategy) {
	blueGreen := strategy.Type == platformv1.StrategyBlueGreen
	track := "Canary"
	if blueGreen {
		track = "Preview"
	}
	line := fmt.Sprintf("%s: %s, revision %s, %d/%d pods ready", track, core.OrDash(c.Version), core.OrDash(c.Revision),
		ptr.Deref(c.ReadyReplicas, 0), ptr.Deref(c.Replicas, 0))
	if c.StartedAt != nil {
		line += ", started " + core.Relative(c.StartedAt.Time, now)
	}
	canary := root.Add("%s", line)
	if blueGreen {
		if c.Active != "" {
			canary.Add("%s", activeLine(c))
		}
		if c.Route.Name != "" {
			weightLines(canary, c, now)
		}
		if s := c.Step; s != nil {
			canary.Add("%s", blueGreenStepLine(s, now))
		}
		failureLine(canary, c, now)
		return
	}
	if c.Weight != nil {
		weightLines(canary, c, now)
	}
	if s := c.Step; s != nil {
		canary.Add("%s", stepLine(s, now))
		if h := headerRouteLine(strategy, s); h != "" {
			canary.Add("%s", h)
		}
	}
	failureLine(canary, c, now)
}

// headerRouteLine says which requests the step sends to the canary alone,
// "Header route: X-Canary: always", as the spec's step asks; "" for a step
// without one.
func headerRouteLine(strategy *platformv1.Strategy, s *platformv1.CanaryStepStatus) string {
	i := int(ptr.Deref(s.Index, -1))
	if i < 0 || i >= len(strategy.Steps) {
		return ""
	}
	matches := strategy.Steps[i].HeaderRoute.Matches
	if len(matches) == 0 {
		return ""
	}
	parts := make([]string, 0, len(matches))
	for _, m := range matches {
		part := m.Name + ": " + m.Value
		if m.Type == platformv1.HeaderMatchRegularExpression {
			part = m.Name + " ~ " + m.Value
		}
		parts = append(parts, part)
	}
	return "Header route: " + core.Safe(strings.Join(parts, ", ")) + " (to the canary alone)"
}

// weightLines adds the weight desired and actual and, on a route, whether
// its gateways accepted it.
func weightLines(canary *core.Tree, c *platformv1.CanaryStatus, now time.Time) {
	w := c.Weight
	if w == nil {
		w = &platformv1.CanaryWeight{}
	}
	line := fmt.Sprintf("Weight: desired %s, actual %s", percent(w.Desired), percent(w.Actual))
	if r := c.Route; r.Name != "" {
		line += " on HTTPRoute " + core.Safe(r.Name)
		if len(r.Rules) > 0 {
			line += " (" + core.Safe(strings.Join(r.Rules, ", ")) + ")"
		}
	}
	weight := canary.Add("%s", line)
	if r := c.Route; r.Name != "" && r.Accepted != metav1.ConditionTrue {
		route := fmt.Sprintf("Route not accepted (%s)", core.OrDash(string(r.Accepted)))
		if r.WaitingSince != nil {
			route += ", waiting since " + core.Relative(r.WaitingSince.Time, now)
		}
		if r.Message != "" {
			route += ": " + core.Safe(r.Message)
		}
		weight.Add("%s", route)
	}
}

// failureLine adds why a held release failed, if it did.
func failureLine(branch *core.Tree, c *platformv1.CanaryStatus, now time.Time) {
	if f := c.Failure; f.Reason != "" {
		line := fmt.Sprintf("Failed: %s: %s", f.Reason, f.Message)
		if f.FailedAt != nil {
			line += " (" + core.Relative(f.FailedAt.Time, now) + ")"
		}
		branch.Add("%s; kubectl appdeploy retry or abort", line)
	}
}

// activeLine says which pods a blue-green release's Service serves.
func activeLine(c *platformv1.CanaryStatus) string {
	switch c.Active {
	case platformv1.TrackPreview:
		return "Active: the preview's pods serve the application's Service (switched)"
	case platformv1.TrackStable:
		return "Active: the stable pods serve the application's Service; the preview is reached by its own"
	}
	return "Active: -"
}

// blueGreenStepLine says where a blue-green release is: "Step: preview,
// ready 2m ago, promotion due in 3m", "Step: preview, switched, ready 10s
// ago, old pods due to go in 20s", or promoting.
func blueGreenStepLine(s *platformv1.CanaryStepStatus, now time.Time) string {
	i := ptr.Deref(s.Index, 0)
	if i >= s.Total {
		return "Step: promoting (the stable pods take the preview's version, then the Service returns to them)"
	}
	var b strings.Builder
	b.WriteString("Step: preview")
	due := "promotion due"
	if i == release.BlueGreenSwitched {
		b.WriteString(", switched")
		due = "old pods due to go"
	}
	if s.ReadyAt != nil {
		fmt.Fprintf(&b, ", ready %s", core.Relative(s.ReadyAt.Time, now))
	}
	if u := s.PauseUntil; u != nil {
		fmt.Fprintf(&b, ", %s %s", due, core.Relative(u.Time, now))
	}
	return b.String()
}

// stepLine says where a canary is in its steps: "Step 2/3, started 5m ago,
// ready 4m ago, pause ends in 60s", or that it is being promoted.
func stepLine(s *platformv1.CanaryStepStatus, now time.Time) string {
	i := ptr.Deref(s.Index, 0)
	if i >= s.Total {
		return "Step: promoting (every step done; the stable pods take the canary's version)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Step: %d/%d", i+1, s.Total)
	for _, t := range []struct {
		what string
		at   *metav1.Time
	}{{"started", s.StartedAt}, {"ready", s.ReadyAt}} {
		if t.at != nil {
			fmt.Fprintf(&b, ", %s %s", t.what, core.Relative(t.at.Time, now))
		}
	}
	if u := s.PauseUntil; u != nil {
		ends := "ends"
		if !u.After(now) {
			ends = "ended"
		}
		fmt.Fprintf(&b, ", pause %s %s", ends, core.Relative(u.Time, now))
	}
	return b.String()
}

// pendingRequests are the request annotations whose value the operator has
// not acknowledged yet: "promote=2026-11-29T12:00:00Z".
func pendingRequests(ad *platformv1.AppDeployment) []string {
	var out []string
	for _, r := range requests {
		if v := ad.Annotations[r.annotation]; v != "" && v != r.handled(&ad.Status.HandledRequests) {
			out = append(out, r.verb+"="+v)
		}
	}
	return out
}

// outcomeLine says how a release ended: "RolledBack v1.2.4 (7b9e1a) 3m
// ago: CanaryFailed: <message>".
func outcomeLine(o *platformv1.Outcome, now time.Time) string {
	line := fmt.Sprintf("%s %s", o.Result, revisionName(o.Version, o.Revision))
	if o.FinishedAt != nil {
		line += " " + core.Relative(o.FinishedAt.Time, now)
	}
	// A reason that repeats the result ("Promoted: Promoted") says nothing.
	if o.Reason != "" && o.Reason != string(o.Result) {
		line += ": " + o.Reason
	}
	if o.Message != "" {
		line += ": " + o.Message
	}
	return line
}

// revisionName is "v1.2.3 (5d8f7c)", or the revision alone without a version.
func revisionName(version, revision string) string {
	if version == "" {
		return revision
	}
	return fmt.Sprintf("%s (%s)", version, revision)
}

// percent renders a weight, "-" when unknown.
func percent(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%d%%", *p)
}

// promotedAt renders when a revision was promoted, "-" when not recorded.
func promotedAt(t *metav1.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	return core.Relative(t.Time, now)
}
