// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package analysis

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// The built-in metrics read the series an application exports about its HTTP
// server, under the labels a PodMonitor or ServiceMonitor relabels onto them
// from the pod: namespace (added by the Scope), app (the app.kubernetes.io/name label, which is
// the AppDeployment's name), track (stable or canary) and revision (the pod
// template hash). revision keeps a canary's measurement to the pods of the
// revision under test when an older canary's series still sit in the
// window.
const (
	requestsTotal  = "http_requests_total"
	durationBucket = "http_request_duration_seconds_bucket"
)

// BuiltinQuery is the PromQL of a built-in metric for one track. It is empty
// for a metric this package does not know (Compile refuses those).
func BuiltinQuery(m platformv1.Metric, v Vars) string {
	sel, w := selector(v), window(v)
	switch m {
	case platformv1.MetricErrorRate:
		return errorRate(sel, w)
	case platformv1.MetricSuccessRate:
		// Subtracting from 100 keeps an empty error rate (no traffic) empty,
		// where a success count over the total would need its own or vector(0).
		return "100 - (" + errorRate(sel, w) + ")"
	case platformv1.MetricLatencyP95:
		return latency("0.95", sel, w)
	case platformv1.MetricLatencyP99:
		return latency("0.99", sel, w)
	}
	return ""
}

// SamplesQuery is the request count of one track in the interval (the built-in sample guard).
func SamplesQuery(v Vars) string {
	return fmt.Sprintf("sum(increase(%s{%s}[%s]))", requestsTotal, selector(v), window(v))
}

// errorRate is the percent of 5xx responses. Without a 5xx series the
// numerator would be empty and so would the whole quotient: or vector(0)
// makes that 0 %. The denominator has no such fallback, so no traffic at all
// stays empty and measures as NoData rather than as a perfect 0 %.
func errorRate(sel, w string) string {
	return fmt.Sprintf(`100 * (sum(rate(%s{%s,code=~"5.."}[%s])) or vector(0)) / sum(rate(%s{%s}[%s]))`,
		requestsTotal, sel, w, requestsTotal, sel, w)
}

// latency is a quantile of the response time in seconds. No requests in the
// window give NaN (every bucket's rate is 0), which measures as NoData.
func latency(q, sel, w string) string {
	return fmt.Sprintf("histogram_quantile(%s, sum by (le) (rate(%s{%s}[%s])))", q, durationBucket, sel, w)
}

// selector is the label matchers of one track, without braces. An empty
// revision is left out rather than matched as "no revision label". The
// namespace is not among them: the criterion's Scope adds it, under the label
// the platform's Prometheus puts it in, as to every query it sends.
func selector(v Vars) string {
	var b strings.Builder
	matcher := func(label, value string) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(label + `="` + promQLEscaper.Replace(value) + `"`)
	}
	matcher("app", v.Name)
	matcher("track", v.Track)
	if v.Revision != "" {
		matcher("revision", v.Revision)
	}
	return b.String()
}

// window is the range of the rates: the analysis interval, in seconds.
func window(v Vars) string {
	return strconv.FormatInt(int64(v.Interval/time.Second), 10) + "s"
}
