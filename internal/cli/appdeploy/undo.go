// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package appdeploy

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/release"
)

func newUndoCommand(o *options) *cobra.Command {
	var to string
	printFlags := core.NewActionPrintFlags("set back", o.Scheme)
	cmd := apps.On(o.Options, help.Command("undo"), func() error {
		_, err := printFlags.ToPrinter()
		return err
	}, func(ctx context.Context, c client.WithWatch, ad *platformv1.AppDeployment) error {
		generation := ad.Generation
		// The operator writes the status while a release moves, which
		// conflicts with a patch locked on the version read; the spec is
		// set back only over the spec that undo chose from (the same
		// generation), so a conflict from a status write is retried on a
		// fresh read.
		for attempt := 0; ; attempt++ {
			target, err := undoTarget(ad, to)
			if err != nil {
				return err
			}
			kept, err := revisionFields(ctx, c, ad, target.Revision)
			if err != nil {
				return apps.Explain(err, ad.Name, ad.Namespace)
			}
			what := fmt.Sprintf("%s (revision %s, image %s)", core.OrDash(target.Version), target.Revision, target.Image)
			desired := ad.Spec.DeepCopy()
			if kept != nil {
				release.SetPodFields(desired, kept)
			} else {
				setBack(desired, target)
			}
			if equality.Semantic.DeepEqual(release.PodFields(desired), release.PodFields(&ad.Spec)) {
				printFlags.NamePrintFlags.Operation = "skipped: the spec already asks for " + what
				break
			}
			patch := client.MergeFromWithOptions(ad.DeepCopy(), client.MergeFromWithOptimisticLock{})
			ad.Spec = *desired
			err = c.Patch(ctx, ad, patch)
			if err == nil {
				printFlags.NamePrintFlags.Operation = "spec set back to " + what
				if kept == nil {
					printFlags.NamePrintFlags.Operation += "; its image and version only: no ControllerRevision keeps the rest of it"
				}
				break
			}
			if !apierrors.IsConflict(err) {
				return apps.Explain(err, ad.Name, ad.Namespace)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(ad), ad); err != nil {
				return apps.Explain(err, ad.Name, ad.Namespace)
			}
			if ad.Generation != generation || attempt >= undoAttempts {
				return fmt.Errorf("appdeployment %q: its spec changed while undo was reading it: run undo again", ad.Name)
			}
		}
		printer, err := printFlags.ToPrinter()
		if err != nil {
			return err
		}
		return printer.PrintObj(ad, o.Out())
	})
	cmd.Flags().StringVar(&to, "to-revision", "", "the revision hash or the version to go back to (kubectl appdeploy history lists them)")
	printFlags.AddFlags(cmd)
	return cmd
}

// undoAttempts bounds the retries of undo's patch after conflicts with
// status writes.
const undoAttempts = 5

// revisionFields reads the pod fields of an AppDeployment's revision from
// the ControllerRevision the operator keeps for it; nil when there is none
// (a revision promoted before the operator kept them).
func revisionFields(ctx context.Context, c client.Client, ad *platformv1.AppDeployment,
	revision string) (*platformv1.AppDeploymentSpec, error) {
	cr := &appsv1.ControllerRevision{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ad.Namespace, Name: release.RevisionName(ad.Name, revision)}, cr)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(cr, ad) || cr.Labels[platformv1.RevisionLabel] != revision:
		// Not the operator's record of this revision: a name taken by
		// something else is no record of it.
		return nil, nil
	}
	return release.RevisionSpec(cr)
}

// undoTarget is the promoted revision undo sets the spec back to: the one
// to names (a revision hash or a version; the newest of a version), or by
// default the newest whose image or version differs from the spec's. An
// error says why there is none, and an AppDeployment that adopts a
// Deployment has none: its pods are that Deployment's to roll back.
func undoTarget(ad *platformv1.AppDeployment, to string) (platformv1.Revision, error) {
	if ad.Spec.Adopts() {
		// The pods come from the referenced Deployment's template, which
		// the AppDeployment's spec does not hold: setting the spec back
		// would change nothing the pods run, and a template put in the
		// spec is refused beside workloadRef.
		ref := ad.Spec.WorkloadRef.Name
		return platformv1.Revision{}, fmt.Errorf("appdeployment %q takes its pods from deployment %q (spec.workloadRef): "+
			"roll back that Deployment instead (for example `kubectl rollout undo deployment/%s -n %s`, or the release "+
			"that manages it); the AppDeployment releases the change by its strategy", ad.Name, ref, ref, ad.Namespace)
	}
	revisions := ad.Status.Revisions
	if len(revisions) == 0 {
		return platformv1.Revision{}, fmt.Errorf("appdeployment %q has no promoted revision to go back to (status.revisions is empty)", ad.Name)
	}
	var target *platformv1.Revision
	// The spec's own revision, when the status describes the spec: any
	// other is a change, a template's included.
	current := ""
	if ad.Status.ObservedGeneration == ad.Generation {
		current = ad.Status.CurrentRevision
	}
	for i := range revisions {
		r := &revisions[i]
		other := r.Image != ad.Spec.Image || r.Version != release.Version(&ad.Spec) || current != "" && r.Revision != current
		if to != "" && (r.Revision == to || r.Version == to) || to == "" && other {
			target = r
			break
		}
	}
	switch {
	case target == nil && to != "":
		return platformv1.Revision{}, fmt.Errorf("--to-revision: no promoted revision of appdeployment %q has the hash or version %q; "+
			"`kubectl appdeploy history %s` lists them", ad.Name, to, ad.Name)
	case target == nil:
		return platformv1.Revision{}, fmt.Errorf("appdeployment %q has no promoted revision with another image or version than the spec's "+
			"(%s, version %s): nothing to go back to", ad.Name, ad.Spec.Image, core.OrDash(release.Version(&ad.Spec)))
	case target.Image == "":
		return platformv1.Revision{}, fmt.Errorf("revision %s of appdeployment %q does not record its image, so it cannot be put back",
			target.Revision, ad.Name)
	}
	return *target, nil
}

// setBack sets the spec's image and version to the revision's. A spec that
// left its version to the image's tag keeps doing so when the tag gives the
// revision's version, so that the change is the image alone.
func setBack(spec *platformv1.AppDeploymentSpec, r platformv1.Revision) {
	spec.Image = r.Image
	if spec.Version == "" && release.Version(&platformv1.AppDeploymentSpec{Image: r.Image}) == r.Version {
		return
	}
	spec.Version = r.Version
}
