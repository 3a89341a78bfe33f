// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package scheduletask

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// pendingEvent is an event of a pass, sent once the pass's one status write
// is done (see emit).
type pendingEvent struct {
	related                            runtime.Object
	eventType, reason, action, message string
	// transition: the event announces a change the status records (a
	// resume, a suspension after failures, missed runs, staleness). It goes
	// out only once that status is stored: a pass whose write failed makes
	// the same change again, and announces it then. Any other event tells
	// of what the pass did in the cluster (a run started, a CronJob
	// written), which stands whatever became of the status write.
	transition bool
}

// event queues an event about what the pass did in the cluster.
func (p *pass) event(related runtime.Object, eventType, reason, action, format string, args ...any) {
	p.events = append(p.events, pendingEvent{related: related, eventType: eventType, reason: reason,
		action: action, message: fmt.Sprintf(format, args...)})
}

// transition queues an event about a change the status records.
func (p *pass) transition(related runtime.Object, eventType, reason, action, format string, args ...any) {
	p.events = append(p.events, pendingEvent{related: related, eventType: eventType, reason: reason,
		action: action, message: fmt.Sprintf(format, args...), transition: true})
}

// emit sends the pass's events, in the order the pass made them, after its
// status write: all of them when the status was stored (or needed no
// write), and only those of what the pass did in the cluster when the
// write failed.
func (r *Reconciler) emit(task *platformv1.ScheduleTask, p *pass, stored bool) {
	for _, e := range p.events {
		if e.transition && !stored {
			continue
		}
		r.Recorder.Eventf(task, e.related, e.eventType, e.reason, e.action, "%s", e.message)
	}
}
