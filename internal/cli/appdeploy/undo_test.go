// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/release"
)

// healthy is order-service after v1.2.3 was promoted: the spec asks for
// the stable version.
func healthy() *platformv1.AppDeployment {
	ad := orderService()
	ad.Spec.Image = rev123.Image
	ad.Status.Canary = nil
	ad.Status.CurrentVersion, ad.Status.CurrentRevision = rev123.Version, rev123.Revision
	return ad
}

func TestUndoTarget_ChoosesThePreviousPromotedRevision(t *testing.T) {
	for _, tt := range []struct {
		name string
		ad   *platformv1.AppDeployment
		to   string
		want platformv1.Revision
	}{
		{"the spec's version is stable: the one before it", healthy(), "", rev122},
		{"a canary of a new version: the stable one", orderService(), "", rev123},
		{"by version", healthy(), "v1.2.1", rev121},
		{"by revision hash", orderService(), rev122.Revision, rev122},
		{"the spec's own, by version", healthy(), "v1.2.3", rev123},
		{
			// Only the env changed since v1.2.3's other revision: undo
			// restores every pod field, so that revision is the one before.
			"a revision of the same image and version but other pods is the one before",
			func() *platformv1.AppDeployment {
				ad := healthy()
				ad.Status.Revisions = []platformv1.Revision{rev123, {Revision: "0ld3nv", Version: "v1.2.3", Image: rev123.Image}, rev122}
				return ad
			}(),
			"", platformv1.Revision{Revision: "0ld3nv", Version: "v1.2.3", Image: rev123.Image},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := undoTarget(tt.ad, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("undoTarget (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUndoTarget_RefusesWhenThereIsNone(t *testing.T) {
	only := healthy()
	only.Status.Revisions = only.Status.Revisions[:1]
	noImage := healthy()
	noImage.Status.Revisions[1].Image = ""
	// An adopter keeps its promoted revisions, yet has none to set back.
	adopter := healthy()
	adopter.Spec.Image, adopter.Spec.WorkloadRef = "", platformv1.WorkloadRef{Name: "order-service-chart"}
	for _, tt := range []struct {
		name string
		ad   *platformv1.AppDeployment
		to   string
		want string
	}{
		{"no revisions", web(), "", `appdeployment "web" has no promoted revision to go back to (status.revisions is empty)`},
		{"only the spec's own", only, "", `appdeployment "order-service" has no promoted revision with another image or version than the spec's ` +
			`(harbor.example.com/order-service:v1.2.3, version v1.2.3): nothing to go back to`},
		{"an unknown revision", healthy(), "v0.9.0", `--to-revision: no promoted revision of appdeployment "order-service" has the hash or version "v0.9.0"; ` +
			"`kubectl appdeploy history order-service` lists them"},
		{"an adopter of a Deployment", adopter, "v1.2.2", `appdeployment "order-service" takes its pods from deployment ` +
			`"order-service-chart" (spec.workloadRef): roll back that Deployment instead (for example ` +
			"`kubectl rollout undo deployment/order-service-chart -n team`, or the release that manages it); " +
			"the AppDeployment releases the change by its strategy"},
		{"a revision without its image", noImage, "", `revision 66c4d8f5b of appdeployment "order-service" does not record its image, so it cannot be put back`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := undoTarget(tt.ad, tt.to)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestUndo_WithoutAControllerRevisionSetsOnlyImageAndVersionBack(t *testing.T) {
	for _, tt := range []struct {
		name        string
		version     string
		wantVersion string
	}{
		// The version came from the image's tag, and still does.
		{"version from the tag", "", ""},
		{"version written out", "v1.2.3", "v1.2.2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ad := healthy()
			ad.Spec.Version = tt.version
			ad.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "new"}}
			c := newClient(t, interceptor.Funcs{}, ad)
			res := execute(t, c, "", "undo", "order-service")
			want := "appdeployment.platform.example.com/order-service spec set back to v1.2.2 (revision 66c4d8f5b, " +
				"image harbor.example.com/order-service:v1.2.2); its image and version only: no ControllerRevision keeps the rest of it\n"
			if res.err != nil || res.out != want {
				t.Fatalf("undo = %q, %v; want %q", res.out, res.err, want)
			}
			wantSpec := ad.Spec
			wantSpec.Image, wantSpec.Version = rev122.Image, tt.wantVersion
			if diff := cmp.Diff(wantSpec, mustGet(t, c, "order-service").Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUndo_LeavesTheSpecAloneWhenItCannot(t *testing.T) {
	patches := 0
	countPatches := interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		patches++
		return c.Patch(ctx, obj, patch, opts...)
	}}
	c := newClient(t, countPatches, web(), healthy())
	if res := execute(t, c, "", "undo", "web"); res.err == nil || !strings.Contains(res.err.Error(), "no promoted revision") {
		t.Errorf("undo without revisions: %v", res.err)
	}
	res := execute(t, c, "", "undo", "order-service", "--to-revision", "v1.2.3")
	want := "appdeployment.platform.example.com/order-service skipped: the spec already asks for v1.2.3 (revision 5d8f7c9b4, image harbor.example.com/order-service:v1.2.3)\n"
	if res.err != nil || res.out != want {
		t.Errorf("undo to the spec's own = %q, %v; want %q", res.out, res.err, want)
	}
	if patches != 0 {
		t.Errorf("%d patches sent", patches)
	}
}

func TestUndo_RetriesAConflictOfAStatusWriteAndGivesUpOnAPersistentOne(t *testing.T) {
	conflict := func(n *int, until int) interceptor.Funcs {
		return interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if *n++; *n <= until {
				return apierrors.NewConflict(schema.GroupResource{Group: platformv1.GroupVersion.Group, Resource: "appdeployments"}, "order-service", nil)
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}
	}
	// The operator wrote the status once in between: the next attempt, on
	// the same spec, goes through.
	var once int
	res := execute(t, newClient(t, conflict(&once, 1), healthy()), "", "undo", "order-service")
	if res.err != nil || once != 2 {
		t.Errorf("undo after one conflict: %v after %d patches, want success after 2", res.err, once)
	}
	var always int
	res = execute(t, newClient(t, conflict(&always, 1000), healthy()), "", "undo", "order-service")
	if want := `appdeployment "order-service": its spec changed while undo was reading it: run undo again`; res.err == nil || res.err.Error() != want {
		t.Errorf("err = %v, want %q", res.err, want)
	}
	if always != undoAttempts+1 {
		t.Errorf("%d patches, want %d", always, undoAttempts+1)
	}
}

func TestUndo_IsLockedOnTheVersionItRead(t *testing.T) {
	var sent []byte
	record := interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		var err error
		sent, err = patch.Data(obj)
		if err != nil {
			return err
		}
		return c.Patch(ctx, obj, patch, opts...)
	}}
	if res := execute(t, newClient(t, record, healthy()), "", "undo", "order-service"); res.err != nil {
		t.Fatal(res.err)
	}
	if !strings.Contains(string(sent), `"resourceVersion":`) {
		t.Errorf("the patch %s does not carry the resourceVersion read", sent)
	}
}

// TestUndo_RestoresEveryPodFieldTheControllerRevisionKeeps goes back to a
// revision whose ControllerRevision the operator kept: its env, template and
// image come back; replicas and the strategy stay as they are.
func TestUndo_RestoresEveryPodFieldTheControllerRevisionKeeps(t *testing.T) {
	ad := healthy()
	ad.UID = "ad-uid"
	ad.Spec.Env = []corev1.EnvVar{{Name: "MODE", Value: "new"}}
	ad.Spec.Replicas = ptr.To[int32](5)
	old := ad.Spec.DeepCopy()
	old.Image = rev122.Image
	old.Env = []corev1.EnvVar{{Name: "MODE", Value: "old"}}
	old.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"pool": "apps"}}}
	data, err := release.RevisionData(old)
	if err != nil {
		t.Fatal(err)
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ad.Namespace, Name: release.RevisionName(ad.Name, rev122.Revision),
			Labels:          map[string]string{platformv1.RevisionLabel: rev122.Revision},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ad, platformv1.GroupVersion.WithKind("AppDeployment"))}},
		Revision: 2, Data: data,
	}
	c := newClient(t, interceptor.Funcs{}, ad, cr)
	res := execute(t, c, "", "undo", "order-service")
	want := "appdeployment.platform.example.com/order-service spec set back to v1.2.2 (revision 66c4d8f5b, image harbor.example.com/order-service:v1.2.2)\n"
	if res.err != nil || res.out != want {
		t.Fatalf("undo = %q, %v; want %q", res.out, res.err, want)
	}
	got := mustGet(t, c, "order-service").Spec
	wantSpec := *old
	wantSpec.Replicas = ptr.To[int32](5)
	if diff := cmp.Diff(wantSpec, got); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

func TestChangedFields_NamesThePodFieldsThatDiffer(t *testing.T) {
	older := &platformv1.AppDeploymentSpec{Image: "web:1", Port: 8080}
	newer := older.DeepCopy()
	newer.Image = "web:2"
	newer.Env = []corev1.EnvVar{{Name: "MODE", Value: "on"}}
	newer.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"pool": "apps"}}}
	newer.Replicas = ptr.To[int32](9) // how many, not what: no change of the revision
	if got := changedFields(newer, older); got != "image,env,template" {
		t.Errorf("changedFields = %q, want image,env,template", got)
	}
	if got := changedFields(newer, nil); got != "-" {
		t.Errorf("changedFields without the older one = %q, want -", got)
	}
}
