// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	sigsyaml "sigs.k8s.io/yaml"
)

var fixtureOptions = options{Package: "op", Version: "1.2.3", Channels: "alpha,stable", DefaultChannel: "alpha"}

// fixture reads the small install, base CSV and samples in testdata.
func fixture(t *testing.T) source {
	t.Helper()
	read := func(name string) []*unstructured.Unstructured {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeObjects(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	data, err := os.ReadFile("testdata/base.clusterserviceversion.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := &v1alpha1.ClusterServiceVersion{}
	if err := sigsyaml.UnmarshalStrict(data, base); err != nil {
		t.Fatal(err)
	}
	return source{Install: read("install.yaml"), Samples: read("samples.yaml"), Base: base}
}

// generated runs the generator on src and returns its files by path and
// the CSV among them.
func generated(t *testing.T, src source, opts options) (map[string][]byte, *v1alpha1.ClusterServiceVersion) {
	t.Helper()
	files, err := generate(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string][]byte{}
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := sigsyaml.UnmarshalStrict(byPath["manifests/op.clusterserviceversion.yaml"], csv); err != nil {
		t.Fatal(err)
	}
	return byPath, csv
}

func TestGenerate_BundleHoldsTheCSVTheCRDsAndTheUnboundObjects(t *testing.T) {
	files, _ := generated(t, fixture(t), fixtureOptions)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	want := []string{
		"bundle.Dockerfile",
		"manifests/example.com_widgets.yaml",
		"manifests/op-metrics_v1_service.yaml",
		"manifests/op-widget-viewer_rbac.authorization.k8s.io_v1_clusterrole.yaml",
		"manifests/op.clusterserviceversion.yaml",
		"metadata/annotations.yaml",
	}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("bundle files (-want +got):\n%s", diff)
	}
	var viewer map[string]any
	viewerFile := files["manifests/op-widget-viewer_rbac.authorization.k8s.io_v1_clusterrole.yaml"]
	if err := sigsyaml.Unmarshal(viewerFile, &viewer); err != nil {
		t.Fatal(err)
	}
	wantMeta := map[string]any{"name": "op-widget-viewer", "labels": map[string]any{"app.kubernetes.io/name": "op"}}
	if diff := cmp.Diff(wantMeta, viewer["metadata"]); diff != "" {
		t.Errorf("extra object's metadata: no namespace, no managed-by (-want +got):\n%s", diff)
	}
	wantAnnotations := `annotations:
  operators.operatorframework.io.bundle.channel.default.v1: alpha
  operators.operatorframework.io.bundle.channels.v1: alpha,stable
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: op
`
	if diff := cmp.Diff(header+wantAnnotations, string(files["metadata/annotations.yaml"])); diff != "" {
		t.Errorf("annotations.yaml (-want +got):\n%s", diff)
	}
	df := string(files["bundle.Dockerfile"])
	for _, line := range []string{"FROM scratch\n", "LABEL operators.operatorframework.io.bundle.package.v1=op\n",
		"COPY manifests /manifests/\n", "COPY metadata /metadata/\n"} {
		if !strings.Contains(df, line) {
			t.Errorf("bundle.Dockerfile lacks %q:\n%s", line, df)
		}
	}
}

func TestGenerate_ManagerRunsWithOLMsCertificateAndTargetNamespaces(t *testing.T) {
	opts := fixtureOptions
	opts.Image = "registry.example.com/op:v1.2.3"
	_, csv := generated(t, fixture(t), opts)
	deps := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(deps) != 1 {
		t.Fatalf("%d deployments, want 1", len(deps))
	}
	if diff := cmp.Diff(map[string]string{"app": "op"}, map[string]string(deps[0].Label)); diff != "" {
		t.Errorf("deployment labels (-want +got):\n%s", diff)
	}
	pod := deps[0].Spec.Template.Spec
	want := corev1.Container{
		Name:  "manager",
		Image: "registry.example.com/op:v1.2.3",
		Args:  []string{"--leader-elect", "--cert-rotation=false"},
		Env: []corev1.EnvVar{
			{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
				FieldPath: "metadata.namespace"}}},
			{Name: "WATCH_NAMESPACES", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
				FieldPath: "metadata.annotations['olm.targetNamespaces']"}}},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
	}
	if diff := cmp.Diff([]corev1.Container{want}, pod.Containers); diff != "" {
		t.Errorf("manager container (-want +got):\n%s", diff)
	}
	wantVolumes := []corev1.Volume{{Name: "scratch",
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if diff := cmp.Diff(wantVolumes, pod.Volumes); diff != "" {
		t.Errorf("volumes: OLM mounts the certificate (-want +got):\n%s", diff)
	}
	wantImages := []v1alpha1.RelatedImage{{Name: "manager", Image: "registry.example.com/op:v1.2.3"}}
	if diff := cmp.Diff(wantImages, csv.Spec.RelatedImages); diff != "" {
		t.Errorf("relatedImages (-want +got):\n%s", diff)
	}
}

func TestGenerate_PermissionsAreTheBoundRolesWithoutTheCertificateRotatorsRules(t *testing.T) {
	_, csv := generated(t, fixture(t), fixtureOptions)
	spec := csv.Spec.InstallStrategy.StrategySpec
	wantNamespaced := []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "op-manager",
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "update"}},
		}}}
	if diff := cmp.Diff(wantNamespaced, spec.Permissions); diff != "" {
		t.Errorf("permissions (-want +got):\n%s", diff)
	}
	wantCluster := []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "op-manager", Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "get"}},
	}}}
	if diff := cmp.Diff(wantCluster, spec.ClusterPermissions); diff != "" {
		t.Errorf("clusterPermissions (-want +got):\n%s", diff)
	}
}

func TestGenerate_WebhookDefinitionsComeFromTheWebhookConfigurationsAndTheConvertingCRD(t *testing.T) {
	_, csv := generated(t, fixture(t), fixtureOptions)
	target := intstr.FromInt32(9443)
	none := admissionregistrationv1.SideEffectClassNone
	want := []v1alpha1.WebhookDescription{
		{
			GenerateName: "mwidget.example.com", Type: v1alpha1.MutatingAdmissionWebhook, DeploymentName: "op-manager",
			ContainerPort: 443, TargetPort: &target, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy: ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
			WebhookPath:        ptr.To("/mutate-widget"),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
			}},
		},
		{
			GenerateName: "vwidget.example.com", Type: v1alpha1.ValidatingAdmissionWebhook, DeploymentName: "op-manager",
			ContainerPort: 443, TargetPort: &target, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			FailurePolicy:  ptr.To(admissionregistrationv1.Fail),
			TimeoutSeconds: ptr.To[int32](5),
			WebhookPath:    ptr.To("/validate-widget"),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
			}},
		},
		{
			GenerateName: "cwidgets.example.com", Type: v1alpha1.ConversionWebhook, DeploymentName: "op-manager",
			ContainerPort: 443, TargetPort: &target, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			WebhookPath: ptr.To("/convert"), ConversionCRDs: []string{"widgets.example.com"},
		},
	}
	if diff := cmp.Diff(want, csv.Spec.WebhookDefinitions); diff != "" {
		t.Errorf("webhookdefinitions (-want +got):\n%s", diff)
	}
}

func TestGenerate_OwnedCRDsAndExamplesAreCompletedFromTheCRDsAndSamples(t *testing.T) {
	_, csv := generated(t, fixture(t), fixtureOptions)
	want := []v1alpha1.CRDDescription{{
		Name: "widgets.example.com", Version: "v1", Kind: "Widget", DisplayName: "Widget",
		Description: "Widget is a thing, e.g. a gadget.",
		SpecDescriptors: []v1alpha1.SpecDescriptor{
			{Path: "mode", DisplayName: "Mode", Description: "mode is how it works.", XDescriptors: []string{
				"urn:alm:descriptor:com.tectonic.ui:select:Fast", "urn:alm:descriptor:com.tectonic.ui:select:Slow"}},
			{Path: "parts[0].name", DisplayName: "Part", Description: "The part's name, as the base says."},
		},
		StatusDescriptors: []v1alpha1.StatusDescriptor{
			{Path: "phase", DisplayName: "Phase", Description: "phase is where it is.",
				XDescriptors: []string{"urn:alm:descriptor:io.kubernetes.phase"}},
		},
	}}
	if diff := cmp.Diff(want, csv.Spec.CustomResourceDefinitions.Owned); diff != "" {
		t.Errorf("owned CRDs (-want +got):\n%s", diff)
	}
	var examples []map[string]any
	if err := json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &examples); err != nil {
		t.Fatalf("alm-examples: %v", err)
	}
	wantExamples := []map[string]any{{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "sample"}, "spec": map[string]any{"mode": "Fast"}}}
	if diff := cmp.Diff(wantExamples, examples); diff != "" {
		t.Errorf("alm-examples (-want +got):\n%s", diff)
	}
	if csv.Name != "op.v1.2.3" || csv.Spec.Version.String() != "1.2.3" {
		t.Errorf("name %s version %s, want op.v1.2.3 and 1.2.3", csv.Name, csv.Spec.Version.String())
	}
}

func TestGenerate_IsDeterministic(t *testing.T) {
	first, err := generate(fixture(t), fixtureOptions)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := generate(fixture(t), fixtureOptions)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again, cmp.AllowUnexported(file{})); diff != "" {
			t.Fatalf("a second run differs (-first +again):\n%s", diff)
		}
	}
}

func TestGenerate_RefusesWhatOLMCannotInstall(t *testing.T) {
	// object returns the fixture's object of a kind and name.
	object := func(src source, kind, name string) *unstructured.Unstructured {
		o := newInventory(src.Install).find(kind, name)
		if o == nil {
			t.Fatalf("fixture has no %s %s", kind, name)
		}
		return o
	}
	tests := []struct {
		name   string
		change func(src *source)
		want   string
	}{{
		name: "a kind a bundle cannot carry",
		change: func(src *source) {
			src.Install = append(src.Install, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": map[string]any{"name": "op"}}})
		},
		want: "Ingress op, a kind an OLM bundle cannot carry",
	}, {
		name: "a certificate directory OLM does not mount",
		change: func(src *source) {
			c := object(*src, "Deployment", "op-manager")
			cs, _, _ := unstructured.NestedSlice(c.Object, "spec", "template", "spec", "containers")
			m := cs[0].(map[string]any)
			m["args"] = append(m["args"].([]any), "--webhook-cert-path=/certs")
			_ = unstructured.SetNestedSlice(c.Object, cs, "spec", "template", "spec", "containers")
		},
		want: "OLM mounts the certificate at /tmp/k8s-webhook-server/serving-certs",
	}, {
		name: "a field the Deployment type does not know",
		change: func(src *source) {
			_ = unstructured.SetNestedField(object(*src, "Deployment", "op-manager").Object, "x", "spec", "surprise")
		},
		want: `unknown field "surprise"`,
	}, {
		name: "a webhook with a namespaceSelector",
		change: func(src *source) {
			o := object(*src, "ValidatingWebhookConfiguration", "op-validating")
			ws, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			ws[0].(map[string]any)["namespaceSelector"] = map[string]any{}
			_ = unstructured.SetNestedSlice(o.Object, ws, "webhooks")
		},
		want: "OLM sets the namespaceSelector",
	}, {
		name: "a CRD without an owned entry",
		change: func(src *source) {
			src.Base.Spec.CustomResourceDefinitions.Owned = nil
		},
		want: "CRD widgets.example.com has no entry",
	}, {
		name: "an owned version the CRD does not serve",
		change: func(src *source) {
			src.Base.Spec.CustomResourceDefinitions.Owned[0].Version = "v2"
		},
		want: `serves no version "v2"`,
	}, {
		name: "a descriptor path the schema lacks",
		change: func(src *source) {
			src.Base.Spec.CustomResourceDefinitions.Owned[0].StatusDescriptors[0].Path = "phaze"
		},
		want: "the schema has no field phaze",
	}, {
		name: "a select descriptor on a field without an enum",
		change: func(src *source) {
			src.Base.Spec.CustomResourceDefinitions.Owned[0].StatusDescriptors[0].XDescriptors = []string{selectDescriptor}
		},
		want: "a select descriptor needs an enum",
	}, {
		name: "a sample of a kind the CSV does not own",
		change: func(src *source) {
			src.Samples[0].SetAPIVersion("example.com/v1alpha1")
		},
		want: "is not of a kind the CSV owns",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := fixture(t)
			tt.change(&src)
			_, err := generate(src, fixtureOptions)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("generate: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestFirstSentence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"image is the image. At most 512 characters.", "image is the image."},
		{"image is the container image, e.g. shop:v1. At most 512.", "image is the container image, e.g. shop:v1."},
		{"spans\nlines. More.", "spans lines."},
		{"first paragraph only\n\nsecond. paragraph.", "first paragraph only"},
		{"version 1.2.3 is a version.", "version 1.2.3 is a version."},
		{"", ""},
	}
	for _, tt := range tests {
		if got := firstSentence(tt.in); got != tt.want {
			t.Errorf("firstSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The committed bundle is what `make bundle` wrote; `make verify` checks
// it is current, this that OLM's validators accept it.
func TestCommittedBundle_PassesTheOperatorFrameworkValidators(t *testing.T) {
	findings, err := validateBundle("../../bundle")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.isError {
			t.Error(f)
		} else {
			t.Log(f)
		}
	}
}
