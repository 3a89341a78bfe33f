// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/example/platform-operator/internal/webhook/guard"
)

// managerDeployment returns the manager's Deployment of an install.
func managerDeployment(t *testing.T, m manifests) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	each(t, m, "Deployment", func(_ string, obj *appsv1.Deployment) { d = obj })
	if d == nil {
		t.Fatalf("%s: no Deployment", m.source)
	}
	return d
}

// managerContainer renders the chart with the values set and returns its
// manager container and the pod it runs in.
func managerContainer(t *testing.T, set ...string) (corev1.Container, corev1.PodSpec) {
	t.Helper()
	pod := managerDeployment(t, helmTemplate(t, set...)).Spec.Template.Spec
	for _, c := range pod.Containers {
		if c.Name == "manager" {
			return c, pod
		}
	}
	t.Fatal("no manager container")
	return corev1.Container{}, pod
}

// selects reports whether sel matches the pod template's labels.
func selects(t *testing.T, sel *metav1.LabelSelector, pod map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return !s.Empty() && s.Matches(labels.Set(pod))
}

// webhookPort is the manager container's webhook-server port.
func webhookPort(t *testing.T, d *appsv1.Deployment) int32 {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == "webhook-server" {
				return p.ContainerPort
			}
		}
	}
	t.Fatalf("Deployment %s has no webhook-server port", d.Name)
	return 0
}

// The optional network policies must let the API server reach the webhook
// server, or enabling them stops every write of the operator's kinds (the
// webhooks fail closed). The API server's address cannot be selected
// portably, so by default the rule admits the port from anywhere.
func TestNetworkPolicy_AdmitsTheWebhookPortFromAnywhere(t *testing.T) {
	deploy := managerDeployment(t, render(t, "kubectl", "kustomize", "config/default"))
	port := webhookPort(t, deploy)
	pod := deploy.Spec.Template.Labels
	for _, m := range []manifests{
		render(t, "kubectl", "kustomize", "config/network-policy"),
		helmTemplate(t, "networkPolicy.enabled=true"),
	} {
		t.Run(m.source, func(t *testing.T) {
			admitted, policies := false, 0
			each(t, m, "NetworkPolicy", func(name string, np *networkingv1.NetworkPolicy) {
				if !selects(t, &np.Spec.PodSelector, pod) {
					return
				}
				policies++
				for _, in := range np.Spec.Ingress {
					if len(in.From) > 0 {
						continue
					}
					for _, p := range in.Ports {
						tcp := ptr.Deref(p.Protocol, corev1.ProtocolTCP) == corev1.ProtocolTCP
						if p.Port != nil && p.Port.IntValue() == int(port) && tcp {
							admitted = true
						}
					}
				}
			})
			if policies == 0 {
				t.Fatalf("no NetworkPolicy selects the manager's pods")
			}
			if !admitted {
				t.Errorf("no NetworkPolicy admits TCP %d from every source: enabling them blocks the webhooks", port)
			}
		})
	}
}

// Given the API server's addresses (webhook.allowedCIDRs), the chart's
// policy opens the webhook port to those only, and to no other source.
func TestNetworkPolicy_AdmitsTheWebhookPortFromTheGivenCIDRsOnly(t *testing.T) {
	want := []string{"10.0.0.2/32", "fd00::1/128"}
	m := helmTemplate(t, "networkPolicy.enabled=true", "webhook.allowedCIDRs={"+strings.Join(want, ",")+"}")
	deploy := managerDeployment(t, m)
	port := webhookPort(t, deploy)
	var from []string
	each(t, m, "NetworkPolicy", func(name string, np *networkingv1.NetworkPolicy) {
		if !selects(t, &np.Spec.PodSelector, deploy.Spec.Template.Labels) {
			return
		}
		for _, in := range np.Spec.Ingress {
			opens := false
			for _, p := range in.Ports {
				if p.Port != nil && p.Port.IntValue() == int(port) {
					opens = true
				}
			}
			if !opens {
				continue
			}
			if len(in.From) == 0 {
				t.Errorf("NetworkPolicy %s opens port %d to every source despite webhook.allowedCIDRs", name, port)
			}
			for _, peer := range in.From {
				if peer.IPBlock == nil || peer.PodSelector != nil || peer.NamespaceSelector != nil {
					t.Errorf("NetworkPolicy %s opens port %d to %+v, not an address block", name, port, peer)
					continue
				}
				from = append(from, peer.IPBlock.CIDR)
			}
		}
	})
	if !slices.Equal(from, want) {
		t.Errorf("webhook port open to %v, want %v", from, want)
	}
	// The chart's default is the manager's own.
	arg := fmt.Sprintf("--webhook-max-conns-per-source=%d", guard.DefaultMaxConnsPerSource)
	if args := deploy.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, arg) {
		t.Errorf("manager args %v lack the chart's %s", args, arg)
	}
}

// Both installs keep a replica through voluntary disruptions and spread the
// replicas over nodes; the chart lets both be tuned or turned off.
func TestInstall_ManagerHasADisruptionBudgetAndSpreadsOverNodes(t *testing.T) {
	check := func(t *testing.T, m manifests, wantPDB, wantAffinity bool) {
		t.Helper()
		d := managerDeployment(t, m)
		pod := d.Spec.Template.Labels
		pdbs := 0
		each(t, m, "PodDisruptionBudget", func(name string, pdb *policyv1.PodDisruptionBudget) {
			if !selects(t, pdb.Spec.Selector, pod) {
				t.Errorf("PodDisruptionBudget %s does not select the manager's pods", name)
			}
			if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 {
				t.Errorf("PodDisruptionBudget %s: minAvailable %v, want 1", name, pdb.Spec.MinAvailable)
			}
			if r := ptr.Deref(d.Spec.Replicas, 1); r < 2 {
				t.Errorf("PodDisruptionBudget %s with %d replica would block every drain", name, r)
			}
			pdbs++
		})
		if got := pdbs == 1; got != wantPDB {
			t.Errorf("%d PodDisruptionBudgets, want one: %t", pdbs, wantPDB)
		}
		spread := false
		if a := d.Spec.Template.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
			for _, term := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				if term.PodAffinityTerm.TopologyKey == corev1.LabelHostname && selects(t, term.PodAffinityTerm.LabelSelector, pod) {
					spread = true
				}
			}
			if len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
				t.Errorf("required anti-affinity would leave a replica unscheduled on a one-node cluster")
			}
		}
		if spread != wantAffinity {
			t.Errorf("preferred anti-affinity over %s: %t, want %t", corev1.LabelHostname, spread, wantAffinity)
		}
	}
	t.Run("kustomize", func(t *testing.T) { check(t, render(t, "kubectl", "kustomize", "config/default"), true, true) })
	t.Run("helm defaults", func(t *testing.T) { check(t, helmTemplate(t), true, true) })
	t.Run("helm, both off", func(t *testing.T) {
		check(t, helmTemplate(t, "podDisruptionBudget.enabled=false", "podAntiAffinity.enabled=false"), false, false)
	})
	t.Run("helm, one replica", func(t *testing.T) { check(t, helmTemplate(t, "replicaCount=1"), false, true) })
}

// The alert rules promtool tests are the ones both installs ship: the chart
// (behind metrics.prometheusRule.enabled) and config/prometheus wrap the
// same groups in a PrometheusRule.
func TestInstall_PrometheusRuleShipsTheTestedAlertRules(t *testing.T) {
	source := readManifests(t, "config/prometheus/alerts/platform-operator.rules.yaml")
	if len(source.objs) != 1 || source.objs[0]["groups"] == nil {
		t.Fatalf("%s: want one document with groups", source.source)
	}
	want := source.objs[0]["groups"]
	for _, m := range []manifests{
		helmTemplate(t, "metrics.prometheusRule.enabled=true", "metrics.prometheusRule.labels.release=prometheus"),
		render(t, "kubectl", "kustomize", "config/prometheus"),
	} {
		found := 0
		for _, o := range m.objs {
			if o["kind"] != "PrometheusRule" {
				continue
			}
			found++
			spec, _ := o["spec"].(map[string]any)
			if !reflect.DeepEqual(spec["groups"], want) {
				t.Errorf("%s: the PrometheusRule's groups are not those of the rules file", m.source)
			}
		}
		if found != 1 {
			t.Errorf("%s: %d PrometheusRules, want 1", m.source, found)
		}
	}
	for _, o := range helmTemplate(t).objs {
		if o["kind"] == "PrometheusRule" {
			t.Error("helm defaults render a PrometheusRule; it needs the Prometheus Operator and is off by default")
		}
	}
}

// The Grafana dashboard ships in both installs as a ConfigMap that Grafana's
// dashboard sidecar loads by its label: the chart (behind
// grafana.dashboard.enabled, with the user's labels and annotations added)
// and config/grafana carry the tested file of config/grafana unchanged.
func TestInstall_GrafanaDashboardShipsInAConfigMapTheSidecarLoads(t *testing.T) {
	const name, key = "platform-operator-grafana-dashboard", "platform-operator.json"
	var want any
	if err := json.Unmarshal(readDashboardFile(t), &want); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	check := func(t *testing.T, m manifests, wantLabels, annotations map[string]string) {
		t.Helper()
		found := 0
		each(t, m, "ConfigMap", func(n string, cm *corev1.ConfigMap) {
			if n != name {
				return
			}
			found++
			if cm.Namespace != "platform-operator-system" {
				t.Errorf("%s: ConfigMap %s in namespace %q, want platform-operator-system", m.source, n, cm.Namespace)
			}
			for k, v := range wantLabels {
				if got, ok := cm.Labels[k]; !ok || got != v {
					t.Errorf("%s: label %s=%q, want %q", m.source, k, got, v)
				}
			}
			for k, v := range annotations {
				if got, ok := cm.Annotations[k]; !ok || got != v {
					t.Errorf("%s: annotation %s=%q, want %q", m.source, k, got, v)
				}
			}
			var got any
			if err := json.Unmarshal([]byte(cm.Data[key]), &got); err != nil {
				t.Fatalf("%s: data %s: %v", m.source, key, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: data %s is not %s (run make manifests)", m.source, key, dashboardPath)
			}
		})
		if found != 1 {
			t.Errorf("%s: %d ConfigMaps %s, want 1", m.source, found, name)
		}
	}
	sidecar := map[string]string{"grafana_dashboard": "1", "app.kubernetes.io/name": "platform-operator"}
	t.Run("kustomize", func(t *testing.T) {
		check(t, render(t, "kubectl", "kustomize", "config/grafana"), sidecar, nil)
	})
	t.Run("helm", func(t *testing.T) {
		check(t, helmTemplate(t, "grafana.dashboard.enabled=true"), sidecar, nil)
	})
	t.Run("helm, a label and folder of the user's", func(t *testing.T) {
		check(t, helmTemplate(t, "grafana.dashboard.enabled=true", "grafana.dashboard.labels.team=sre",
			"grafana.dashboard.annotations.grafana_folder=Operators"),
			map[string]string{"grafana_dashboard": "1", "team": "sre"}, map[string]string{"grafana_folder": "Operators"})
	})
	t.Run("helm defaults", func(t *testing.T) {
		each(t, helmTemplate(t), "ConfigMap", func(n string, _ *corev1.ConfigMap) {
			if n == name {
				t.Error("helm defaults render the dashboard's ConfigMap; it is for clusters with Grafana and off by default")
			}
		})
	})
}
