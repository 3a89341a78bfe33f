// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/apply"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/testutil"
)

// holdWorld is a task's CronJob, a co-tenant who patches its job template,
// and the passes of the operator as act takes them: a put-back is one
// update (template, suspend and the co-tenant's managedFields entry), an
// apply that changes spec.suspend one more. The backoff is the applier's,
// on a fake clock.
type holdWorld struct {
	t       *testing.T
	task    *platformv1.ScheduleTask
	signer  *provenance.Signer
	clock   *clocktesting.FakePassiveClock
	backoff *apply.RepairBackoff
	cronJob *batchv1.CronJob
	// writes counts the operator's writes of the CronJob; wakeAt is when
	// the last pass asked for the next.
	writes int
	wakeAt time.Time
	// rv is the CronJob's resourceVersion, moved by every write.
	rv int
	// beforeAct, when set, runs between a pass's plan and its act: a
	// co-tenant's write the cache has not shown the pass.
	beforeAct func(*pass)
}

func newHoldWorld(t *testing.T) *holdWorld {
	t.Helper()
	signer, err := provenance.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	task := testutil.NewScheduleTask("ns", "fought")
	task.UID, task.Generation = "fought-uid", 1
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC))
	w := &holdWorld{t: t, task: task, signer: signer, clock: clk, backoff: &apply.RepairBackoff{Clock: clk}}
	w.pass()
	w.writes = 0
	return w
}

func (w *holdWorld) key() apply.RepairKey {
	return apply.RepairKey{Kind: jobTemplateKind, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "fought"}}
}

// implant is the co-tenant's patch: a pod template annotation of its own,
// under its own field manager.
func (w *holdWorld) implant(i int) {
	tmpl := &w.cronJob.Spec.JobTemplate.Spec.Template
	if tmpl.Annotations == nil {
		tmpl.Annotations = map[string]string{}
	}
	tmpl.Annotations["co-tenant/implant"] = fmt.Sprint(i)
	w.rv++
	w.cronJob.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "co-tenant", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:spec":{"f:jobTemplate":{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{"f:co-tenant/implant":{}}}}}}}}`)}}}
}

func (w *holdWorld) implanted() bool {
	_, ok := w.cronJob.Spec.JobTemplate.Spec.Template.Annotations["co-tenant/implant"]
	return ok
}

func (w *holdWorld) suspended() bool { return ptr.Deref(w.cronJob.Spec.Suspend, false) }

// pass plans from the CronJob as it is and acts as act does.
func (w *holdWorld) pass() {
	w.t.Helper()
	obs := &observation{templateWait: w.backoff.Wait(w.key())}
	if w.cronJob != nil {
		obs.cronJob = w.cronJob.DeepCopy()
	}
	seen := w.rv
	p := newPass(w.task.DeepCopy(), obs, w.clock.Now(), w.signer)
	if err := p.planCronJob(testScheme(w.t)); err != nil {
		w.t.Fatal(err)
	}
	if w.beforeAct != nil {
		w.beforeAct(p)
	}
	if p.templateChanged {
		w.backoff.Changed(w.key())
	}
	desired := &batchv1.CronJob{}
	if err := convert(p.desired, desired); err != nil {
		w.t.Fatal(err)
	}
	desired.Spec.JobTemplate.Spec.Template = *provenance.Defaulted(&desired.Spec.JobTemplate.Spec.Template)
	switch {
	case w.cronJob == nil:
		w.cronJob = desired
		w.cronJob.Annotations = map[string]string{apply.AppliedHashAnnotation: hashOf(w.t, p)}
		w.writes++
		w.rv++
	case p.resumes():
		// A patch on the version the pass saw: refused if it moved.
		if w.rv == seen {
			w.cronJob.Spec.Suspend = ptr.To(false)
			w.cronJob.Annotations = map[string]string{apply.AppliedHashAnnotation: hashOf(w.t, p)}
			w.writes++
			w.rv++
		}
	case p.putBackTemplate:
		// An update of the CronJob read past the cache, stamped with the
		// held configuration's hash.
		w.cronJob.Spec.JobTemplate = desired.Spec.JobTemplate
		w.cronJob.Spec.Suspend = desired.Spec.Suspend
		w.cronJob.ManagedFields = nil
		w.cronJob.Annotations = map[string]string{apply.AppliedHashAnnotation: hashOf(w.t, p)}
		w.backoff.Repaired(w.key(), "co-tenant")
		w.writes++
		w.rv++
	case w.cronJob.Annotations[apply.AppliedHashAnnotation] != hashOf(w.t, p):
		// An apply, onto whatever the CronJob is.
		w.cronJob.Spec.Suspend = desired.Spec.Suspend
		w.cronJob.Annotations = map[string]string{apply.AppliedHashAnnotation: hashOf(w.t, p)}
		w.writes++
		w.rv++
	}
	w.wakeAt = time.Time{}
	if d := max(p.requeueAfter, w.backoff.Wait(w.key())); d > 0 {
		w.wakeAt = w.clock.Now().Add(d)
	}
}

// hashOf is the hash of the pass's configuration, as the applier records it.
func hashOf(t *testing.T, p *pass) string {
	t.Helper()
	h, err := apply.Hash(p.desired)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// step moves the clock by d, running the pass asked for on the way.
func (w *holdWorld) step(d time.Duration) {
	end := w.clock.Now().Add(d)
	for !w.wakeAt.IsZero() && !w.wakeAt.After(end) {
		w.clock.SetTime(w.wakeAt)
		w.pass()
		w.check()
	}
	w.clock.SetTime(end)
}

// check is the invariant: after a pass, a CronJob whose template holds the
// implant cannot fire.
func (w *holdWorld) check() {
	w.t.Helper()
	if w.implanted() && !w.suspended() {
		w.t.Fatalf("at %s the CronJob may fire with the implant", w.clock.Now().Format(time.TimeOnly))
	}
}

func TestTemplateHold_ALoopOfImplantsCostsARepairPerBackoffStepAndNeverRuns(t *testing.T) {
	w := newHoldWorld(t)
	start := w.clock.Now()
	// Two hundred patches at ten a second, each answered by a pass as the
	// CronJob's update event would.
	for i := range 200 {
		w.implant(i)
		w.pass()
		w.check()
		w.step(100 * time.Millisecond)
	}
	window := w.clock.Now().Sub(start)
	during := w.writes
	// Then quiet: the held repair comes, and after its wait the CronJob is
	// applied unsuspended.
	w.step(10 * time.Minute)
	if w.implanted() || w.suspended() {
		t.Fatalf("after the fight: implanted %v, suspended %v; want neither", w.implanted(), w.suspended())
	}
	// The backoff's repairs in the window, the one after the last patch
	// and the apply that ends the hold.
	if limit := apply.RepairsWithin(window) + 2; w.writes > limit {
		t.Errorf("%d writes for 200 patches in %s (%d during it); want at most %d", w.writes, window, during, limit)
	}
	t.Logf("%d writes for 200 patches in %s (%d during it)", w.writes, window, during)
}

func TestTemplateHold_AChangeTheCacheHasNotShownIsNeverResumedInto(t *testing.T) {
	w := newHoldWorld(t)
	w.implant(0)
	w.pass()
	w.check()
	// Every time a pass would lift the hold, the co-tenant changes the
	// template after the pass read the CronJob and before it writes.
	late := 0
	w.beforeAct = func(p *pass) {
		if p.resumes() {
			late++
			w.implant(100 + late)
		}
	}
	w.step(2 * time.Minute)
	if late == 0 {
		t.Fatal("no pass tried to resume the CronJob; the test tests nothing")
	}
	w.check()
	// Once the co-tenant stops, the CronJob is resumed with the task's
	// template.
	w.beforeAct = nil
	w.pass()
	w.step(10 * time.Minute)
	if w.implanted() || w.suspended() {
		t.Fatalf("after the fight: implanted %v, suspended %v; want neither", w.implanted(), w.suspended())
	}
}

func TestPlanTemplateHold(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		implanted, suspended   bool
		wait                   time.Duration
		putBack, held, suspend bool
	}{
		{name: "unchanged", suspend: false},
		{name: "changed on a CronJob that can fire: put back at once", implanted: true,
			putBack: true, held: true, suspend: true},
		{name: "changed while held, repair due: put back", implanted: true, suspended: true,
			putBack: true, held: true, suspend: true},
		{name: "changed while held, repair waits: stays suspended", implanted: true, suspended: true, wait: time.Second,
			held: true, suspend: true},
		{name: "changed and unsuspended by the co-tenant while the repair waits: put back at once",
			implanted: true, wait: time.Second, putBack: true, held: true, suspend: true},
		{name: "put back, repair would wait: stays suspended", suspended: true, wait: time.Second,
			held: true, suspend: true},
		{name: "put back and the wait is over: unsuspended", suspended: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newHoldWorld(t)
			if tc.implanted {
				w.implant(1)
			}
			w.cronJob.Spec.Suspend = ptr.To(tc.suspended)
			obs := &observation{cronJob: w.cronJob.DeepCopy(), templateWait: tc.wait}
			p := newPass(w.task, obs, w.clock.Now(), w.signer)
			if err := p.planCronJob(testScheme(t)); err != nil {
				t.Fatal(err)
			}
			got := [3]bool{p.putBackTemplate, p.templateHeld, ptr.Deref(p.desired.Spec.Suspend, false)}
			if want := [3]bool{tc.putBack, tc.held, tc.suspend}; got != want {
				t.Errorf("put back, held, suspend = %v; want %v", got, want)
			}
			if tc.wait > 0 && !tc.putBack && p.requeueAfter != tc.wait {
				t.Errorf("next pass in %s; want %s, when the repair is due", p.requeueAfter, tc.wait)
			}
		})
	}
}

func TestResumes_OnlyASuspensionTheOperatorApplied(t *testing.T) {
	w := newHoldWorld(t)
	plan := func(suspended bool, hash string) *pass {
		cj := w.cronJob.DeepCopy()
		cj.Spec.Suspend = ptr.To(suspended)
		cj.Annotations = map[string]string{apply.AppliedHashAnnotation: hash}
		p := newPass(w.task, &observation{cronJob: cj}, w.clock.Now(), w.signer)
		if err := p.planCronJob(testScheme(t)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unheld := hashOf(t, plan(false, ""))
	held, err := plan(false, "").hashSuspended(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		suspended bool
		hash      string
		want      bool
	}{
		{"held by the operator: resumed by its patch", true, held, true},
		{"suspended by someone else under this configuration: the applier's repair, with its backoff", true, unheld, false},
		{"not suspended", false, held, false},
	} {
		if got := plan(tc.suspended, tc.hash).resumes(); got != tc.want {
			t.Errorf("%s: resumes %v, want %v", tc.name, got, tc.want)
		}
	}
}
