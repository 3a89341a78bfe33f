//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/localwebhook"
	"github.com/example/platform-operator/internal/yamldoc"
	"github.com/example/platform-operator/test/harness"
)

// The manager runs as its ServiceAccount with the generated RBAC only; these
// are the checks an administrator would run before trusting it.
func TestRBAC_OperatorHoldsWhatItNeedsAndNoMore(t *testing.T) {
	t.Parallel()
	canI := func(args ...string) bool {
		cmd := exec.CommandContext(t.Context(), filepath.Join(cluster.Repo, "bin", "kubectl"),
			append([]string{"--kubeconfig", cluster.Kubeconfig, "auth", "can-i", "--as", harness.OperatorUser}, args...)...)
		return cmd.Run() == nil
	}
	for _, yes := range [][]string{
		{"watch", "scheduletasks.platform.example.com", "-A"},
		{"update", "scheduletasks.platform.example.com", "--subresource=status", "-A"},
		{"create", "taskruns.platform.example.com", "-A"},
		{"create", "cronjobs.batch", "-A"},
		{"create", "jobs.batch", "-A"},
		{"list", "pods", "-A"},
		{"watch", "appdeployments.platform.example.com", "-A"},
		{"update", "appdeployments.platform.example.com", "--subresource=status", "-A"},
		{"patch", "deployments.apps", "-A"},
		{"patch", "services", "-A"},
		{"get", "httproutes.gateway.networking.k8s.io", "-A"},
		{"update", "httproutes.gateway.networking.k8s.io", "-A"},
		{"delete", "pods", "-A"},
		{"create", "subjectaccessreviews.authorization.k8s.io"},
		{"update", "leases.coordination.k8s.io", "-n", harness.OperatorNamespace},
		{"update", "secrets/platform-operator-webhook-server-cert", "-n", harness.OperatorNamespace},
	} {
		if !canI(yes...) {
			t.Errorf("operator may not %v; it needs to", yes)
		}
	}
	for _, no := range [][]string{
		{"get", "secrets", "-A"},
		{"get", "secrets", "-n", "default"},
		{"update", "secrets/other", "-n", harness.OperatorNamespace},
		{"create", "pods", "-A"},
		{"delete", "namespaces"},
		{"update", "jobs.batch", "-A"},
		{"update", "appdeployments.platform.example.com", "-A"},
		{"create", "replicasets.apps", "-A"},
		// A route is its owner's: the operator moves weights in it, never
		// makes, removes or lists them, nor touches a Gateway.
		{"create", "httproutes.gateway.networking.k8s.io", "-A"},
		{"delete", "httproutes.gateway.networking.k8s.io", "-A"},
		{"list", "httproutes.gateway.networking.k8s.io", "-A"},
		{"update", "gateways.gateway.networking.k8s.io", "-A"},
		{"create", "clusterrolebindings.rbac.authorization.k8s.io"},
		{"update", "leases.coordination.k8s.io", "-n", "default"},
		{"*", "*", "-A"},
	} {
		if canI(no...) {
			t.Errorf("operator may %v; it must not", no)
		}
	}
}

func TestMetrics_EndpointServesTheProjectsMetricsToAnAuthorizedToken(t *testing.T) {
	t.Parallel()
	judgedByPrometheus(t)
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)

	// A run that finishes, so the run counters have a series;
	// staleAfterSeconds, so the task has a freshness series; and a missed
	// fire time in its history (the status carries it; stopping this
	// cluster's controller-manager would stall the other tests), so it has
	// a missed-runs series.
	yearly := testutil.WithSchedule("0 0 1 1 *")
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "counted", yearly, staleAfter(3600)))).To(Succeed())
	g.Eventually(func() error {
		st := &platformv1.ScheduleTask{}
		if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "counted"}, st); err != nil {
			return err
		}
		if st.Status.ObservedGeneration == 0 {
			return fmt.Errorf("no status yet")
		}
		st.Status.MissedRuns = 1
		return cluster.Client.Status().Update(ctx, st)
	}).WithTimeout(settleTimeout).Should(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewManualTaskRun(ns, "counted-now", "counted"))).To(Succeed())
	// A task whose run fails, so the failure streak has a series.
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "failing", yearly,
		testutil.WithBackoffLimit(0), kwokPod(3, "")))).To(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewManualTaskRun(ns, "failing-now", "failing"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		want := map[string]platformv1.TaskRunPhase{
			"counted-now": platformv1.TaskRunSucceeded, "failing-now": platformv1.TaskRunFailed}
		for name, phase := range want {
			tr := &platformv1.TaskRun{}
			g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tr)).To(Succeed())
			g.Expect(tr.Status.Phase).To(Equal(phase), func() string { return runState(ctx, ns, name) })
		}
	}).WithTimeout(settleTimeout).Should(Succeed())

	// Releases, so the AppDeployment families have series of their own: a
	// rolling update that ends (outcomes, rollout duration) and an analysed
	// canary held for want of traffic (weight, measurements, analysis time).
	rolling := app(ns, func(ad *platformv1.AppDeployment) {
		ad.Name, ad.Spec.Strategy = "rolling", platformv1.Strategy{Type: platformv1.StrategyRolling}
	})
	held := analysedApp(ns, func(ad *platformv1.AppDeployment) { ad.Name = "held" })
	for _, ad := range []*platformv1.AppDeployment{rolling, held} {
		released(t, ad)
	}
	change(t, rolling, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	change(t, held, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 + "-idle" })
	waitAnalysed(t, held, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseNoData), got.Status.Message)
	})
	waitApp(t, rolling, func(g Gomega, got *platformv1.AppDeployment) { expectReady(g, got) })

	token := scraperToken(t, ns)
	endpoint := fmt.Sprintf("https://%s:%d/metrics", localwebhook.Host, leader(t).MetricsPort)

	status, _ := scrape(t, endpoint, "")
	g.Expect(status).To(BeElementOf(http.StatusUnauthorized, http.StatusForbidden), "no token, no metrics")

	documented := documentedMetrics(t)
	g.Eventually(func(g Gomega) {
		status, body := scrape(t, endpoint, token)
		g.Expect(status).To(Equal(http.StatusOK))
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(strings.NewReader(body))
		g.Expect(err).NotTo(HaveOccurred())
		// Every family docs/metrics.md promises, with its type and labels,
		// so the page and the endpoint cannot drift apart.
		for _, want := range documented {
			mf, ok := families[want.Name]
			g.Expect(ok).To(BeTrue(), "docs/metrics.md documents %s; /metrics does not serve it", want.Name)
			g.Expect(strings.ToLower(mf.GetType().String())).To(Equal(want.Type), "type of %s", want.Name)
			for _, m := range mf.GetMetric() {
				var labels []string
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName())
				}
				g.Expect(labels).To(ConsistOf(want.Labels), "labels of a %s series", want.Name)
			}
		}
		g.Expect(body).To(ContainSubstring(`platform_operator_taskruns_total{result="Succeeded"}`), "the run this test made")
		g.Expect(families).To(HaveKey("controller_runtime_reconcile_total"))
		g.Expect(families).To(HaveKey("workqueue_depth"))
	}).WithTimeout(settleTimeout).Should(Succeed())
}

// metricFamily is one row of the table in docs/metrics.md.
type metricFamily struct {
	Name, Type string
	Labels     []string
}

// staleAfter sets a task's staleAfterSeconds.
func staleAfter(seconds int64) testutil.ScheduleTaskOption {
	return func(st *platformv1.ScheduleTask) { st.Spec.StaleAfterSeconds = seconds }
}

// documentedMetrics reads the metric families that docs/metrics.md's table
// documents: the metric's name, its type and the names of its labels, each
// of which the table writes in backquotes.
func documentedMetrics(t *testing.T) []metricFamily {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(cluster.Repo, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("`([a-zA-Z_:][a-zA-Z0-9_:]*)`")
	var families []metricFamily //nolint:prealloc // one per table row, not per line
	for line := range strings.SplitSeq(string(doc), "\n") {
		cells := strings.Split(line, "|")
		// | `name` | type | labels | what it says |
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := quoted.FindStringSubmatch(cells[1])
		if name == nil {
			t.Fatalf("docs/metrics.md: no metric name in table row %q", line)
		}
		f := metricFamily{Name: name[1], Type: strings.TrimSpace(cells[2]), Labels: []string{}}
		for _, l := range quoted.FindAllStringSubmatch(cells[3], -1) {
			f.Labels = append(f.Labels, l[1])
		}
		families = append(families, f)
	}
	if len(families) == 0 {
		t.Fatal("docs/metrics.md: found no metric table rows; has the table's format changed?")
	}
	t.Logf("docs/metrics.md documents %d metric families: %v", len(families), families)
	return families
}

// leader waits for the replica that holds the leader-election Lease: only
// its controllers run, so only its metrics count runs.
func leader(t *testing.T) *harness.Manager {
	t.Helper()
	var m *harness.Manager
	NewWithT(t).Eventually(func() (*harness.Manager, error) {
		var err error
		m, err = operator.Leader(t.Context())
		return m, err
	}).WithTimeout(30*time.Second).ShouldNot(BeNil(), "a replica holds the Lease")
	return m
}

// scraperToken returns a token of a new ServiceAccount bound to the
// operator's metrics-reader ClusterRole, as a Prometheus would hold.
func scraperToken(t *testing.T, ns string) string {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scraper"}}
	g.Expect(cluster.Client.Create(ctx, sa)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "platform-operator-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}},
	}
	g.Expect(cluster.Client.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), binding) })
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	g.Expect(cluster.Client.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	g.Expect(tr.Status.Token).NotTo(BeEmpty())
	return tr.Status.Token
}

// scrape GETs endpoint with the bearer token (none when empty); the manager's
// certificate is self-signed, as in a default install.
func scrape(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, endpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the endpoint's own self-signed certificate
	}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// replicaTargets are the shared operator's live replicas as a cluster's
// Prometheus scrapes them, every pod with a token of a ServiceAccount of
// ns: both serve the webhooks, and leadership may move while a test runs
// (a starved replica that cannot renew its Lease steps down), so one
// replica's series alone may lack what the test made.
func replicaTargets(t *testing.T, ns string) []harness.ScrapeTarget {
	t.Helper()
	token := scraperToken(t, ns)
	live := operator.Live()
	targets := make([]harness.ScrapeTarget, 0, len(live))
	for _, m := range live {
		targets = append(targets, harness.ScrapeTarget{
			Job:                "platform-operator-" + m.Name,
			Address:            fmt.Sprintf("%s:%d", localwebhook.Host, m.MetricsPort),
			Scheme:             "https",
			BearerToken:        token,
			InsecureSkipVerify: true,
		})
	}
	return targets
}

// TestMetrics_RealPrometheusScrapesTheManager runs the Prometheus server that
// `make tools` builds against the replicas, as a cluster's Prometheus would
// scrape them (HTTPS, a ServiceAccount token), and asks it for every
// documented family and for the run this test made.
func TestMetrics_RealPrometheusScrapesTheManager(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	yearly := testutil.WithSchedule("0 0 1 1 *")
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "observed", yearly, staleAfter(3600)))).To(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewManualTaskRun(ns, "observed-now", "observed"))).To(Succeed())

	prom, err := harness.StartPrometheus(ctx, t.TempDir(), replicaTargets(t, ns)...)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(prom.Stop)

	documented := documentedMetrics(t)
	g.Eventually(func(g Gomega) {
		succeeded, err := prom.QueryValue(ctx, `sum(platform_operator_taskruns_total{result="Succeeded"})`)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(succeeded).To(BeNumerically(">=", 1), "at least the run this test made succeeded")

		names, _, err := prom.API().LabelValues(ctx, model.MetricNameLabel,
			[]string{`{job=~"platform-operator-.+"}`}, time.Time{}, time.Time{})
		g.Expect(err).NotTo(HaveOccurred())
		for _, f := range documented {
			// A histogram is stored as its _bucket, _sum and _count series.
			series := f.Name
			if f.Type == "histogram" {
				series += "_count"
			}
			g.Expect(names).To(ContainElement(model.LabelValue(series)), "documented in docs/metrics.md, not in Prometheus")
		}
	}).WithTimeout(metricsTimeout).WithPolling(time.Second).
		Should(Succeed(), "prometheus log: %s", prom.LogPath)
}

// metricsTimeout is how long the scrape test waits for every documented
// family. A family with labels has no series until its first use, and some
// are first used by other tests on the same manager (the canary analyses'
// measurements, admission's refusals), which run alongside it and reach
// theirs within a few minutes; the layer lasts longer than that anyway.
const metricsTimeout = 4 * time.Minute

// TestAlertRules_RealPrometheusLoadsThemAndTheFailingAlertFires loads the
// shipped alert rules into the real Prometheus scraping the leader: every
// rule must load and evaluate without error, and a task whose run failed
// must raise ScheduleTaskFailing for that task, and a canary rolled back
// AppDeploymentRolledBack for its application, while PlatformOperatorDown
// stays quiet with the manager up.
func TestAlertRules_RealPrometheusLoadsThemAndTheFailingAlertFires(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(ctx, testutil.NewScheduleTask(ns, "alerting", testutil.WithSchedule("0 0 1 1 *"),
		testutil.WithBackoffLimit(0), kwokPod(3, "")))).To(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewManualTaskRun(ns, "alerting-now", "alerting"))).To(Succeed())
	// A canary that cannot pull its image is rolled back at once.
	ad := app(ns, nil)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) {
		got.Spec.Image = "harbor.example.com/kwok-image-pull-backoff/order-service:v1.2.4"
	})

	// The run's failure reaches the task's status first: a test failing
	// here is not about the alerts.
	g.Eventually(func(g Gomega) {
		st := &platformv1.ScheduleTask{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alerting"}, st)).To(Succeed())
		g.Expect(st.Status.ConsecutiveFailures).To(BeNumerically(">=", 1), "the failed run is counted")
	}).WithTimeout(minuteTimeout).WithPolling(time.Second).Should(Succeed())

	prom, err := harness.StartPrometheusWith(ctx, t.TempDir(), harness.PrometheusOptions{
		RuleFiles: []string{filepath.Join(cluster.Repo, "config", "prometheus", "alerts", "platform-operator.rules.yaml")},
		Targets:   replicaTargets(t, ns),
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(prom.Stop)

	g.Eventually(func(g Gomega) {
		rules, err := prom.API().Rules(ctx, nil)
		g.Expect(err).NotTo(HaveOccurred())
		loaded := 0
		for _, group := range rules.Groups {
			for _, r := range group.Rules {
				a, ok := r.(promv1.AlertingRule)
				g.Expect(ok).To(BeTrue(), "only alerting rules are shipped: %#v", r)
				g.Expect(a.Health).To(BeEquivalentTo(promv1.RuleHealthGood), "rule %s: %s", a.Name, a.LastError)
				loaded++
			}
		}
		g.Expect(loaded).To(Equal(9), "every rule of the file is loaded")

		// What the alerts are computed from: a scrape that fails (the
		// metrics endpoint asks the API server to review the token) is
		// said with its error.
		targets, err := prom.API().Targets(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		var scraped []string
		for _, tg := range targets.Active {
			scraped = append(scraped, fmt.Sprintf("%s %s %s", tg.ScrapeURL, tg.Health, tg.LastError))
		}
		g.Expect(targets.Active).To(ContainElement(HaveField("Health", promv1.HealthGood)),
			"a replica is scraped: %v", scraped)

		alerts, err := prom.API().Alerts(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		var firing []string
		for _, a := range alerts.Alerts {
			ours := a.Labels["namespace"] == model.LabelValue(ns) || a.Labels["namespace"] == ""
			if a.State == promv1.AlertStateFiring && ours {
				firing = append(firing, string(a.Labels[model.AlertNameLabel])+"/"+string(a.Labels["name"]))
			}
		}
		g.Expect(firing).To(ContainElement("ScheduleTaskFailing/alerting"))
		g.Expect(firing).To(ContainElement("AppDeploymentRolledBack/order-service"))
		g.Expect(firing).NotTo(ContainElement(HavePrefix("PlatformOperatorDown")), "the manager is up")
	}).WithTimeout(minuteTimeout).WithPolling(time.Second).
		Should(Succeed(), "prometheus log: %s", prom.LogPath)
}

func TestPodSecurity_ManagerAndRestrictedTasksAreAdmittedUnderRestricted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	enforceRestricted(t, cluster, ns)

	// The manager's pod, as config/default renders its Deployment.
	rendered, err := exec.CommandContext(ctx, filepath.Join(cluster.Repo, "bin", "kubectl"), "kustomize",
		filepath.Join(cluster.Repo, "config", "default")).Output()
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := yamldoc.Decode(bytes.NewReader(rendered))
	g.Expect(err).NotTo(HaveOccurred())
	var deployment *appsv1.Deployment
	for _, obj := range objs {
		if yamldoc.Kind(obj) == "Deployment" {
			deployment = &appsv1.Deployment{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(obj, deployment)).To(Succeed())
		}
	}
	g.Expect(deployment).NotTo(BeNil())
	managerPod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manager"},
		Spec:       deployment.Spec.Template.Spec,
	}
	managerPod.Spec.ServiceAccountName = ""
	g.Expect(cluster.Client.Create(ctx, managerPod, client.DryRunAll)).To(Succeed(), "the manager's pod meets restricted")

	// Enforcement is real: a pod that says nothing is refused.
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bare"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}
	g.Expect(cluster.Client.Create(ctx, bare, client.DryRunAll)).NotTo(Succeed())

	// A task that asks for restricted settings runs in such a namespace.
	st := testutil.NewScheduleTask(ns, "locked-down", testutil.WithSchedule("0 0 1 1 *"))
	st.Spec.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To[int64](65532),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	g.Expect(cluster.Client.Create(ctx, st)).To(Succeed())
	g.Expect(cluster.Client.Create(ctx, testutil.NewManualTaskRun(ns, "locked-down-now", "locked-down"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "locked-down-now"}, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunSucceeded))
	}).WithTimeout(60 * time.Second).Should(Succeed())
}

func TestHelm_RenderedChartIsAdmittedByTheAPIServer(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	chart := filepath.Join(cluster.Repo, "charts", "platform-operator")
	minimal := "certManager.enabled=false,metrics.enabled=false,replicaCount=1,tracing.endpoint=http://collector:4317"
	for _, values := range [][]string{nil, {"--set", minimal}} {
		args := append([]string{"template", "platform-operator", chart,
			"-n", harness.OperatorNamespace}, values...)
		rendered, err := exec.CommandContext(ctx, filepath.Join(cluster.Repo, "bin", "helm"), args...).Output()
		g.Expect(err).NotTo(HaveOccurred(), "helm %v", args)
		// Server-side dry run: every object goes through the real API
		// server's validation and admission, and nothing of the running
		// e2e install is replaced.
		g.Expect(cluster.Kubectl(ctx, rendered,
			"apply", "--server-side", "--dry-run=server", "--force-conflicts", "-f", "-")).To(Succeed())
	}
}
