// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	// managerContainer is the manager's container in the Deployment.
	managerContainer = "manager"
	// olmCertDir is where OLM mounts the serving certificate (tls.crt,
	// tls.key) it issues for the webhooks into the Deployment a webhook
	// definition names: controller-runtime's default --webhook-cert-path.
	// OLM's installer replaces any mount at that path with its own.
	olmCertDir = "/tmp/k8s-webhook-server/serving-certs"
	// watchNamespacesEnv is the default of the manager's --watch-namespaces.
	watchNamespacesEnv = "WATCH_NAMESPACES"
	// targetNamespacesField is the pod annotation in which OLM puts the
	// OperatorGroup's target namespaces, comma-separated, empty for all.
	targetNamespacesField = "metadata.annotations['olm.targetNamespaces']"
	// managedByLabel says which tool applied an object: kustomize in
	// config/default, OLM in a bundle's install, so the bundle drops it.
	managedByLabel = "app.kubernetes.io/managed-by"
)

// supportedKinds are the kinds an OLM (registry+v1) bundle may carry
// besides the CSV and CRDs, as operator-registry lists them.
var supportedKinds = []string{
	"ClusterRole", "ClusterRoleBinding", "ConfigMap", "ConsoleCLIDownload", "ConsoleLink",
	"ConsoleQuickStart", "ConsoleYAMLSample", "PodDisruptionBudget", "PriorityClass",
	"PrometheusRule", "Role", "RoleBinding", "Secret", "Service", "ServiceAccount",
	"ServiceMonitor", "VerticalPodAutoscaler",
}

// inventory is the rendered install, each object marked once the bundle
// has placed it (in the CSV, as a CRD) or deliberately left it out.
type inventory struct {
	objs  []*unstructured.Unstructured
	taken map[*unstructured.Unstructured]bool
}

func newInventory(objs []*unstructured.Unstructured) *inventory {
	return &inventory{objs: objs, taken: map[*unstructured.Unstructured]bool{}}
}

// take marks and returns the objects of a kind, in order.
func (in *inventory) take(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range in.objs {
		if o.GetKind() == kind {
			in.taken[o] = true
			out = append(out, o)
		}
	}
	return out
}

// find returns the object of a kind and name, nil when there is none.
func (in *inventory) find(kind, name string) *unstructured.Unstructured {
	for _, o := range in.objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// takeSecret marks the Secret the webhook certificate lived in: OLM makes
// its own.
func (in *inventory) takeSecret(name string) error {
	if name == "" {
		return nil
	}
	o := in.find("Secret", name)
	if o == nil {
		return fmt.Errorf("%s mounts Secret %s, which it does not render", installDir, name)
	}
	in.taken[o] = true
	return nil
}

// rest returns the objects nothing took, ready for the bundle's manifests
// (no namespace: OLM puts them in the operator's), and fails on one of a
// kind a bundle cannot carry, so that a new object in config/default gets a
// decision.
func (in *inventory) rest() ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(in.objs)-len(in.taken))
	for _, o := range in.objs {
		if in.taken[o] {
			continue
		}
		if !slices.Contains(supportedKinds, o.GetKind()) {
			return nil, fmt.Errorf("%s renders %s %s, a kind an OLM bundle cannot carry", installDir, o.GetKind(), o.GetName())
		}
		c := o.DeepCopy()
		c.SetNamespace("")
		c.SetLabels(withoutManagedBy(c.GetLabels()))
		out = append(out, c)
	}
	return out, nil
}

// withoutManagedBy returns labels without the managed-by label, nil when
// nothing else is left.
func withoutManagedBy(labels map[string]string) map[string]string {
	delete(labels, managedByLabel)
	if len(labels) == 0 {
		return nil
	}
	return labels
}

// decodeStrict converts a rendered object into a typed one and fails on a
// field the type does not know, so that nothing of the install is dropped
// without notice.
func decodeStrict(obj *unstructured.Unstructured, into any) error {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// installDeployment is the manager's Deployment as OLM runs it, and the
// Secret its webhook certificate was mounted from. OLM issues, mounts and
// rotates the certificate, so the manager runs with --cert-rotation=false
// and the install's own certificate volume goes; OLM's target namespaces
// become WATCH_NAMESPACES.
func installDeployment(in *inventory, image string) (v1alpha1.StrategyDeploymentSpec, string, error) {
	objs := in.take("Deployment")
	if len(objs) != 1 {
		return v1alpha1.StrategyDeploymentSpec{}, "", fmt.Errorf("%s renders %d Deployments, want 1", installDir, len(objs))
	}
	var dep appsv1.Deployment
	if err := decodeStrict(objs[0], &dep); err != nil {
		return v1alpha1.StrategyDeploymentSpec{}, "", err
	}
	pod := &dep.Spec.Template.Spec
	i := managerIndex(pod.Containers)
	if i < 0 {
		return v1alpha1.StrategyDeploymentSpec{}, "", fmt.Errorf("deployment %s has no container %q",
			dep.Name, managerContainer)
	}
	c := &pod.Containers[i]
	for _, arg := range c.Args {
		if v, ok := strings.CutPrefix(arg, "--webhook-cert-path="); ok && v != olmCertDir {
			return v1alpha1.StrategyDeploymentSpec{}, "", fmt.Errorf(
				"deployment %s: --webhook-cert-path=%s, but OLM mounts the certificate at %s", dep.Name, v, olmCertDir)
		}
	}
	c.Args = setFlag(c.Args, "--cert-rotation", "false")
	c.Env = setEnv(c.Env, corev1.EnvVar{Name: watchNamespacesEnv, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: targetNamespacesField},
	}})
	if image != "" {
		c.Image = image
	}
	var certVolumes []string
	c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		if m.MountPath == olmCertDir {
			certVolumes = append(certVolumes, m.Name)
			return true
		}
		return false
	})
	var certSecret string
	pod.Volumes = slices.DeleteFunc(pod.Volumes, func(v corev1.Volume) bool {
		if !slices.Contains(certVolumes, v.Name) {
			return false
		}
		if v.Secret != nil {
			certSecret = v.Secret.SecretName
		}
		return true
	})
	return v1alpha1.StrategyDeploymentSpec{
		Name:  dep.Name,
		Label: withoutManagedBy(dep.Labels),
		Spec:  dep.Spec,
	}, certSecret, nil
}

// managerIndex is the index of the manager's container, -1 when missing.
func managerIndex(cs []corev1.Container) int {
	return slices.IndexFunc(cs, func(c corev1.Container) bool { return c.Name == managerContainer })
}

// setFlag sets --name=value in args, replacing the flag if present.
func setFlag(args []string, name, value string) []string {
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool {
		return a == name || strings.HasPrefix(a, name+"=")
	})
	return append(args, name+"="+value)
}

// setEnv sets a variable in env, replacing one of the same name.
func setEnv(env []corev1.EnvVar, v corev1.EnvVar) []corev1.EnvVar {
	env = slices.DeleteFunc(slices.Clone(env), func(e corev1.EnvVar) bool { return e.Name == v.Name })
	return append(env, v)
}

// managerPermissions are the rules of the Roles and ClusterRoles the
// install binds to the manager's ServiceAccount: namespaced ones (a
// RoleBinding's) become the CSV's permissions, which OLM grants in the
// operator's namespace, cluster-wide ones its clusterPermissions. OLM makes
// the ServiceAccount and the bindings, so those, and the roles, leave the
// inventory. Rules limited to objects in certObjects go: they are the
// certificate rotator's, which --cert-rotation=false turns off.
func managerPermissions(in *inventory, serviceAccount string, certObjects map[string][]string) (
	namespaced, cluster []v1alpha1.StrategyDeploymentPermissions, err error,
) {
	if sa := in.find("ServiceAccount", serviceAccount); sa != nil {
		in.taken[sa] = true
	}
	var nsRules, clusterRules []rbacv1.PolicyRule
	for _, kind := range []string{"RoleBinding", "ClusterRoleBinding"} {
		for _, o := range in.objs {
			if o.GetKind() != kind {
				continue
			}
			var b rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
			if err := decodeStrict(o, &b); err != nil {
				return nil, nil, err
			}
			if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == rbacv1.ServiceAccountKind && s.Name == serviceAccount
			}) {
				continue
			}
			role := in.find(b.RoleRef.Kind, b.RoleRef.Name)
			if role == nil {
				return nil, nil, fmt.Errorf("%s %s binds %s %s, which %s does not render",
					kind, b.Name, b.RoleRef.Kind, b.RoleRef.Name, installDir)
			}
			var r rbacv1.Role // a ClusterRole's rules decode alike; it has no aggregationRule here
			if err := decodeStrict(role, &r); err != nil {
				return nil, nil, err
			}
			in.taken[o], in.taken[role] = true, true
			r.Rules = slices.DeleteFunc(r.Rules, func(rule rbacv1.PolicyRule) bool { return limitedTo(rule, certObjects) })
			if kind == "RoleBinding" {
				nsRules = append(nsRules, r.Rules...)
			} else {
				clusterRules = append(clusterRules, r.Rules...)
			}
		}
	}
	if len(clusterRules) == 0 {
		return nil, nil, fmt.Errorf("%s binds no ClusterRole to ServiceAccount %s", installDir, serviceAccount)
	}
	cluster = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: serviceAccount, Rules: clusterRules}}
	if len(nsRules) > 0 {
		namespaced = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: serviceAccount, Rules: nsRules}}
	}
	return namespaced, cluster, nil
}

// certObjects are the objects whose certificate OLM, not the manager,
// keeps under OLM, by resource: the Secret the certificate was mounted
// from, the webhook configurations, and the CRDs that convert through a
// webhook. OLM makes the first two anew and writes the CRDs' conversion
// itself.
func certObjects(in *inventory, certSecret string) map[string][]string {
	objs := map[string][]string{"secrets": {certSecret}}
	for _, o := range in.objs {
		switch o.GetKind() {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			r := strings.ToLower(o.GetKind()) + "s"
			objs[r] = append(objs[r], o.GetName())
		case "CustomResourceDefinition":
			if s, _, _ := unstructured.NestedString(o.Object, "spec", "conversion", "strategy"); s == "Webhook" {
				objs["customresourcedefinitions"] = append(objs["customresourcedefinitions"], o.GetName())
			}
		}
	}
	return objs
}

// limitedTo reports whether a rule grants rights on named objects of objs
// only.
func limitedTo(rule rbacv1.PolicyRule, objs map[string][]string) bool {
	if len(rule.ResourceNames) == 0 || len(rule.NonResourceURLs) > 0 {
		return false
	}
	for _, r := range rule.Resources {
		for _, n := range rule.ResourceNames {
			if !slices.Contains(objs[r], n) {
				return false
			}
		}
	}
	return true
}

// webhookDefinitions describes the install's admission webhooks and CRD
// conversion webhooks for OLM, which makes the webhook configurations, the
// Service (<deployment>-service) and the certificate from them, and points
// the CRDs' conversion at that Service.
//
// OLM's WebhookDescription has no matchConditions: under OLM the API server
// calls the webhooks for the requests the conditions would skip (updates of
// objects being deleted, metadata-only updates), and the webhooks' code
// applies the same rules itself (internal/webhook/v1/metadata.go). Nor has
// it a namespaceSelector, which OLM sets from the OperatorGroup; the
// install must not set one.
func webhookDefinitions(in *inventory, deployment string) ([]v1alpha1.WebhookDescription, error) {
	defs := []v1alpha1.WebhookDescription{}
	var service *corev1.Service
	// ports returns the Service port (the definition's containerPort) and
	// the pod port behind it (targetPort) of the install's webhook Service,
	// which every webhook must name.
	ports := func(ref *admissionregistrationv1.ServiceReference, what string) (int32, *intstr.IntOrString, error) {
		if ref == nil {
			return 0, nil, fmt.Errorf("%s: OLM serves webhooks only through its Service, not a URL", what)
		}
		if service == nil {
			o := in.find("Service", ref.Name)
			if o == nil {
				return 0, nil, fmt.Errorf("%s: Service %s is not rendered", what, ref.Name)
			}
			service = &corev1.Service{}
			if err := decodeStrict(o, service); err != nil {
				return 0, nil, err
			}
			if len(service.Spec.Ports) != 1 {
				return 0, nil, fmt.Errorf("service %s has %d ports, want 1", service.Name, len(service.Spec.Ports))
			}
			in.taken[o] = true
		}
		if ref.Name != service.Name {
			return 0, nil, fmt.Errorf("%s: Service %s, but other webhooks use %s", what, ref.Name, service.Name)
		}
		p := service.Spec.Ports[0]
		if ref.Port != nil && *ref.Port != p.Port {
			return 0, nil, fmt.Errorf("%s: port %d, but Service %s serves %d", what, *ref.Port, service.Name, p.Port)
		}
		return p.Port, &p.TargetPort, nil
	}

	types := map[string]v1alpha1.WebhookAdmissionType{
		"MutatingWebhookConfiguration":   v1alpha1.MutatingAdmissionWebhook,
		"ValidatingWebhookConfiguration": v1alpha1.ValidatingAdmissionWebhook,
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		for _, o := range in.take(kind) {
			// A validating webhook's fields are a mutating one's without
			// reinvocationPolicy, so one type reads both.
			var cfg admissionregistrationv1.MutatingWebhookConfiguration
			if err := decodeStrict(o, &cfg); err != nil {
				return nil, err
			}
			for _, w := range cfg.Webhooks {
				if w.NamespaceSelector != nil {
					return nil, fmt.Errorf("webhook %s: OLM sets the namespaceSelector from the OperatorGroup", w.Name)
				}
				port, target, err := ports(w.ClientConfig.Service, "webhook "+w.Name)
				if err != nil {
					return nil, err
				}
				defs = append(defs, v1alpha1.WebhookDescription{
					GenerateName:            w.Name,
					Type:                    types[kind],
					DeploymentName:          deployment,
					ContainerPort:           port,
					TargetPort:              target,
					Rules:                   w.Rules,
					FailurePolicy:           w.FailurePolicy,
					MatchPolicy:             w.MatchPolicy,
					ObjectSelector:          w.ObjectSelector,
					SideEffects:             w.SideEffects,
					TimeoutSeconds:          w.TimeoutSeconds,
					AdmissionReviewVersions: w.AdmissionReviewVersions,
					ReinvocationPolicy:      w.ReinvocationPolicy,
					WebhookPath:             w.ClientConfig.Service.Path,
				})
			}
		}
	}

	for _, o := range in.objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		conv, _, _ := unstructured.NestedMap(o.Object, "spec", "conversion")
		if conv["strategy"] != "Webhook" {
			continue
		}
		var c struct {
			Webhook struct {
				ClientConfig struct {
					Service *admissionregistrationv1.ServiceReference `json:"service"`
				} `json:"clientConfig"`
				ConversionReviewVersions []string `json:"conversionReviewVersions"`
			} `json:"webhook"`
		}
		data, _ := json.Marshal(conv)
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("CRD %s conversion: %w", o.GetName(), err)
		}
		what := "CRD " + o.GetName() + " conversion webhook"
		port, target, err := ports(c.Webhook.ClientConfig.Service, what)
		if err != nil {
			return nil, err
		}
		none := admissionregistrationv1.SideEffectClassNone
		defs = append(defs, v1alpha1.WebhookDescription{
			GenerateName:            "c" + o.GetName(),
			Type:                    v1alpha1.ConversionWebhook,
			DeploymentName:          deployment,
			ContainerPort:           port,
			TargetPort:              target,
			SideEffects:             &none,
			AdmissionReviewVersions: c.Webhook.ConversionReviewVersions,
			WebhookPath:             c.Webhook.ClientConfig.Service.Path,
			ConversionCRDs:          []string{o.GetName()},
		})
	}
	return defs, nil
}
