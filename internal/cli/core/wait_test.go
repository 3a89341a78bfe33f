// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// noWatchList is a fake client that says it cannot stream a watch's initial
// list, so that the informer lists first, as client-go's fakes ask.
type noWatchList struct{ client.WithWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

func configMap(name, phase string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}, Data: map[string]string{"phase": phase}}
}

// done is the phase the tests wait for.
const done = "Done"

// isDone is a WaitFor condition that records the phases it saw.
func isDone(seen *[]string) func(*corev1.ConfigMap) (bool, error) {
	return func(cm *corev1.ConfigMap) (bool, error) {
		*seen = append(*seen, cm.Data["phase"])
		return cm.Data["phase"] == done, nil
	}
}

func TestWaitFor_ReturnsAtOnceWhenTheObjectIsAlreadyDone(t *testing.T) {
	c := noWatchList{fake.NewClientBuilder().WithObjects(configMap("other", "Running"), configMap("target", done)).Build()}
	var seen []string
	got, err := WaitFor(t.Context(), c, &corev1.ConfigMap{}, &corev1.ConfigMapList{}, client.ObjectKey{Namespace: "team", Name: "target"}, isDone(&seen))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "target" || !cmp.Equal(seen, []string{done}) {
		t.Errorf("got %s after seeing %v, want target after [Done]", got.Name, seen)
	}
}

func TestWaitFor_FollowsChangesUntilDone(t *testing.T) {
	ctx := t.Context()
	c := noWatchList{fake.NewClientBuilder().WithObjects(configMap("target", "Pending")).Build()}
	// The fake's watch starts some time after the list and ignores what
	// happened in between, so the object changes until the wait ends.
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			phase := fmt.Sprintf("Running-%d", i)
			if i >= 5 {
				phase = done
			}
			_ = c.Update(ctx, configMap("target", phase))
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var seen []string
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	got, err := WaitFor(wctx, c, &corev1.ConfigMap{}, &corev1.ConfigMapList{}, client.ObjectKey{Namespace: "team", Name: "target"}, isDone(&seen))
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["phase"] != done || len(seen) < 2 || seen[len(seen)-1] != done {
		t.Errorf("got %v after seeing %v", got.Data, seen)
	}
}

// changesOnWatch is a client whose watch delivers Running as soon as it
// starts, so the informer's store is ahead of what the wait has been shown,
// and Done once the wait has seen Running.
type changesOnWatch struct {
	noWatchList
	watcher *watch.FakeWatcher
}

func (c changesOnWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	running := configMap("target", "Running")
	running.ResourceVersion = "1000"
	c.watcher.Modify(running)
	return c.watcher, nil
}

func TestWaitFor_ShowsEveryVersionInOrderWhenTheStoreIsAhead(t *testing.T) {
	c := changesOnWatch{
		noWatchList: noWatchList{fake.NewClientBuilder().WithObjects(configMap("target", "Pending")).Build()},
		watcher:     watch.NewFakeWithChanSize(2, false),
	}
	var seen []string
	record := isDone(&seen)
	wctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := WaitFor(wctx, c, &corev1.ConfigMap{}, &corev1.ConfigMapList{}, client.ObjectKey{Namespace: "team", Name: "target"},
		func(cm *corev1.ConfigMap) (bool, error) {
			if cm.Data["phase"] == "Running" {
				finished := configMap("target", done)
				finished.ResourceVersion = "1001"
				c.watcher.Modify(finished)
			}
			return record(cm)
		})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Pending", "Running", done}; !cmp.Equal(seen, want) {
		t.Errorf("saw %v, want %v: a version came after a newer one", seen, want)
	}
}

func TestWaitFor_TimeoutWrapsDeadlineAndKeepsTheLastVersion(t *testing.T) {
	c := noWatchList{fake.NewClientBuilder().WithObjects(configMap("target", "Running")).Build()}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	var seen []string
	got, err := WaitFor(ctx, c, &corev1.ConfigMap{}, &corev1.ConfigMapList{}, client.ObjectKey{Namespace: "team", Name: "target"}, isDone(&seen))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want one that wraps context.DeadlineExceeded", err)
	}
	if got == nil || got.Data["phase"] != "Running" {
		t.Errorf("last version = %v, want the Running one", got)
	}
}

func TestWaitFor_DeletedObjectEndsTheWait(t *testing.T) {
	ctx := t.Context()
	c := noWatchList{fake.NewClientBuilder().WithObjects(configMap("target", "Running")).Build()}
	// As above, the deletion is repeated until the watch has seen one.
	go func() {
		for ctx.Err() == nil {
			_ = c.Delete(ctx, configMap("target", ""))
			time.Sleep(20 * time.Millisecond)
			_ = c.Create(ctx, configMap("target", "Running"))
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var seen []string
	_, err := WaitFor(wctx, c, &corev1.ConfigMap{}, &corev1.ConfigMapList{}, client.ObjectKey{Namespace: "team", Name: "target"}, isDone(&seen))
	if err == nil || !strings.Contains(err.Error(), "target was deleted") {
		t.Errorf("err = %v, want the deletion", err)
	}
}

func TestProgress_PipeGetsALineForEachChange(t *testing.T) {
	var b strings.Builder
	p := NewProgress(&b, "run-1", false, clocktesting.NewFakePassiveClock(time.Now()))
	for _, phase := range []string{"", "Pending", "Pending", "Running", "Succeeded"} {
		p.Set(phase)
	}
	p.Stop()
	if diff := cmp.Diff("run-1 Pending\nrun-1 Running\nrun-1 Succeeded\n", b.String()); diff != "" {
		t.Errorf("progress on a pipe (-want +got):\n%s", diff)
	}
}

func TestProgress_TerminalRedrawsOneLine(t *testing.T) {
	// Stop waits for the redrawing goroutine, so b is read after it ends.
	var b strings.Builder
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := NewProgress(&b, "run-1", true, clock)
	p.Set("Running")
	clock.SetTime(clock.Now().Add(90 * time.Second))
	p.Set("Succeeded")
	p.Stop()
	got := b.String()
	if !strings.HasPrefix(got, "\r"+spinner[0]+" Running  0s   \r") || !strings.HasSuffix(got, " Succeeded  90s   \n") {
		t.Errorf("progress on a terminal = %q", got)
	}
	if strings.Count(got, "\n") != 1 {
		t.Errorf("progress on a terminal wrote more than one line: %q", got)
	}
}
