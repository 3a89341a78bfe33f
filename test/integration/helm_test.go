// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"bytes"
	"crypto/tls"
	"net"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	platformv1 "github.com/example/platform-operator/api/v1"
	platformv1alpha1 "github.com/example/platform-operator/api/v1alpha1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// helmTemplateIn renders the chart as a release in namespace ns.
func helmTemplateIn(t *testing.T, ns string, set ...string) manifests {
	t.Helper()
	args := []string{"template", "po", "charts/platform-operator", "-n", ns}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return render(t, "helm", args...)
}

// helmRefusal renders the chart with values it must refuse and returns what
// helm says.
func helmRefusal(t *testing.T, set ...string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"template", "po", "charts/platform-operator", "-n", "ops"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "bin", "helm"), args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("helm %v succeeded; the chart must refuse these values", args)
	}
	return stderr.String()
}

func TestHelmChart_ValuesSchemaRefusesBadValuesNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want []string
	}{
		{[]string{"replicaCount=0"}, []string{"replicaCount", "minimum"}},
		{[]string{"image.pullPolicy=Sometimes"}, []string{"/image/pullPolicy"}},
		{[]string{"watchNamespaces={team-a,Team_B}"}, []string{"watchNamespaces", "pattern"}},
		{[]string{"metrics.port=70000"}, []string{"/metrics/port", "maximum"}},
		{[]string{"prometheus.address=prometheus:9090"}, []string{"/prometheus/address"}},
		{[]string{"extraArgs={-v}"}, []string{"extraArgs"}},
		{[]string{"replicas=2"}, []string{"replicas", "additional properties"}},
		{[]string{"crds.keep=maybe"}, []string{"/crds/keep", "boolean"}},
	} {
		msg := helmRefusal(t, tc.set...)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("--set %v: helm says %q, which does not name %q", tc.set, strings.TrimSpace(msg), w)
			}
		}
	}
}

func TestHelmChart_CRDsAreTemplatesOfTheReleaseInAnyNamespace(t *testing.T) {
	crdsOf := func(m manifests) map[string]*apiextensionsv1.CustomResourceDefinition {
		got := map[string]*apiextensionsv1.CustomResourceDefinition{}
		each(t, m, "CustomResourceDefinition", func(name string, crd *apiextensionsv1.CustomResourceDefinition) {
			got[name] = crd
		})
		return got
	}
	crds := crdsOf(helmTemplateIn(t, "ops-elsewhere"))
	if len(crds) != 3 {
		t.Fatalf("the chart renders %d CRDs, want ScheduleTask, TaskRun and AppDeployment", len(crds))
	}
	for name, crd := range crds {
		if crd.Annotations["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s is not kept on uninstall by default: annotations %v", name, crd.Annotations)
		}
		if _, ok := crd.Annotations["cert-manager.io/inject-ca-from"]; ok {
			t.Errorf("CRD %s asks cert-manager for a CA without certManager.enabled", name)
		}
	}
	st := crds["scheduletasks.platform.example.com"]
	if st == nil || st.Spec.Conversion == nil || st.Spec.Conversion.Webhook == nil {
		t.Fatalf("the ScheduleTask CRD has no conversion webhook: %+v", st)
	}
	if svc := st.Spec.Conversion.Webhook.ClientConfig.Service; svc == nil || svc.Namespace != "ops-elsewhere" {
		t.Errorf("conversion webhook Service %+v, want it in the release's namespace ops-elsewhere", svc)
	}
	// Placeholders quoted in a CRD's descriptions stay literal.
	ad := crds["appdeployments.platform.example.com"]
	if ad == nil || !strings.Contains(describeAll(ad.Spec.Versions[0].Schema.OpenAPIV3Schema), "{{namespace}}") {
		t.Error("the AppDeployment CRD lost the {{namespace}} placeholder of its query description")
	}

	for name, crd := range crdsOf(helmTemplateIn(t, "ops", "crds.keep=false")) {
		if _, ok := crd.Annotations["helm.sh/resource-policy"]; ok {
			t.Errorf("crds.keep=false: CRD %s is still kept on uninstall", name)
		}
	}
	if n := len(crdsOf(helmTemplateIn(t, "ops", "crds.install=false"))); n != 0 {
		t.Errorf("crds.install=false renders %d CRDs", n)
	}
}

// describeAll joins every description in a schema, depth first.
func describeAll(s *apiextensionsv1.JSONSchemaProps) string {
	if s == nil {
		return ""
	}
	var out strings.Builder
	out.WriteString(s.Description)
	for _, p := range s.Properties {
		out.WriteString(describeAll(&p))
	}
	if s.Items != nil {
		out.WriteString(describeAll(s.Items.Schema))
	}
	return out.String()
}

// namespaceRole is the manager's Role in each namespace it serves.
const namespaceRole = "platform-operator-manager-role-namespace"

//nolint:gocyclo // one render, many checks of it
func TestHelmChart_WatchNamespacesGrantsRolesThereAndScopesTheWebhooks(t *testing.T) {
	served := []string{"team-a", "team-b"}
	m := helmTemplateIn(t, "ops", "watchNamespaces={team-a,team-b}")

	roles := map[string][]rbacv1.PolicyRule{}
	each(t, m, "Role", func(name string, r *rbacv1.Role) {
		if name == namespaceRole {
			roles[r.Namespace] = r.Rules
		}
	})
	bound := map[string]bool{}
	each(t, m, "RoleBinding", func(name string, b *rbacv1.RoleBinding) {
		if b.RoleRef.Name == namespaceRole && len(b.Subjects) == 1 &&
			b.Subjects[0].Name == "platform-operator-controller-manager" && b.Subjects[0].Namespace == "ops" {
			bound[b.Namespace] = true
		}
	})
	for _, ns := range served {
		if !grants(roles[ns], "platform.example.com", "scheduletasks", "watch") ||
			!grants(roles[ns], "batch", "cronjobs", "create") ||
			!grants(roles[ns], "authorization.k8s.io", "localsubjectaccessreviews", "create") {
			t.Errorf("namespace %s: the manager's Role does not grant what it reconciles and asks there: %+v", ns, roles[ns])
		}
		if !bound[ns] {
			t.Errorf("namespace %s: no RoleBinding of the manager's Role to its ServiceAccount", ns)
		}
	}
	if len(roles) != len(served) {
		t.Errorf("manager Roles in %d namespaces, want %v", len(roles), served)
	}

	// What stays cluster-wide is named.
	each(t, m, "ClusterRole", func(name string, r *rbacv1.ClusterRole) {
		if name != "platform-operator-manager-role" {
			return
		}
		for _, rule := range r.Rules {
			if len(rule.ResourceNames) == 0 {
				t.Errorf("with watchNamespaces the manager's ClusterRole still grants %v on %v.%v in every namespace or unnamed",
					rule.Verbs, rule.Resources, rule.APIGroups)
			}
		}
		if len(r.Rules) == 0 {
			t.Error("the manager's ClusterRole lost the named webhook configurations and CRD it injects certificates into")
		}
	})

	checkSelector := func(kind, name string, sel *metav1.LabelSelector) {
		want := metav1.LabelSelectorRequirement{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: served}
		if sel == nil || len(sel.MatchLabels) > 0 || len(sel.MatchExpressions) != 1 ||
			!equality.Semantic.DeepEqual(sel.MatchExpressions[0], want) {
			t.Errorf("%s webhook %s: namespaceSelector %+v, want the served namespaces %v", kind, name, sel, served)
		}
	}
	n := 0
	type validating = admissionregistrationv1.ValidatingWebhookConfiguration
	each(t, m, "ValidatingWebhookConfiguration", func(_ string, c *validating) {
		for _, w := range c.Webhooks {
			checkSelector("validating", w.Name, w.NamespaceSelector)
			n++
		}
	})
	each(t, m, "MutatingWebhookConfiguration", func(_ string, c *admissionregistrationv1.MutatingWebhookConfiguration) {
		for _, w := range c.Webhooks {
			checkSelector("mutating", w.Name, w.NamespaceSelector)
			n++
		}
	})
	if n == 0 {
		t.Fatal("the chart renders no webhooks")
	}
	each(t, m, "Deployment", func(_ string, d *appsv1.Deployment) {
		if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--watch-namespaces=team-a,team-b") {
			t.Errorf("the manager is not told its namespaces: args %v", d.Spec.Template.Spec.Containers[0].Args)
		}
	})

	// Without watchNamespaces: one ClusterRole, webhooks for every namespace.
	all := helmTemplateIn(t, "ops")
	each(t, all, "Role", func(name string, _ *rbacv1.Role) {
		if name == namespaceRole {
			t.Error("a manager Role is rendered without watchNamespaces")
		}
	})
	each(t, all, "ValidatingWebhookConfiguration", func(_ string, c *validating) {
		for _, w := range c.Webhooks {
			if w.NamespaceSelector != nil && len(w.NamespaceSelector.MatchExpressions)+len(w.NamespaceSelector.MatchLabels) > 0 {
				t.Errorf("webhook %s is scoped without watchNamespaces: %+v", w.Name, w.NamespaceSelector)
			}
		}
	})
	each(t, all, "ClusterRole", func(name string, r *rbacv1.ClusterRole) {
		if name == "platform-operator-manager-role" && !grants(r.Rules, "platform.example.com", "scheduletasks", "watch") {
			t.Error("without watchNamespaces the manager's ClusterRole does not grant watching ScheduleTasks")
		}
	})
}

// grants reports whether rules allow verb on group/resource (any name).
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) &&
			slices.Contains(r.Verbs, verb) && len(r.ResourceNames) == 0 {
			return true
		}
	}
	return false
}

// TestCertManager_InjectedCAMakesV1alpha1ReadsWork installs the ScheduleTask
// CRD as the chart renders it with certManager.enabled into an API server
// of its own, serves the conversion webhook with a certificate as
// cert-manager's self-signed Issuer makes one, and plays cert-manager's CA
// injector: it follows the CRD's inject-ca-from annotation to the
// Certificate the chart renders, and that Certificate's Secret to ca.crt.
// Before the injection a v1alpha1 read fails (the API server does not trust
// the webhook); after it, it succeeds.
func TestCertManager_InjectedCAMakesV1alpha1ReadsWork(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	const ns = "ops-cm"
	m := helmTemplateIn(t, ns, "certManager.enabled=true")

	var crd *apiextensionsv1.CustomResourceDefinition
	each(t, m, "CustomResourceDefinition", func(name string, c *apiextensionsv1.CustomResourceDefinition) {
		if name == "scheduletasks.platform.example.com" {
			crd = c
		}
	})
	g.Expect(crd).NotTo(BeNil())
	from := crd.Annotations["cert-manager.io/inject-ca-from"]
	g.Expect(from).To(Equal(ns+"/platform-operator-serving-cert"),
		"the CRD asks cert-manager for the CA of the chart's Certificate")
	certNS, certName, _ := strings.Cut(from, "/")
	secretName := ""
	for _, o := range m.objs {
		meta, _ := o["metadata"].(map[string]any)
		if o["kind"] == "Certificate" && meta["name"] == certName && meta["namespace"] == certNS {
			secretName, _ = o["spec"].(map[string]any)["secretName"].(string)
		}
	}
	g.Expect(secretName).NotTo(BeEmpty(), "the chart renders the Certificate %s the CRD names", from)
	each(t, m, "Deployment", func(_ string, d *appsv1.Deployment) {
		mounted := false
		for _, v := range d.Spec.Template.Spec.Volumes {
			mounted = mounted || (v.Secret != nil && v.Secret.SecretName == secretName)
		}
		g.Expect(mounted).To(BeTrue(), "the manager serves with the Secret %s cert-manager writes", secretName)
		g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--cert-rotation=false"))
	})

	// An API server of its own: the suite's has this CRD with its own CA.
	env := &envtest.Environment{Scheme: testEnv.Scheme, BinaryAssetsDirectory: testEnv.BinaryAssetsDirectory}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())

	// The conversion webhook, served with what cert-manager's self-signed
	// Issuer would write into the Secret.
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	g.Expect(err).NotTo(HaveOccurred())
	srv := httptest.NewUnstartedServer(conversion.NewWebhookHandler(testEnv.Scheme, conversion.NewRegistry()))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: certNS, Name: secretName}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": certPEM},
	})).To(Succeed())

	// The CRD as rendered, but for the address: envtest has no Service
	// network, so the webhook Service is reached by URL.
	hook := crd.Spec.Conversion.Webhook
	g.Expect(hook.ClientConfig.CABundle).To(BeEmpty(), "the chart leaves the caBundle to cert-manager")
	hook.ClientConfig.Service = nil
	hook.ClientConfig.URL = ptr.To(srv.URL + "/convert")
	crd.ResourceVersion = ""
	g.Expect(c.Create(ctx, crd)).To(Succeed())
	g.Eventually(func(g Gomega) {
		live := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(crd), live)).To(Succeed())
		established := false
		for _, cond := range live.Status.Conditions {
			established = established ||
				(cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue)
		}
		g.Expect(established).To(BeTrue())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	task := testutil.NewScheduleTask(ns, "legacy-reader")
	g.Eventually(func() error { return c.Create(ctx, task) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	readOld := func() error {
		return c.Get(ctx, client.ObjectKeyFromObject(task), &platformv1alpha1.ScheduleTask{})
	}
	g.Expect(readOld()).To(MatchError(ContainSubstring("conversion webhook")),
		"before injection the API server does not trust the webhook's certificate")

	// cert-manager's CA injector: annotation -> Certificate -> Secret -> ca.crt.
	secret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: certNS, Name: secretName}, secret)).To(Succeed())
	live := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(crd), live)).To(Succeed())
	patch := client.MergeFrom(live.DeepCopy())
	live.Spec.Conversion.Webhook.ClientConfig.CABundle = secret.Data["ca.crt"]
	g.Expect(c.Patch(ctx, live, patch)).To(Succeed())

	g.Eventually(func(g Gomega) {
		old := &platformv1alpha1.ScheduleTask{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(task), old)).To(Succeed())
		g.Expect(old.Spec.Schedule).To(Equal(task.Spec.Schedule))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed(), "v1alpha1 reads convert through the injected CA")
	v1 := &platformv1.ScheduleTask{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(task), v1)).To(Succeed())
	g.Expect(v1.Spec.ConcurrencyPolicy).NotTo(BeEmpty(), "the v1 read still works and is defaulted")
}
