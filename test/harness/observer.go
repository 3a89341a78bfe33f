// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/jobutil"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// Observer watches the cluster from the benchmark's side and notes when it
// first saw each thing happen. Every figure is a difference of two such
// notes, taken by the same process and clock, so watch delay cancels out.
type Observer struct {
	cache cache.Cache

	mu sync.Mutex
	// ready is when each task was first seen with its CronJob and Ready=True.
	ready    map[types.NamespacedName]time.Time
	cronJobs map[types.NamespacedName]time.Time
	readyST  map[types.NamespacedName]time.Time
	jobs     map[types.UID]*JobNote
	// runs maps a Job's UID to the TaskRuns that point at it.
	runs map[types.UID]map[types.NamespacedName]*RunNote
}

// JobNote is what was seen of one Job.
type JobNote struct {
	Key       types.NamespacedName
	Seen      time.Time
	Completed time.Time
	Scheduled time.Time
	Deleted   bool
}

// RunNote is what was seen of one TaskRun.
type RunNote struct {
	Seen      time.Time
	Succeeded time.Time
	Finished  bool
}

// StartObserver starts informers on ScheduleTasks, CronJobs, Jobs (with the
// task label) and TaskRuns, and returns once they have synced.
func StartObserver(ctx context.Context, cfg *rest.Config) (*Observer, error) {
	hasTask, err := labels.NewRequirement(platformv1.ScheduleTaskLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(cfg, cache.Options{
		Scheme:           testenv.Scheme(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}:     {Label: labels.NewSelector().Add(*hasTask)},
			&batchv1.CronJob{}: {Label: labels.NewSelector().Add(*hasTask)},
		},
	})
	if err != nil {
		return nil, err
	}
	o := &Observer{
		cache:    c,
		ready:    map[types.NamespacedName]time.Time{},
		cronJobs: map[types.NamespacedName]time.Time{},
		readyST:  map[types.NamespacedName]time.Time{},
		jobs:     map[types.UID]*JobNote{},
		runs:     map[types.UID]map[types.NamespacedName]*RunNote{},
	}
	handlers := []struct {
		obj     client.Object
		onEvent func(obj any, deleted bool)
	}{
		{&platformv1.ScheduleTask{}, o.onTask},
		{&batchv1.CronJob{}, o.onCronJob},
		{&batchv1.Job{}, o.onJob},
		{&platformv1.TaskRun{}, o.onRun},
	}
	for _, h := range handlers {
		inf, err := c.GetInformer(ctx, h.obj)
		if err != nil {
			return nil, err
		}
		on := h.onEvent
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { on(obj, false) },
			UpdateFunc: func(_, obj any) { on(obj, false) },
			DeleteFunc: func(obj any) {
				if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				on(obj, true)
			},
		}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the benchmark's informers did not sync")
	}
	return o, nil
}

func (o *Observer) onTask(obj any, deleted bool) {
	st, ok := obj.(*platformv1.ScheduleTask)
	if !ok || deleted {
		return
	}
	cond := meta.FindStatusCondition(st.Status.Conditions, platformv1.ConditionReady)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.ObservedGeneration != st.Generation {
		return
	}
	o.firstSeen(o.readyST, client.ObjectKeyFromObject(st))
}

func (o *Observer) onCronJob(obj any, deleted bool) {
	cj, ok := obj.(*batchv1.CronJob)
	if !ok || deleted {
		return
	}
	o.firstSeen(o.cronJobs, client.ObjectKeyFromObject(cj))
}

// firstSeen notes when key first entered seen (the tasks seen Ready, or the
// CronJobs seen), and marks the task ready once both have been seen.
func (o *Observer) firstSeen(seen map[types.NamespacedName]time.Time, key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := seen[key]; ok {
		return
	}
	seen[key] = time.Now()
	o.noteReady(key)
}

// noteReady marks the task ready once both its CronJob and its Ready
// condition have been seen. Callers hold o.mu.
func (o *Observer) noteReady(key types.NamespacedName) {
	_, cj := o.cronJobs[key]
	_, st := o.readyST[key]
	if cj && st {
		o.ready[key] = time.Now()
	}
}

func (o *Observer) onJob(obj any, deleted bool) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return
	}
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.jobs[job.UID]
	if n == nil {
		n = &JobNote{Key: client.ObjectKeyFromObject(job), Seen: now}
		if t, err := time.Parse(time.RFC3339, job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]); err == nil {
			n.Scheduled = t
		}
		o.jobs[job.UID] = n
	}
	n.Deleted = n.Deleted || deleted
	if _, succeeded := jobutil.Finished(job); n.Completed.IsZero() && succeeded {
		n.Completed = now
	}
}

func (o *Observer) onRun(obj any, deleted bool) {
	tr, ok := obj.(*platformv1.TaskRun)
	if !ok || tr.Spec.JobRef == nil {
		return
	}
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	uid := tr.Spec.JobRef.UID
	key := client.ObjectKeyFromObject(tr)
	if deleted {
		delete(o.runs[uid], key)
		return
	}
	if o.runs[uid] == nil {
		o.runs[uid] = map[types.NamespacedName]*RunNote{}
	}
	n := o.runs[uid][key]
	if n == nil {
		n = &RunNote{Seen: now}
		o.runs[uid][key] = n
	}
	n.Finished = tr.IsFinished()
	if n.Succeeded.IsZero() && tr.Status.Phase == platformv1.TaskRunSucceeded {
		n.Succeeded = now
	}
}

// ReadyCount is how many of the tasks in namespace are ready, and when the
// last of them became so.
func (o *Observer) ReadyCount(namespace string) (int, time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n int
	var last time.Time
	for key, t := range o.ready {
		if key.Namespace == namespace {
			n++
			if t.After(last) {
				last = t
			}
		}
	}
	return n, last
}

// JobsIn returns the notes of the Jobs seen in namespace.
func (o *Observer) JobsIn(namespace string) map[types.UID]JobNote {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[types.UID]JobNote{}
	for uid, n := range o.jobs {
		if n.Key.Namespace == namespace {
			out[uid] = *n
		}
	}
	return out
}

// RunsOf returns the notes of the TaskRuns that point at the Job.
func (o *Observer) RunsOf(uid types.UID) []RunNote {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]RunNote, 0, len(o.runs[uid]))
	for _, n := range o.runs[uid] {
		out = append(out, *n)
	}
	return out
}

// RunCount counts the TaskRuns seen that point at a Job, and how many of
// them are finished.
func (o *Observer) RunCount() (all, finished int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, byKey := range o.runs {
		for _, n := range byKey {
			all++
			if n.Finished {
				finished++
			}
		}
	}
	return all, finished
}

// JobsWithoutOneRun lists the live Jobs of namespace (every namespace when
// empty) that do not have exactly one TaskRun, and the TaskRuns that point at
// a Job never seen.
func (o *Observer) JobsWithoutOneRun(namespace string) (bad []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	in := func(key types.NamespacedName) bool { return namespace == "" || key.Namespace == namespace }
	for uid, n := range o.jobs {
		if in(n.Key) && !n.Deleted && len(o.runs[uid]) != 1 {
			bad = append(bad, fmt.Sprintf("Job %s has %d TaskRuns", n.Key, len(o.runs[uid])))
		}
	}
	for uid, byKey := range o.runs {
		if _, ok := o.jobs[uid]; ok {
			continue
		}
		for key := range byKey {
			if in(key) {
				bad = append(bad, fmt.Sprintf("TaskRun %s points at Job UID %s, never seen", key, uid))
			}
		}
	}
	return bad
}
