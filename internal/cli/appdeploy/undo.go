/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package appdeploy

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
	"github.com/example/platform-operator/internal/release"
)

func newUndoCommand(o *options) *cobra.Command {
	var to string
	printFlags := core.NewActionPrintFlags("set back", o.Scheme)
	cmd := o.onApp(&cobra.Command{
		Use:   "undo NAME",
		Short: "Put a version promoted before back in the spec (its image and version only)",
		Long: `Change the AppDeployment's spec back to a version promoted before, recorded in
status.revisions: by default the newest one whose image or version differs
from the spec's (the one before the stable version when the spec's version is
stable; the stable version itself when the spec asks for one not promoted),
or the one --to-revision names by its revision hash or its version.

Only spec.image and spec.version come back. Everything else in the spec
(env, resources, command, health check, strategy) stays as it is now, so the
pods are those of the old revision only if nothing else changed since. The
operator then releases the spec as any other change: a revision promoted
before, with the same pod template, goes back at once without a canary.
Since this changes the spec, a GitOps tool that manages the AppDeployment
sees the change and may revert it: change its source as well.`,
		Example: `  kubectl appdeploy undo order-service
  kubectl appdeploy undo order-service --to-revision v1.2.2
  kubectl appdeploy undo order-service --to-revision 5d8f7c9b4`,
	}, func() error {
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
			what := fmt.Sprintf("%s (revision %s, image %s)", core.OrDash(target.Version), target.Revision, target.Image)
			if target.Image == ad.Spec.Image && target.Version == release.Version(&ad.Spec) {
				printFlags.NamePrintFlags.Operation = "skipped: the spec already asks for " + what
				break
			}
			patch := client.MergeFromWithOptions(ad.DeepCopy(), client.MergeFromWithOptimisticLock{})
			setBack(&ad.Spec, target)
			err = c.Patch(ctx, ad, patch)
			if err == nil {
				printFlags.NamePrintFlags.Operation = "spec set back to " + what
				break
			}
			if !apierrors.IsConflict(err) {
				return explain(err, ad.Name, ad.Namespace)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(ad), ad); err != nil {
				return explain(err, ad.Name, ad.Namespace)
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

// undoTarget is the promoted revision undo sets the spec back to: the one
// to names (a revision hash or a version; the newest of a version), or by
// default the newest whose image or version differs from the spec's. An
// error says why there is none.
func undoTarget(ad *platformv1.AppDeployment, to string) (platformv1.Revision, error) {
	revisions := ad.Status.Revisions
	if len(revisions) == 0 {
		return platformv1.Revision{}, fmt.Errorf("appdeployment %q has no promoted revision to go back to (status.revisions is empty)", ad.Name)
	}
	var target *platformv1.Revision
	for i := range revisions {
		r := &revisions[i]
		if to != "" && (r.Revision == to || r.Version == to) ||
			to == "" && (r.Image != ad.Spec.Image || r.Version != release.Version(&ad.Spec)) {
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
