// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
)

const (
	// editedTasks, usersPerTask and editsPerUser make 5 x 4 x 10 = 200 edits.
	editedTasks  = 5
	usersPerTask = 4
	editsPerUser = 10
)

// quietSchedules fire once a year, on the first days of January, so no run
// starts while the test edits the tasks.
var quietSchedules = []string{"0 3 1 1 *", "15 4 2 1 *", "30 5 3 1 *"}

// userBackoff is how a user retries an edit that conflicted: many times,
// since several users and the manager write the same task, a few
// milliseconds apart, with jitter so that the users do not keep colliding in
// lockstep. (No Cap: reaching it would end the retries.)
var userBackoff = wait.Backoff{Steps: 500, Duration: 5 * time.Millisecond, Factor: 1, Jitter: 2}

// editVar names the env var that records edit n of user u.
func editVar(u, n int) string { return fmt.Sprintf("EDIT_%d_%d", u, n) }

// applyUserEdit is edit n of user u: it adds the env var recording the edit
// and sets the one field user u owns to the edit's value. Two of those
// fields, suspend and schedule, change what the manager writes into the
// status (the Ready reason, nextScheduleTime), and every edit moves the
// generation, so each one is followed by a status write and a CronJob update.
func applyUserEdit(spec *platformv1.ScheduleTaskSpec, u, n int) {
	spec.Env = append(spec.Env, corev1.EnvVar{Name: editVar(u, n), Value: strconv.Itoa(n)})
	switch u % 4 {
	case 0:
		spec.Suspend = ptr.To(n%2 == 0)
	case 1:
		spec.Schedule = quietSchedules[n%len(quietSchedules)]
	case 2:
		spec.Args = []string{"--edit", strconv.Itoa(n)}
	case 3:
		spec.BackoffLimit = ptr.To(int32(n))
	}
}

// editAsUser makes every edit of user u to a task, each a read-modify-write
// through the non-caching client, retried on conflict. It returns how many
// conflicts it met.
func editAsUser(ctx context.Context, key client.ObjectKey, u int) (conflicts int64, err error) {
	for n := range editsPerUser {
		err := retry.RetryOnConflict(userBackoff, func() error {
			task := &platformv1.ScheduleTask{}
			if err := k8sClient.Get(ctx, key, task); err != nil {
				return err
			}
			applyUserEdit(&task.Spec, u, n)
			err := k8sClient.Update(ctx, task)
			if apierrors.IsConflict(err) {
				conflicts++
			}
			return err
		})
		if err != nil {
			return conflicts, fmt.Errorf("user %d, edit %d of %s: %w", u, n, key.Name, err)
		}
		// Think time, so the manager's passes fall between the edits.
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
	}
	return conflicts, nil
}

// expectedSpec is the spec every user's every edit, applied to the spec the
// task was created with, leaves behind, with env sorted by name: the env vars
// are appended in whatever order the edits won their races, and each user
// owns its own field, so nothing else depends on the interleaving.
func expectedSpec(created platformv1.ScheduleTaskSpec) platformv1.ScheduleTaskSpec {
	spec := *created.DeepCopy()
	for u := range usersPerTask {
		for n := range editsPerUser {
			applyUserEdit(&spec, u, n)
		}
	}
	return sortedEnv(spec)
}

// lostEdits lists the edits whose env var is missing from spec.
func lostEdits(spec platformv1.ScheduleTaskSpec) []string {
	var lost []string
	for u := range usersPerTask {
		for n := range editsPerUser {
			if !slices.ContainsFunc(spec.Env, func(e corev1.EnvVar) bool { return e.Name == editVar(u, n) }) {
				lost = append(lost, editVar(u, n))
			}
		}
	}
	return lost
}

// sortedEnv returns a copy of spec with env sorted by name.
func sortedEnv(spec platformv1.ScheduleTaskSpec) platformv1.ScheduleTaskSpec {
	out := *spec.DeepCopy()
	slices.SortFunc(out.Env, func(a, b corev1.EnvVar) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// taskHistory records, for each task, whether each change the API server
// reported moved the spec (a new generation) or the status.
type taskHistory struct {
	mu      sync.Mutex
	changes map[string][]taskChange
}

type taskChange struct{ spec, status bool }

// follow records every change of the tasks of a namespace until ctx ends;
// the returned channel closes when it has stopped.
func (h *taskHistory) follow(ctx context.Context, w watch.Interface) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.Stop()
		last := map[string]*platformv1.ScheduleTask{}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				task, isTask := ev.Object.(*platformv1.ScheduleTask)
				if !isTask {
					continue
				}
				if prev := last[task.Name]; prev != nil && ev.Type == watch.Modified {
					h.mu.Lock()
					h.changes[task.Name] = append(h.changes[task.Name], taskChange{
						spec:   task.Generation != prev.Generation,
						status: !equality.Semantic.DeepEqual(task.Status, prev.Status),
					})
					h.mu.Unlock()
				}
				last[task.Name] = task
			}
		}
	}()
	return done
}

// statusWritesBetweenEdits counts the status writes that landed before some
// later spec edit of the same task: the writes that really raced the users.
func (h *taskHistory) statusWritesBetweenEdits() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	total := 0
	for _, changes := range h.changes {
		lastEdit := -1
		for i, c := range changes {
			if c.spec {
				lastEdit = i
			}
		}
		for _, c := range changes[:max(lastEdit, 0)] {
			if c.status && !c.spec {
				total++
			}
		}
	}
	return total
}

func TestScheduleTask_ConcurrentUserEditsAreNeverLost(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := newNamespace(t)
	start := time.Now()

	// Every change of the tasks, in the order the API server made them.
	wc, err := client.NewWithWatch(testEnv.Config, client.Options{Scheme: testEnv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &platformv1.ScheduleTaskList{}, client.InNamespace(ns))
	g.Expect(err).NotTo(HaveOccurred())
	history := &taskHistory{changes: map[string][]taskChange{}}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watchDone := history.follow(watchCtx, w)

	// The users start as soon as the tasks exist, so their edits also race
	// the manager adding its finalizer and creating the CronJobs.
	created := map[string]platformv1.ScheduleTaskSpec{}
	tasks := make([]client.ObjectKey, 0, editedTasks)
	for i := range editedTasks {
		st := testutil.NewScheduleTask(ns, fmt.Sprintf("edited-%d", i), testutil.WithSchedule(quietSchedules[0]))
		st.Spec.Env = []corev1.EnvVar{{Name: "BASE", Value: "kept"}}
		g.Expect(k8sClient.Create(ctx, st)).To(Succeed())
		created[st.Name] = st.Spec // as the API server stored it, defaults included
		tasks = append(tasks, client.ObjectKeyFromObject(st))
	}

	var conflicts atomic.Int64
	errs := make([]error, editedTasks*usersPerTask)
	var users sync.WaitGroup
	for i, key := range tasks {
		for u := range usersPerTask {
			users.Go(func() {
				c, err := editAsUser(ctx, key, u)
				conflicts.Add(c)
				errs[i*usersPerTask+u] = err
			})
		}
	}
	users.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("not every edit was committed: %v", err)
	}
	edited := time.Since(start)

	// No edit is lost: each task's spec is exactly what the users' edits
	// made of it, and it took exactly one generation per edit, so nothing
	// but the users ever changed it.
	for _, key := range tasks {
		task := getTask(g, key)
		g.Expect(lostEdits(task.Spec)).To(BeEmpty(), "edits lost from %s", key.Name)
		g.Expect(sortedEnv(task.Spec)).To(Equal(expectedSpec(created[key.Name])), "spec of %s", key.Name)
		g.Expect(task.Generation).To(Equal(int64(1+usersPerTask*editsPerUser)), "generations of %s", key.Name)
	}

	// The manager catches up: the status describes the last spec, and the
	// CronJob runs it.
	for _, key := range tasks {
		g.Eventually(func(g Gomega) {
			task := getTask(g, key)
			g.Expect(sortedEnv(task.Spec)).To(Equal(expectedSpec(created[key.Name])), "spec of %s", key.Name)
			g.Expect(task.Generation).To(Equal(int64(1+usersPerTask*editsPerUser)), "generations of %s", key.Name)
			g.Expect(task.Finalizers).To(ContainElement("platform.example.com/cancel-runs"))
			g.Expect(task.Status.ObservedGeneration).To(Equal(task.Generation), "status of %s observed the last edit", key.Name)
			suspended := ptr.Deref(task.Spec.Suspend, false)
			ready := meta.FindStatusCondition(task.Status.Conditions, platformv1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(ready.ObservedGeneration).To(Equal(task.Generation))
			if suspended {
				g.Expect(ready.Reason).To(Equal(platformv1.ReasonSuspended))
				g.Expect(task.Status.NextScheduleTime).To(BeNil())
			} else {
				g.Expect(ready.Reason).To(Equal(platformv1.ReasonCronJobReady))
				g.Expect(task.Status.NextScheduleTime).NotTo(BeNil())
			}

			cj := &batchv1.CronJob{}
			g.Expect(k8sClient.Get(ctx, key, cj)).To(Succeed())
			g.Expect(metav1.IsControlledBy(cj, task)).To(BeTrue())
			g.Expect(cj.Spec.Schedule).To(Equal(task.Spec.Schedule))
			g.Expect(cj.Spec.Suspend).To(Equal(ptr.To(suspended)))
			jt := cj.Spec.JobTemplate.Spec
			g.Expect(jt.BackoffLimit).To(Equal(task.Spec.BackoffLimit))
			g.Expect(jt.Template.Spec.Containers).To(HaveLen(1))
			c := jt.Template.Spec.Containers[0]
			g.Expect(c.Args).To(Equal(task.Spec.Args))
			g.Expect(c.Env).To(Equal(task.Spec.Env), "CronJob of %s has the env in the task's order", key.Name)
		}, timeout, poll).Should(Succeed())
	}

	stopWatch()
	<-watchDone
	raced := history.statusWritesBetweenEdits()
	t.Logf("%d users committed %d edits in %v, retrying %d conflicts; "+
		"the manager wrote status %d times between edits; converged after %v",
		editedTasks*usersPerTask, editedTasks*usersPerTask*editsPerUser, edited.Round(time.Millisecond),
		conflicts.Load(), raced, time.Since(start).Round(time.Millisecond))
	g.Expect(raced).To(BeNumerically(">", 0), "the manager wrote status while the users were still editing")
}
