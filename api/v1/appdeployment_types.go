// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// StrategyType is how a new version of an application is released.
// +kubebuilder:validation:Enum=rolling;recreate;canary;blueGreen
type StrategyType string

const (
	// StrategyRolling replaces pods a few at a time (a Deployment's
	// RollingUpdate).
	StrategyRolling StrategyType = "rolling"
	// StrategyRecreate stops every old pod before starting new ones.
	StrategyRecreate StrategyType = "recreate"
	// StrategyCanary gives the new version a share of the pods first and
	// promotes it step by step.
	StrategyCanary StrategyType = "canary"
	// StrategyBlueGreen runs the new version at full size beside the old
	// one, behind a preview Service, and switches the application's Service
	// to it in one write.
	StrategyBlueGreen StrategyType = "blueGreen"
)

// Approval says who completes a canary step once its other conditions hold.
// +kubebuilder:validation:Enum=Auto;Manual
type Approval string

const (
	// ApprovalAuto completes the step by itself.
	ApprovalAuto Approval = "Auto"
	// ApprovalManual waits for a person to promote.
	ApprovalManual Approval = "Manual"
)

// FailurePolicy says what a failed canary does.
// +kubebuilder:validation:Enum=Rollback;Pause
type FailurePolicy string

const (
	// FailureRollback removes the canary and keeps the stable version.
	FailureRollback FailurePolicy = "Rollback"
	// FailurePause holds the canary where it is for a person to decide.
	FailurePause FailurePolicy = "Pause"
)

// NoDataPolicy says what a canary does while its analysis has no data.
// +kubebuilder:validation:Enum=Pause;Rollback
type NoDataPolicy string

const (
	// NoDataPause holds the canary until data arrives.
	NoDataPause NoDataPolicy = "Pause"
	// NoDataRollback rolls the canary back after failureLimit NoData
	// measurements in a row.
	NoDataRollback NoDataPolicy = "Rollback"
)

// MeasurementResult is what one measurement of a criterion found.
// +kubebuilder:validation:Enum=Pass;Fail;NoData;Error;Invalid
type MeasurementResult string

const (
	// MeasurementPass: the value meets the criterion.
	MeasurementPass MeasurementResult = "Pass"
	// MeasurementFail: the value does not meet the criterion.
	MeasurementFail MeasurementResult = "Fail"
	// MeasurementNoData: nothing to judge: an empty result, NaN, an
	// infinity, or fewer samples than analysis.minSamples.
	MeasurementNoData MeasurementResult = "NoData"
	// MeasurementError: Prometheus did not answer (unreachable, timeout,
	// 5xx, an answer that does not parse).
	MeasurementError MeasurementResult = "Error"
	// MeasurementInvalid: the query is wrong: Prometheus refused it (HTTP
	// 400), or it returned more than one series.
	MeasurementInvalid MeasurementResult = "Invalid"
)

// Metric names a built-in measurement of the canary.
// +kubebuilder:validation:Enum=error_rate;success_rate;latency_p95;latency_p99
type Metric string

const (
	// MetricErrorRate is the percent of responses with a 5xx code; the
	// threshold is a maximum.
	MetricErrorRate Metric = "error_rate"
	// MetricSuccessRate is the percent of responses without a 5xx code; the
	// threshold is a minimum.
	MetricSuccessRate Metric = "success_rate"
	// MetricLatencyP95 and MetricLatencyP99 are response time quantiles in
	// seconds; the threshold is a maximum.
	MetricLatencyP95 Metric = "latency_p95"
	MetricLatencyP99 Metric = "latency_p99"
)

// Phase is where an AppDeployment is, in one word.
// +kubebuilder:validation:Enum=Healthy;Progressing;Paused;Degraded
type Phase string

const (
	// PhaseHealthy: the spec's version is the stable one and enough of its
	// pods are ready.
	PhaseHealthy Phase = "Healthy"
	// PhaseProgressing: a new version is being rolled out or canaried.
	PhaseProgressing Phase = "Progressing"
	// PhasePaused: a canary waits (pauseReason says for what).
	PhasePaused Phase = "Paused"
	// PhaseDegraded: the spec's version was rolled back or aborted, or the
	// application has too few ready pods.
	PhaseDegraded Phase = "Degraded"
)

// PauseReason says why a canary waits.
// +kubebuilder:validation:Enum=Manual;Approval;NoData;ProviderError;InvalidQuery;RouteNotAccepted
type PauseReason string

const (
	// PauseManual: spec.paused is true.
	PauseManual PauseReason = "Manual"
	// PauseApproval: the step waits for a person to promote.
	PauseApproval PauseReason = "Approval"
	// PauseNoData: the analysis has no data to judge the canary by.
	PauseNoData PauseReason = "NoData"
	// PauseProviderError: the metrics provider did not answer for longer
	// than the grace period.
	PauseProviderError PauseReason = "ProviderError"
	// PauseInvalidQuery: a criterion's query is wrong; it is never promoted.
	PauseInvalidQuery PauseReason = "InvalidQuery"
	// PauseRouteNotAccepted: a weighted canary's HTTPRoute does not carry
	// the step's weights yet: it is missing or does not send to the
	// application's Service, or its gateways have not accepted it (the
	// message says which and what they said).
	PauseRouteNotAccepted PauseReason = "RouteNotAccepted"
)

// OutcomeResult is how a release of a version ended.
// +kubebuilder:validation:Enum=Promoted;RolledBack;Aborted
type OutcomeResult string

const (
	// OutcomePromoted: the version became the stable one.
	OutcomePromoted OutcomeResult = "Promoted"
	// OutcomeRolledBack: the version failed and was removed.
	OutcomeRolledBack OutcomeResult = "RolledBack"
	// OutcomeAborted: a person stopped the version's canary.
	OutcomeAborted OutcomeResult = "Aborted"
)

// Condition types and reasons of an AppDeployment, beside ConditionReady.
const (
	// ConditionAvailable is True when enough pods of some version are ready.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while a new version is being released.
	ConditionProgressing = "Progressing"

	// ReasonReleased: the spec's revision is stable and available.
	ReasonReleased = "Released"
	// ReasonRollingOut: a rolling or recreate update is under way.
	ReasonRollingOut = "RollingOut"
	// ReasonCanarying: a canary of the spec's revision is under way.
	ReasonCanarying = "Canarying"
	// ReasonRolledBack and ReasonAborted: the spec's revision was removed;
	// it is not released until the spec changes or a retry is asked for.
	ReasonRolledBack = "RolledBack"
	ReasonAborted    = "Aborted"
	// ReasonNameTaken: a Deployment or Service with a child's name exists
	// and is not the AppDeployment's; it is never adopted.
	ReasonNameTaken = "NameTaken"
	// ReasonMinimumReplicas and ReasonMinimumReplicasUnavailable: whether
	// enough pods are ready.
	ReasonMinimumReplicas            = "MinimumReplicasAvailable"
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
	// ReasonCanaryFailed: the canary failed and rollback.onFailure Pause
	// holds it for a retry or an abort.
	ReasonCanaryFailed = "CanaryFailed"
	// ReasonProgressDeadlineExceeded: the stable Deployment's rollout made
	// no progress within progressDeadlineSeconds.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonPodsForbidden: admission refuses the pods of a track (Pod
	// Security, a LimitRange, another webhook), as its Deployment's
	// ReplicaFailure condition says; the message is the API server's.
	ReasonPodsForbidden = "PodsForbidden"
	// ReasonQuotaExceeded: a ResourceQuota refuses the pods of a track.
	ReasonQuotaExceeded = "QuotaExceeded"
	// ReasonApplyFailed: the API server refused the apply of a child (a
	// Deployment or the Service); the message is its answer.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonPaused: spec.paused holds the release.
	ReasonPaused = "Paused"
	// ReasonWaitingForApproval: a canary step waits for promote.
	ReasonWaitingForApproval = "WaitingForApproval"
	// ReasonWorkloadNotFound: the Deployment spec.workloadRef names does
	// not exist (yet); the AppDeployment's own pods, if any, are left as
	// they are.
	ReasonWorkloadNotFound = "WorkloadNotFound"
	// ReasonWorkloadReplaced: the Deployment spec.workloadRef names was
	// deleted and made again (another UID than status.workload.uid); the
	// AppDeployment does not follow it silently.
	ReasonWorkloadReplaced = "WorkloadReplaced"

	// Reasons of an outcome (lastOutcome.reason) that ended in Promoted:
	// ReasonPromoted, a canary's last step completed; ReasonRolledOut, a
	// rolling or recreate release finished; ReasonPreviousRevision, a
	// revision promoted before was gone back to without a canary;
	// ReasonCreated, the first version of the application.
	ReasonPromoted         = "Promoted"
	ReasonRolledOut        = "RolledOut"
	ReasonPreviousRevision = "PreviousRevision"
	ReasonCreated          = "Created"
)

// Labels of an AppDeployment's pods, and the annotations that ask the
// operator to act on its canary. Queries and users' monitors select on the
// labels: they are part of the API.
const (
	// AppNameLabel names the AppDeployment on its Deployments, pods and
	// Service; the Service selects on it alone, so traffic divides over the
	// ready pods of both tracks.
	AppNameLabel = "app.kubernetes.io/name"
	// AppVersionLabel is the pod's version.
	AppVersionLabel = "app.kubernetes.io/version"
	// TrackLabel is stable or canary.
	TrackLabel = "platform.example.com/track"
	// RevisionLabel is the hash of the pod template.
	RevisionLabel = "platform.example.com/revision"
	// TrackStable, TrackCanary and TrackPreview are the values of
	// TrackLabel: a blue-green release's new version runs as the preview.
	TrackStable  = "stable"
	TrackCanary  = "canary"
	TrackPreview = "preview"
	// CanarySuffix ends the name of the canary Deployment, PreviewSuffix
	// that of a blue-green release's preview Deployment and Service;
	// admission refuses AppDeployment names that end with either.
	CanarySuffix  = "-canary"
	PreviewSuffix = "-preview"

	// PromoteAnnotation, AbortAnnotation and RetryAnnotation each ask for
	// one action when set to a value not acted on before; the status's
	// handledRequests acknowledges each.
	PromoteAnnotation = "platform.example.com/promote"
	AbortAnnotation   = "platform.example.com/abort"
	RetryAnnotation   = "platform.example.com/retry"
	// RequestedBySuffix makes, appended to a request annotation, the
	// annotation in which admission records the user who set the request's
	// value (platform.example.com/promote-requested-by, ...).
	RequestedBySuffix = "-requested-by"
)

// Bounds and defaults of an AppDeployment.
const (
	// MaxAppReplicas is the most pods an AppDeployment may ask for: a guard
	// rail against a typo taking the cluster.
	MaxAppReplicas = 100
	// MaxCanarySteps is the most steps a canary may have.
	MaxCanarySteps = 20
	// MaxCanaryCriteria is the most criteria a canary may have.
	MaxCanaryCriteria = 10
	// MaxRevisionHistory is the highest revisionHistoryLimit.
	MaxRevisionHistory = 50
	// DefaultRevisionHistoryLimit is revisionHistoryLimit when unset.
	DefaultRevisionHistoryLimit int32 = 10
	// DefaultProgressDeadlineSeconds is progressDeadlineSeconds when unset.
	DefaultProgressDeadlineSeconds int32 = 600
	// DefaultAnalysisIntervalSeconds, DefaultMinMeasurements,
	// DefaultFailureLimit and DefaultMinSamples are the analysis settings
	// when unset.
	DefaultAnalysisIntervalSeconds int32 = 60
	DefaultMinMeasurements         int32 = 3
	DefaultFailureLimit            int32 = 2
	DefaultMinSamples              int32 = 10
	// DefaultProviderErrorGraceSeconds is providerErrorGraceSeconds when
	// unset.
	DefaultProviderErrorGraceSeconds int32 = 300
	// DefaultScaleDownDelaySeconds is a blue-green release's
	// scaleDownDelaySeconds when unset.
	DefaultScaleDownDelaySeconds int32 = 30
	// MaxRequestValueLength is the longest value of a request annotation.
	MaxRequestValueLength = 63
)

// HealthCheck is the HTTP check the operator turns into the pods' readiness
// and liveness probes.
type HealthCheck struct {
	// path is the HTTP path to GET, e.g. /healthz. At most 1024 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must start with /"
	Path string `json:"path,omitempty"`

	// port is the port to check; spec.port when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// initialDelaySeconds is how long after a container starts the first
	// check runs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	InitialDelaySeconds *int32 `json:"initialDelaySeconds,omitempty"`

	// periodSeconds is how often the check runs.
	// +optional
	// +default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`

	// failureThreshold is how many failed checks in a row make a pod unready
	// (readiness) or restart it (liveness).
	// +optional
	// +default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	FailureThreshold int32 `json:"failureThreshold,omitempty"`

	// successThreshold is how many passed checks in a row make a pod ready.
	// +optional
	// +default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	SuccessThreshold int32 `json:"successThreshold,omitempty"`
}

// CanaryStep is one stage of a canary: a share of the pods, then a wait.
type CanaryStep struct {
	// weight is the percent of the pods that run the new version during the
	// step, 1 to 99; each step's weight is higher than the one before.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=99
	Weight int32 `json:"weight,omitempty"`

	// pauseSeconds is how long the step lasts at least, once its canary pods
	// are ready.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	PauseSeconds *int32 `json:"pauseSeconds,omitempty"`

	// approval says whether the step completes by itself (Auto) or waits for
	// `kubectl appdeploy promote` (Manual). Unset: Manual when nothing judges
	// the step (no canaryCriteria and no pause), Auto otherwise.
	// +optional
	Approval Approval `json:"approval,omitempty"`

	// canaryReplicas is how many canary pods run during the step, with
	// trafficRouting only (the route, not the pods, decides the canary's
	// share of requests). Unset: the weight's share of replicas, at least
	// one pod.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	CanaryReplicas int32 `json:"canaryReplicas,omitempty"`

	// headerRoute sends, for as long as the step lasts, the requests that
	// carry the given headers to the canary alone, with trafficRouting only:
	// testers reach the new version on purpose, everyone else by weight.
	// +optional
	HeaderRoute HeaderRoute `json:"headerRoute,omitzero"`
}

// HeaderRoute names the requests a step sends to the canary alone: those
// whose headers match all of matches.
type HeaderRoute struct {
	// matches are the header matches, all of which a request must meet; at
	// most 16, one per header name (the Gateway API's limits).
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Matches []HeaderMatch `json:"matches,omitempty"`
}

// HeaderMatchType is how a header's value is matched.
// +kubebuilder:validation:Enum=Exact;RegularExpression
type HeaderMatchType string

const (
	// HeaderMatchExact matches the value as written.
	HeaderMatchExact HeaderMatchType = "Exact"
	// HeaderMatchRegularExpression matches the value against a regular
	// expression, in the dialect of the gateway; not every gateway supports
	// it (the Gateway API's "implementation-specific" support).
	HeaderMatchRegularExpression HeaderMatchType = "RegularExpression"
)

// HeaderMatch is one header a request must carry, in the Gateway API's
// shape (HTTPHeaderMatch).
type HeaderMatch struct {
	// type is Exact (the default) or RegularExpression.
	// +optional
	// +default="Exact"
	Type HeaderMatchType `json:"type,omitempty"`

	// name is the header's name, matched without regard to case. At most
	// 256 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	Name string `json:"name,omitempty"`

	// value is the header's value, or the regular expression it must match.
	// At most 4096 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value,omitempty"`
}

// CanaryCriterion is one check a canary step must pass, measured in
// Prometheus every analysis interval: a built-in metric against a
// threshold, or a PromQL query whose result a CEL condition judges.
// +kubebuilder:validation:XValidation:rule="has(self.metric) != has(self.query)",message="set exactly one of metric (a built-in measurement) or query (PromQL)"
// +kubebuilder:validation:XValidation:rule="!has(self.metric) || has(self.threshold)",message="a metric needs a threshold"
// +kubebuilder:validation:XValidation:rule="!has(self.query) || (has(self.name) && has(self.successCondition))",message="a query needs a name and a successCondition"
// +kubebuilder:validation:XValidation:rule="has(self.query) || (!has(self.successCondition) && !has(self.samplesQuery))",message="successCondition and samplesQuery apply to a query; a metric has its threshold and counts its own requests"
// +kubebuilder:validation:XValidation:rule="!has(self.query) || !has(self.threshold)",message="threshold applies to a metric; a query is judged by its successCondition"
type CanaryCriterion struct {
	// name names the criterion in status, events and metrics; unique among
	// the criteria. A metric's criterion is named after the metric unless
	// name is set; a query's must be named. Lower case letters, digits, '-'
	// and '_', at most 63 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`

	// metric is a built-in measurement: error_rate or success_rate (percent
	// of responses), latency_p95 or latency_p99 (seconds), computed from
	// http_requests_total and http_request_duration_seconds.
	// +optional
	Metric Metric `json:"metric,omitempty"`

	// threshold is the limit of the metric: a maximum, except for
	// success_rate, where it is a minimum. error_rate 0.5 means at most
	// 0.5 % of responses may fail.
	// ---
	// Exception to kube-api-linter's nofloats: the design documents write
	// thresholds as plain numbers (0.5, 99.9, 0.25), and a resource.Quantity
	// or a string would make users quote them.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Threshold *float64 `json:"threshold,omitempty"` //nolint:kubeapilinter // a plain number, see above

	// query is a PromQL query that returns one number, with template
	// variables {{namespace}}, {{name}}, {{version}}, {{revision}}, {{track}}
	// and {{interval}} (e.g. 60s) filled in for the track measured. At most
	// 4096 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Query string `json:"query,omitempty"`

	// successCondition is a CEL expression over result, the query's value
	// (a double), that is true when the canary passes: "result < 0.05".
	// At most 1024 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	SuccessCondition string `json:"successCondition,omitempty"`

	// samplesQuery is a PromQL query, with the same variables, for how many
	// samples (requests, say) the measurement rests on: fewer than
	// analysis.minSamples make it NoData. Without it a query has no sample
	// guard. At most 4096 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	SamplesQuery string `json:"samplesQuery,omitempty"`

	// compareToStable judges the canary against the stable track as well:
	// the same query for the stable pods, and the canary may be worse by at
	// most maxDelta and/or maxRatio. ANDed with the threshold or condition.
	// +optional
	CompareToStable CompareToStable `json:"compareToStable,omitzero"`
}

// CompareToStable bounds how much worse than the stable track the canary
// may measure, in the metric's own units. Worse is higher, except for
// success_rate, where it is lower.
// +kubebuilder:validation:MinProperties=1
type CompareToStable struct {
	// maxDelta is how much worse the canary may be, as a difference:
	// error_rate maxDelta 0.2 allows stable 0.1 % and canary 0.3 %.
	// ---
	// Exception to kube-api-linter's nofloats: see threshold.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxDelta *float64 `json:"maxDelta,omitempty"` //nolint:kubeapilinter // a plain number, see threshold

	// maxRatio is how much worse the canary may be, as a ratio of canary to
	// stable (of stable to canary for success_rate): latency_p99 maxRatio
	// 1.2 allows 20 % slower.
	// ---
	// Exception to kube-api-linter's nofloats: see threshold.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxRatio *float64 `json:"maxRatio,omitempty"` //nolint:kubeapilinter // a plain number, see threshold
}

// Analysis tunes how the canary criteria are measured.
// +kubebuilder:validation:MinProperties=1
type Analysis struct {
	// intervalSeconds is how often the criteria are measured, and the
	// window each measurement covers (5 to 3600; 60 when unset).
	// +optional
	// +default=60
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=3600
	IntervalSeconds int32 `json:"intervalSeconds,omitempty"`

	// minMeasurements is how many Passes each criterion needs in a step
	// before the step completes (1 to 100; 3 when unset).
	// +optional
	// +default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MinMeasurements int32 `json:"minMeasurements,omitempty"`

	// failureLimit is how many consecutive Fails of one criterion fail the
	// canary (1 to 100; 2 when unset).
	// +optional
	// +default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	FailureLimit int32 `json:"failureLimit,omitempty"`

	// minSamples is the fewest samples a measurement rests on: requests in
	// the interval for the built-in metrics, samplesQuery's value for a
	// query that has one. Fewer make the measurement NoData (0 to 1000000;
	// 10 when unset).
	// +optional
	// +default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	MinSamples *int32 `json:"minSamples,omitempty"`
}

// Strategy is how a new version is released.
// +kubebuilder:validation:XValidation:rule="(has(self.type) && self.type == 'canary') || (!has(self.canaryPercent) && !has(self.steps) && !has(self.canaryCriteria) && !has(self.analysis))",message="canaryPercent, steps, canaryCriteria and analysis apply only to type canary"
// +kubebuilder:validation:XValidation:rule="!has(self.blueGreen) || (has(self.type) && self.type == 'blueGreen')",message="blueGreen applies only to type blueGreen",fieldPath=".blueGreen"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'canary' || has(self.canaryPercent) != has(self.steps)",message="a canary needs exactly one of canaryPercent or steps"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type == 'rolling' || (!has(self.maxSurge) && !has(self.maxUnavailable))",message="maxSurge and maxUnavailable apply only to type rolling"
// +kubebuilder:validation:XValidation:rule="!has(self.trafficRouting) || (has(self.type) && (self.type == 'canary' || self.type == 'blueGreen'))",message="trafficRouting applies only to types canary and blueGreen",fieldPath=".trafficRouting"
// +kubebuilder:validation:XValidation:rule="has(self.trafficRouting) || !has(self.steps) || self.steps.all(s, !has(s.canaryReplicas) && !has(s.headerRoute))",message="canaryReplicas and headerRoute need trafficRouting: without a router the canary's share of requests is its share of the pods",fieldPath=".steps"
type Strategy struct {
	// type is rolling (the default), recreate, canary or blueGreen.
	// +optional
	// +default="rolling"
	Type StrategyType `json:"type,omitempty"`

	// maxSurge is how many pods above replicas a rolling update may add, as
	// a number or a percent; the Deployment's default (25%) when unset.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// maxUnavailable is how many pods below replicas a rolling update may
	// take away, as a number or a percent; the Deployment's default (25%)
	// when unset.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// canaryPercent is the share of the pods the canary gets, in one step
	// (1 to 99): shorthand for steps: [{weight: canaryPercent}].
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=99
	CanaryPercent int32 `json:"canaryPercent,omitempty"`

	// steps are the canary's stages, in order; at most 20, with increasing
	// weights.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	Steps []CanaryStep `json:"steps,omitempty"`

	// canaryCriteria are the checks every step must pass, measured in
	// Prometheus. At most 10.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, (has(b.name) ? b.name : b.metric) == (has(a.name) ? a.name : a.metric)))",message="criteria names must be unique (a metric's criterion is named after its metric unless name is set)"
	// ---
	// Exception to kube-api-linter's arrayofstruct: a criterion has exactly
	// one of metric and query (a CEL rule of CanaryCriterion), so neither
	// can be required on its own.
	CanaryCriteria []CanaryCriterion `json:"canaryCriteria,omitempty"` //nolint:kubeapilinter // one of metric or query, see above

	// analysis tunes how canaryCriteria are measured.
	// +optional
	Analysis Analysis `json:"analysis,omitzero"`

	// trafficRouting moves the canary's share of requests by weight on a
	// router, exactly at any number of pods; unset, the canary's share is
	// its share of the pods behind the one Service.
	// +optional
	TrafficRouting TrafficRouting `json:"trafficRouting,omitzero"`

	// blueGreen tunes a blue-green release (type blueGreen).
	// +optional
	BlueGreen BlueGreenStrategy `json:"blueGreen,omitzero"`
}

// BlueGreenStrategy tunes a blue-green release: the new version runs at
// full size in the Deployment <name>-preview, behind the Service
// <name>-preview, while the Service <name> keeps selecting the stable
// pods. Promotion switches the Service <name> to the preview's pods in one
// write and keeps the old pods, still running, for scaleDownDelaySeconds
// while postPromotionAnalysis runs (a failure switches back); then the
// stable Deployment takes the new version, the Service returns to it once
// it is ready, and the preview goes. Unset, every setting has its default.
// +kubebuilder:validation:MinProperties=1
type BlueGreenStrategy struct {
	// autoPromotionSeconds is how long the preview's pods run, ready, before
	// promotion starts by itself (once prePromotionAnalysis has passed).
	// Unset: promotion waits for `kubectl appdeploy promote` (0 to 86400).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	AutoPromotionSeconds *int32 `json:"autoPromotionSeconds,omitempty"`

	// scaleDownDelaySeconds is how long the old pods keep running after the
	// switch, ready to be switched back to, while postPromotionAnalysis
	// runs (0 to 86400; 30 when unset).
	// +optional
	// +default=30
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	ScaleDownDelaySeconds *int32 `json:"scaleDownDelaySeconds,omitempty"`

	// prePromotionAnalysis judges the preview's pods before the switch,
	// on the requests the preview Service gets.
	// +optional
	PrePromotionAnalysis BlueGreenAnalysis `json:"prePromotionAnalysis,omitzero"`

	// postPromotionAnalysis judges the new version's pods after the
	// switch, on all the application's requests; a failure switches the
	// Service back to the old pods.
	// +optional
	PostPromotionAnalysis BlueGreenAnalysis `json:"postPromotionAnalysis,omitzero"`
}

// BlueGreenAnalysis is what one side of a blue-green switch is judged by:
// criteria of the canary's kind, measured with the same settings.
type BlueGreenAnalysis struct {
	// criteria are the checks the new version's pods must pass, measured in
	// Prometheus. At most 10.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, (has(b.name) ? b.name : b.metric) == (has(a.name) ? a.name : a.metric)))",message="criteria names must be unique (a metric's criterion is named after its metric unless name is set)"
	// ---
	// Exception to kube-api-linter's arrayofstruct, as for canaryCriteria.
	Criteria []CanaryCriterion `json:"criteria,omitempty"` //nolint:kubeapilinter // one of metric or query, see canaryCriteria

	// analysis tunes how criteria are measured.
	// +optional
	Analysis Analysis `json:"analysis,omitzero"`
}

// TrafficRouting says which router moves a canary's requests.
type TrafficRouting struct {
	// gatewayAPI sets the backend weights of an HTTPRoute of the Gateway
	// API (gateway.networking.k8s.io/v1).
	// +required
	GatewayAPI GatewayAPIRouting `json:"gatewayAPI,omitzero"`
}

// GatewayAPIRouting names the HTTPRoute, and the rules of it, whose backend
// weights a release moves. The operator keeps two Services, <name> (stable
// pods) and <name>-canary (canary pods) or, blue-green, <name>-preview
// (the preview's pods, weight 0 until the switch, then 100 until the
// stable pods run the new version), and in each targeted rule sets the
// weights of the backendRefs naming them; everything else in the route
// stays as its owner wrote it.
type GatewayAPIRouting struct {
	// httpRoute is the HTTPRoute's name, in the AppDeployment's namespace.
	// Whoever writes the AppDeployment must be allowed to update it. At most
	// 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	HTTPRoute string `json:"httpRoute,omitempty"`

	// rules are the names of the route's rules whose weights move (rule
	// names need the Gateway API v1.4 or later). Unset: every rule with a
	// backendRef naming the Service <name>. At most 16.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Rules []string `json:"rules,omitempty"`
}

// RollbackPolicy says what a failed release does and what is remembered.
type RollbackPolicy struct {
	// onFailure is what a failed canary does: Rollback (the default) removes
	// it, Pause holds it for a person.
	// +optional
	// +default="Rollback"
	OnFailure FailurePolicy `json:"onFailure,omitempty"`

	// revisionHistoryLimit is how many promoted revisions the status keeps,
	// for `kubectl appdeploy undo` and fast rollback (0 to 50).
	// +optional
	// +default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// onNoData is what a canary does while its analysis has no data (no
	// traffic, too few samples): Pause (the default) holds it, resuming by
	// itself when data arrives; Rollback rolls it back after
	// analysis.failureLimit NoData measurements in a row. NoData never
	// counts as a Pass.
	// +optional
	// +default="Pause"
	OnNoData NoDataPolicy `json:"onNoData,omitempty"`

	// providerErrorGraceSeconds is how long Prometheus may fail to answer
	// before the canary pauses with reason ProviderError (10 to 86400; 300
	// when unset). Meanwhile the step's clock stops and measurements go on;
	// the canary resumes by itself when Prometheus answers.
	// +optional
	// +default=300
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	ProviderErrorGraceSeconds int32 `json:"providerErrorGraceSeconds,omitempty"`
}

// WorkloadRef names the Deployment an AppDeployment takes its pod template
// from.
type WorkloadRef struct {
	// name is the Deployment's name, in the AppDeployment's namespace; not
	// the AppDeployment's own name nor its canary's. At most 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
}

// Adopts reports whether the spec adopts a Deployment (workloadRef set).
func (s *AppDeploymentSpec) Adopts() bool {
	return s.WorkloadRef.Name != ""
}

// WorkloadFinalizer is on an AppDeployment with a workloadRef, so that the
// operator scales the referenced Deployment back up before the
// AppDeployment and its pods go.
const WorkloadFinalizer = "platform.example.com/restore-workload"

// WorkloadStatus is the Deployment an AppDeployment's workloadRef was
// found to name.
type WorkloadStatus struct {
	// name is the Deployment's name. At most 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// uid is the Deployment's UID, pinned when it was first read: another
	// Deployment of the name is not followed. At most 128 characters.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	UID types.UID `json:"uid,omitempty"`
}

// AppDeploymentSpec describes an application (what to run) and how a new
// version of it is released.
// +kubebuilder:validation:XValidation:rule="!has(self.healthCheck) || has(self.healthCheck.port) || has(self.port)",message="needs healthCheck.port or spec.port: the port to check",fieldPath=".healthCheck"
// +kubebuilder:validation:XValidation:rule="has(self.image) != has(self.workloadRef)",message="exactly one of image and workloadRef must be set",fieldPath=".image"
// +kubebuilder:validation:XValidation:rule="!has(self.workloadRef) || !has(self.template)",message="must not be set with workloadRef: the pod template is the referenced Deployment's",fieldPath=".template"
// +kubebuilder:validation:XValidation:rule="!has(self.strategy) || !has(self.strategy.trafficRouting) || has(self.port)",message="trafficRouting needs port: the route sends to the Services that expose it",fieldPath=".port"
// +kubebuilder:validation:XValidation:rule="!has(self.strategy) || !has(self.strategy.type) || self.strategy.type != 'blueGreen' || has(self.port)",message="blueGreen needs port: promotion switches the Service that exposes it",fieldPath=".port"
type AppDeploymentSpec struct {
	// image is the container image, e.g. harbor.example.com/shop:v1.2.3. At
	// most 512 characters. Exactly one of image and workloadRef is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// version is the application's version, v followed by three numbers
	// (v1.2.3, v1.10.0; each part may have several digits). Unset: the
	// image's tag when it is such a version.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`
	Version string `json:"version,omitempty"`

	// replicas is the number of pods, 0 to 100.
	// +optional
	// +default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas *int32 `json:"replicas,omitempty"`

	// port is the container port the application serves on; when set, a
	// Service of the AppDeployment's name exposes it over the ready pods of
	// both tracks.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// The application container's command, args, env and resources, with
	// the bounds of a ScheduleTask's.
	ContainerFields `json:",inline"`

	// serviceAccountName is the ServiceAccount the pods use. At most 253
	// characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// healthCheck is the HTTP check behind the pods' readiness and liveness
	// probes; without it the pods have no probes and are ready once running.
	// +optional
	HealthCheck HealthCheck `json:"healthCheck,omitzero"`

	// template is the pod template of the application's pods: anything a
	// Deployment's pod template may say, such as volumes, envFrom,
	// imagePullSecrets, sidecars and init containers, probes of every
	// kind, node selectors, tolerations, affinity, topology spread,
	// priority class, termination grace period, and pod labels and
	// annotations. The fields above win: image, version, command, args,
	// env (by name), resources, port, healthCheck and serviceAccountName
	// apply to the application container, the template's container named
	// "app" (added first when the template has none); every other
	// container, volume and pod field passes through as written. Its
	// labels must not be the operator's (app.kubernetes.io/name,
	// app.kubernetes.io/version, app.kubernetes.io/managed-by or any
	// platform.example.com/ label), its restartPolicy, when set, must be
	// Always, and it holds at most 64 KiB as JSON.
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`

	// workloadRef names an existing Deployment in the AppDeployment's
	// namespace whose pod template the AppDeployment runs, as Argo
	// Rollouts' workloadRef: instead of image (exactly one of the two is
	// set) and template. The operator reads the Deployment on every pass;
	// a change of its pod template is a new revision, released by the
	// strategy. Once the AppDeployment's own stable pods are ready, the
	// Deployment is scaled to 0 (its scale subresource; it gets no owner
	// reference), and scaled back to the AppDeployment's replicas when the
	// AppDeployment is deleted. Its UID is pinned in status.workload: a
	// Deployment deleted and made again under the name is not followed.
	// The author must be allowed to get that Deployment and update its
	// deployments/scale.
	// +optional
	WorkloadRef WorkloadRef `json:"workloadRef,omitzero"`

	// progressDeadlineSeconds is how long a rollout or a canary step may
	// wait for its pods to become ready before it fails (default 600).
	// Pods that crash, restart or cannot pull their image fail a canary
	// sooner.
	// +optional
	// +default=600
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	ProgressDeadlineSeconds int32 `json:"progressDeadlineSeconds,omitempty"`

	// minReadySeconds is how long a new pod must be ready before it counts
	// as available.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// strategy is how a new version is released: rolling (the default),
	// recreate or canary.
	// ---
	// Exception to kube-api-linter's optionalfields: a value, not a pointer,
	// defaulted to {} so that the API server always stores it with its
	// fields defaulted; a pointer would only make every reader check for nil.
	// +optional
	// +default={}
	Strategy Strategy `json:"strategy,omitzero"` //nolint:kubeapilinter // defaulted value, see above

	// rollback says what a failed release does and how many promoted
	// revisions are remembered.
	// ---
	// Exception to kube-api-linter's optionalfields, as for strategy.
	// +optional
	// +default={}
	Rollback RollbackPolicy `json:"rollback,omitzero"` //nolint:kubeapilinter // defaulted value, see strategy

	// paused holds a canary where it is; a rolling or recreate update is
	// not paused.
	// ---
	// Exception to kube-api-linter's nobools: the issue and Deployment's own
	// spec.paused name it so.
	// +optional
	Paused bool `json:"paused,omitempty"` //nolint:kubeapilinter // mirrors Deployment's paused, see above
}

// CanaryWeight is the canary's share of the pods, in percent.
type CanaryWeight struct {
	// desired is the share the current step asks for.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Desired *int32 `json:"desired,omitempty"`

	// actual is the share the canary has, never the wish: its ready pods
	// over all ready pods of the application or, with trafficRouting, the
	// weight the route carries.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Actual *int32 `json:"actual,omitempty"`
}

// CanaryStepStatus is where a canary is in its steps. It cannot be observed
// from the children, so it is recorded before the operator acts on it.
type CanaryStepStatus struct {
	// index is the current step, from 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Index *int32 `json:"index,omitempty"`

	// total is the number of steps.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Total int32 `json:"total,omitempty"`

	// startedAt is when the current step began.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// readyAt is when the step's canary pods were first all ready; its
	// pause counts from then.
	// +optional
	ReadyAt *metav1.Time `json:"readyAt,omitempty"`

	// pauseUntil is when the step's pause ends.
	// +optional
	PauseUntil *metav1.Time `json:"pauseUntil,omitempty"`
}

// CanaryStatus is the canary in progress, or the blue-green release: its
// new version's pods are the preview's, and its steps are two, the preview
// (prePromotionAnalysis, then autoPromotionSeconds or a promote) and the
// switch (postPromotionAnalysis while the old pods wait
// scaleDownDelaySeconds); the index is 2 while the stable Deployment takes
// the new version.
type CanaryStatus struct {
	// revision is the canary's pod template hash.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Revision string `json:"revision,omitempty"`

	// version is the canary's version.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version,omitempty"`

	// replicas is the number of the canary's pods.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of the canary's ready pods.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// weight is the canary's share of the pods, desired and actual.
	// +optional
	Weight *CanaryWeight `json:"weight,omitempty"`

	// startedAt is when this canary (or its last retry) began: canary pods
	// made before it belong to an earlier attempt and are replaced.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// step is where the canary is in its steps; its index equals its total
	// while the stable Deployment takes the canary's version (promotion).
	// +optional
	Step *CanaryStepStatus `json:"step,omitempty"`

	// failure says why the canary failed when rollback.onFailure is Pause:
	// the canary is held as it is until a retry or an abort.
	// +optional
	Failure CanaryFailure `json:"failure,omitzero"`

	// analysis is the measurement of the canary against its criteria in
	// the current step.
	// +optional
	Analysis *AnalysisStatus `json:"analysis,omitempty"`

	// route is the HTTPRoute a weighted canary moves, as last read.
	// +optional
	Route RouteStatus `json:"route,omitzero"`

	// active is, in a blue-green release, the track whose pods the Service
	// <name> selects, as last read: stable before the switch, preview
	// after it until the stable Deployment runs the new version.
	// +optional
	// +kubebuilder:validation:Enum=stable;preview
	Active string `json:"active,omitempty"`
}

// RouteStatus is the HTTPRoute of a weighted canary as the operator last
// read it.
type RouteStatus struct {
	// name is the HTTPRoute's name. At most 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// rules are the rules whose weights the canary moves: their names, or
	// rules[i] for a rule without one. At most 16.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	Rules []string `json:"rules,omitempty"`

	// accepted is True when every gateway of the route has accepted its
	// current generation with its backends resolved, False when one has
	// refused it, and Unknown until each has said.
	// +optional
	// +kubebuilder:validation:Enum=True;False;Unknown
	Accepted metav1.ConditionStatus `json:"accepted,omitempty"`

	// message says what is missing or what a gateway said, when accepted is
	// not True. At most 1024 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// waitingSince is when the step's canary pods were ready and the route
	// did not carry the step's weight yet; unset once it does.
	// +optional
	WaitingSince *metav1.Time `json:"waitingSince,omitempty"`
}

// AnalysisStatus is what the analysis of a canary found so far: the
// preflight, and the measurements of one step. The counts start again with
// each step; those of a completed step stay until the next step's first
// measurement, as the evidence it completed on.
type AnalysisStatus struct {
	// step is the index of the step the counts are of.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Step *int32 `json:"step,omitempty"`

	// preflightAt is when each query was run once against the stable
	// track, before the canary's pods were made, and answered: no canary
	// pod is made before it is set.
	// +optional
	PreflightAt *metav1.Time `json:"preflightAt,omitempty"`

	// measuredAt is when the criteria were last measured.
	// +optional
	MeasuredAt *metav1.Time `json:"measuredAt,omitempty"`

	// providerErrorSince is since when Prometheus has not answered; unset
	// while it answers. The step's clock stops meanwhile.
	// +optional
	ProviderErrorSince *metav1.Time `json:"providerErrorSince,omitempty"`

	// delayedMeasurements counts the canary's measurements that started
	// more than an interval after they were due, because the operator's
	// slots for queries were taken (--analysis-max-in-flight, and
	// --analysis-max-in-flight-per-namespace for the namespace's own
	// canaries). Kept from step to step of one canary.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DelayedMeasurements *int32 `json:"delayedMeasurements,omitempty"`

	// invalidMeasurements counts the measurements in a row with an Invalid
	// result for the spec of generation invalidGeneration: the next one
	// waits twice as long each time, up to ten intervals, and any change
	// of the spec starts again at one.
	// +optional
	// +kubebuilder:validation:Minimum=0
	InvalidMeasurements *int32 `json:"invalidMeasurements,omitempty"`

	// invalidGeneration is the generation of the spec the Invalid
	// measurements were of (generations start at 1).
	// +optional
	// +kubebuilder:validation:Minimum=1
	InvalidGeneration int64 `json:"invalidGeneration,omitempty"`

	// criteria are the measurements of each criterion. At most 10.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	Criteria []CriterionStatus `json:"criteria,omitempty"`
}

// CriterionStatus is the measurements of one criterion in the current step.
type CriterionStatus struct {
	// name is the criterion's name (its metric's, unless named).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// lastResult is the result of the last measurement.
	// +optional
	LastResult MeasurementResult `json:"lastResult,omitempty"`

	// value is the canary's last measured value, as text ("0.12").
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Value string `json:"value,omitempty"`

	// stableValue is the stable track's last measured value, when the
	// criterion compares to stable.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	StableValue string `json:"stableValue,omitempty"`

	// threshold is what the value must meet, as text: "<= 0.5",
	// ">= 99.9" or the successCondition.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Threshold string `json:"threshold,omitempty"`

	// samples is how many samples (requests) the last measurement rested
	// on, when known.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Samples *int64 `json:"samples,omitempty"`

	// passes counts the step's measurements that passed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Passes *int32 `json:"passes,omitempty"`

	// fails counts the step's measurements that failed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Fails *int32 `json:"fails,omitempty"`

	// noData counts the step's measurements that had no data.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NoData *int32 `json:"noData,omitempty"`

	// errors counts the step's measurements Prometheus did not answer.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Errors *int32 `json:"errors,omitempty"`

	// consecutiveFails counts the Fails since the last other result;
	// failureLimit of them fail the canary. Errors neither break nor extend
	// the run.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ConsecutiveFails *int32 `json:"consecutiveFails,omitempty"`

	// consecutiveNoData counts the NoData results since the last other
	// result, for onNoData Rollback.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ConsecutiveNoData *int32 `json:"consecutiveNoData,omitempty"`

	// consecutiveTimeouts counts the measurements in a row whose query got
	// no answer in time (Prometheus gave up on it at the timeout it was
	// sent with, half the interval at most): a query too costly for the
	// shared Prometheus. From the third, the next measurement waits twice
	// as long each time, up to ten intervals, as after Invalid ones; an
	// answer starts again at one interval.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ConsecutiveTimeouts *int32 `json:"consecutiveTimeouts,omitempty"`

	// measuredAt is when the criterion was last measured.
	// +optional
	MeasuredAt *metav1.Time `json:"measuredAt,omitempty"`

	// message says what the last measurement found, for people:
	// "error_rate 0.12% <= 0.5% (n=812)".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// CanaryFailure is why a held canary failed.
type CanaryFailure struct {
	// reason is a CamelCase word for the failure, such as ImagePullBackOff,
	// CrashLoopBackOff, TooManyRestarts or ProgressDeadlineExceeded.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`

	// message says what failed, for people.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// failedAt is when the failure was found.
	// +optional
	FailedAt *metav1.Time `json:"failedAt,omitempty"`
}

// HandledRequests are the last value of each request annotation the
// operator acted on; a value is acted on once.
// +kubebuilder:validation:MinProperties=1
type HandledRequests struct {
	// promote is the handled value of the promote annotation.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Promote string `json:"promote,omitempty"`

	// abort is the handled value of the abort annotation.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Abort string `json:"abort,omitempty"`

	// retry is the handled value of the retry annotation.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Retry string `json:"retry,omitempty"`
}

// Outcome is how the release of a revision ended.
type Outcome struct {
	// revision is the released revision's pod template hash.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Revision string `json:"revision,omitempty"`

	// version is the released revision's version.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version,omitempty"`

	// result is Promoted, RolledBack or Aborted.
	// +required
	Result OutcomeResult `json:"result,omitempty"`

	// reason is a CamelCase word for why.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason,omitempty"`

	// message says why in one line for people.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// finishedAt is when the release ended.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// Revision is a promoted revision, kept for fast rollback and undo.
type Revision struct {
	// revision is the hash of the pod template.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Revision string `json:"revision,omitempty"`

	// version is the version the revision ran.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version,omitempty"`

	// image is the image the revision ran.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// promotedAt is when it became stable.
	// +optional
	PromotedAt *metav1.Time `json:"promotedAt,omitempty"`
}

// AppDeploymentStatus says what runs and where a release is: enough that
// kubectl, `kubectl wait` and CI never have to guess.
type AppDeploymentStatus struct {
	// conditions are Available (enough ready pods of some version),
	// Progressing (a release is under way) and Ready (the spec's revision is
	// stable and available: the CI gate). At most 16.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// phase is Healthy, Progressing, Paused or Degraded.
	// ---
	// Exception to kube-api-linter's nophase: the one-word summary the
	// design documents and `kubectl get` show; the conditions carry the same
	// facts for machines.
	// +optional
	Phase Phase `json:"phase,omitempty"` //nolint:kubeapilinter // one-word summary beside the conditions, see above

	// pauseReason says why a Paused canary waits.
	// +optional
	PauseReason PauseReason `json:"pauseReason,omitempty"`

	// message says in one line what is happening, e.g. "canary v1.2.4: 1/3
	// pods (33%), waiting for promotion".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// observedGeneration is the spec generation the status describes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// replicas is the number of the application's pods, both tracks.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of its ready pods.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// updatedReplicas is the number of its pods that run the spec's revision.
	// +optional
	// +kubebuilder:validation:Minimum=0
	UpdatedReplicas *int32 `json:"updatedReplicas,omitempty"`

	// availableReplicas is the number of its pods ready for minReadySeconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// selector is the label selector of the application's pods, for the
	// scale subresource (and so a HorizontalPodAutoscaler).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Selector string `json:"selector,omitempty"`

	// stableVersion is the version the stable Deployment runs.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	StableVersion string `json:"stableVersion,omitempty"`

	// stableImage is the image the stable Deployment runs.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	StableImage string `json:"stableImage,omitempty"`

	// stableRevision is the pod template hash the stable Deployment runs.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	StableRevision string `json:"stableRevision,omitempty"`

	// currentVersion is the version the spec asks for.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	CurrentVersion string `json:"currentVersion,omitempty"`

	// currentRevision is the pod template hash of the spec.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	CurrentRevision string `json:"currentRevision,omitempty"`

	// canary is the canary, or the blue-green release, in progress, if any.
	// +optional
	Canary *CanaryStatus `json:"canary,omitempty"`

	// workload is the Deployment spec.workloadRef names, as first found.
	// +optional
	Workload WorkloadStatus `json:"workload,omitzero"`

	// handledRequests are the request annotation values acted on.
	// +optional
	HandledRequests HandledRequests `json:"handledRequests,omitzero"`

	// lastOutcome is how the last release ended.
	// +optional
	LastOutcome Outcome `json:"lastOutcome,omitzero"`

	// revisions are the promoted revisions, newest first, at most
	// rollback.revisionHistoryLimit.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	Revisions []Revision `json:"revisions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=appdeploy,categories=platform
// +kubebuilder:validation:XValidation:rule="!self.metadata.name.endsWith('-canary')",message="metadata.name must not end with -canary: that name is the canary Deployment's"
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=`.spec.strategy.type`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.stableVersion`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Weight",type=integer,JSONPath=`.status.canary.weight.actual`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// AppDeployment is an application release unit: the operator owns the
// Deployments and the Service that run it, and releases each new version by
// rolling update, recreate, or a canary promoted step by step.
type AppDeployment struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is the application and how to release it.
	// ---
	// Exception to kube-api-linter's requiredfields: the schema lets no
	// spec be empty (a CEL rule requires image or workloadRef), which the
	// linter cannot see; a pointer would change every use for nothing.
	// +required
	Spec AppDeploymentSpec `json:"spec,omitzero"` //nolint:kubeapilinter // never empty, see above

	// status is the observed state of the application and its release.
	// ---
	// Exception to kube-api-linter's optionalfields, as ScheduleTask's.
	// +optional
	Status AppDeploymentStatus `json:"status,omitzero"` //nolint:kubeapilinter // status is a value, see ScheduleTask
}

// +kubebuilder:object:root=true

// AppDeploymentList contains a list of AppDeployment.
type AppDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []AppDeployment `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &AppDeployment{}, &AppDeploymentList{})
		return nil
	})
}
