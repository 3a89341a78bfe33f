// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package provenance

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func template() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"platform.example.com/scheduletask": "t"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "task", Image: "busybox:1.36", Command: []string{"true"}}},
		},
	}
}

func TestTemplateHash_IgnoresOnlyTheLabelsTheAPIServerAddsToAJob(t *testing.T) {
	base := TemplateHash(template())
	same := template()
	same.Labels[batchv1.JobNameLabel] = "t-123"
	same.Labels[batchv1.ControllerUidLabel] = "uid"
	same.Labels["job-name"] = "t-123"
	same.Labels["controller-uid"] = "uid"
	if got := TemplateHash(same); got != base {
		t.Errorf("the Job controller's labels changed the hash")
	}
	for name, change := range map[string]func(*corev1.PodTemplateSpec){
		"image":         func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "evil:1" },
		"init":          func(p *corev1.PodTemplateSpec) { p.Spec.InitContainers = []corev1.Container{{Name: "x", Image: "x"}} },
		"hostNetwork":   func(p *corev1.PodTemplateSpec) { p.Spec.HostNetwork = true },
		"other label":   func(p *corev1.PodTemplateSpec) { p.Labels["app"] = "x" },
		"annotation":    func(p *corev1.PodTemplateSpec) { p.Annotations = map[string]string{"a": "b"} },
		"command":       func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Command = []string{"false"} },
		"serviceAcount": func(p *corev1.PodTemplateSpec) { p.Spec.ServiceAccountName = "admin" },
	} {
		p := template()
		change(p)
		if TemplateHash(p) == base {
			t.Errorf("%s: a changed template hashes like the original", name)
		}
	}
}

func TestSigner_VerifiesOnlyTheSignedOwnerAndTemplate(t *testing.T) {
	s, err := NewSigner([]byte(strings.Repeat("k", MinKeySize)))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSigner([]byte(strings.Repeat("o", MinKeySize)))
	sig := s.Sign("uid-1", "hash-1")
	tampered := sig[:len(sig)-1] + "0"
	if tampered == sig {
		tampered = sig[:len(sig)-1] + "1"
	}
	for _, tc := range []struct {
		name             string
		signer           *Signer
		owner, hash, sig string
		want             bool
	}{
		{"signed", s, "uid-1", "hash-1", sig, true},
		{"other task", s, "uid-2", "hash-1", sig, false},
		{"other template", s, "uid-1", "hash-2", sig, false},
		{"other key", other, "uid-1", "hash-1", sig, false},
		{"no signature", s, "uid-1", "hash-1", "", false},
		{"no hash", s, "uid-1", "", s.Sign("uid-1", ""), false},
		{"shifted boundary", s, "uid-1h", "ash-1", sig, false},
		{"tampered", s, "uid-1", "hash-1", tampered, false},
	} {
		if got := tc.signer.Verify(types.UID(tc.owner), tc.hash, tc.sig); got != tc.want {
			t.Errorf("%s: Verify = %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, err := NewSigner([]byte("short")); err == nil || !strings.Contains(err.Error(), "need at least 32") {
		t.Errorf("a short key: err = %v, want one naming the size", err)
	}
}

func TestDefaulted_PredictsTheAPIServersPodTemplateDefaults(t *testing.T) {
	pullPolicy := func(image string) corev1.PullPolicy {
		p := template()
		p.Spec.Containers[0].Image = image
		return Defaulted(p).Spec.Containers[0].ImagePullPolicy
	}
	for image, want := range map[string]corev1.PullPolicy{
		"busybox":                             corev1.PullAlways,
		"busybox:latest":                      corev1.PullAlways,
		"busybox:1.36":                        corev1.PullIfNotPresent,
		"registry.example.com:5000/team/tool": corev1.PullAlways,
		"busybox@sha256:" + strings.Repeat("a", 64):        corev1.PullIfNotPresent,
		"busybox:latest@sha256:" + strings.Repeat("a", 64): corev1.PullAlways,
	} {
		if got := pullPolicy(image); got != want {
			t.Errorf("image %s: imagePullPolicy %s, want %s", image, got, want)
		}
	}

	p := template()
	p.Spec.ServiceAccountName = "runner"
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1n")}
	got := Defaulted(p)
	want := p.DeepCopy()
	want.Spec.DeprecatedServiceAccount = "runner"
	want.Spec.DNSPolicy = corev1.DNSClusterFirst
	want.Spec.SecurityContext = &corev1.PodSecurityContext{}
	grace := int64(30)
	want.Spec.TerminationGracePeriodSeconds = &grace
	want.Spec.SchedulerName = "default-scheduler"
	c := &want.Spec.Containers[0]
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.TerminationMessagePath = "/dev/termination-log"
	c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	c.Env[0].ValueFrom.FieldRef.APIVersion = "v1"
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")}
	if TemplateHash(want) != TemplateHash(got) {
		t.Errorf("Defaulted differs from the API server's defaults:\n%s", cmp.Diff(want, got))
	}
	if p.Spec.DNSPolicy != "" {
		t.Error("Defaulted changed its argument")
	}
}

// keyScheme knows Secrets.
func keyScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	return s
}

func TestLoadSigner_MakesAKeyOnceAndEveryReplicaReadsTheSame(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(keyScheme()).Build()
	first, err := LoadSigner(ctx, c, c, "ops")
	if err != nil {
		t.Fatal(err)
	}
	second, err := LoadSigner(ctx, c, c, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if first.Sign("u", "h") != second.Sign("u", "h") {
		t.Error("a second replica got another key")
	}
	if _, err := LoadSigner(ctx, c, c, ""); err == nil {
		t.Error("no namespace: want an error")
	}
}

func TestLoadSigner_ReadsTheKeyOfTheReplicaThatCreatedItFirst(t *testing.T) {
	ctx := context.Background()
	winner := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: KeySecretName},
		Data: map[string][]byte{KeySecretKey: []byte(strings.Repeat("w", MinKeySize))}}
	base := fake.NewClientBuilder().WithScheme(keyScheme()).Build()
	// The other replica creates the Secret between this one's read and create.
	c := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := cl.Create(ctx, winner.DeepCopy()); err != nil {
				return err
			}
			return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, KeySecretName)
		},
	})
	got, err := LoadSigner(ctx, c, c, "ops")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewSigner(winner.Data[KeySecretKey])
	if got.Sign("u", "h") != want.Sign("u", "h") {
		t.Error("the loser of the create race did not take the winner's key")
	}
}

func TestLoadSigner_FillsAnEmptyShippedSecretAndRefusesAShortKey(t *testing.T) {
	ctx := context.Background()
	empty := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: KeySecretName}}
	c := fake.NewClientBuilder().WithScheme(keyScheme()).WithObjects(empty).Build()
	if _, err := LoadSigner(ctx, c, c, "ops"); err != nil {
		t.Fatal(err)
	}
	filled := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(empty), filled); err != nil {
		t.Fatal(err)
	}
	if n := len(filled.Data[KeySecretKey]); n != MinKeySize {
		t.Errorf("filled key has %d bytes, want %d", n, MinKeySize)
	}

	short := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: KeySecretName},
		Data: map[string][]byte{KeySecretKey: []byte("short")}}
	c = fake.NewClientBuilder().WithScheme(keyScheme()).WithObjects(short).Build()
	_, err := LoadSigner(ctx, c, c, "ops")
	if err == nil || !strings.Contains(err.Error(), "data.key holds 5 bytes") {
		t.Errorf("short key: err = %v, want one naming data.key and its size", err)
	}
}
