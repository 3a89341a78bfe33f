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

package scheduletask

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// ownWrites remembers, per task, the resourceVersions that this manager's
// own writes replaced, until the cache shows a newer one. A pass that starts
// from a version the manager has already replaced would work from stale data
// and end in a conflict (and, at scale, a storm of them); it is skipped
// instead, because the watch event of the write that replaced it is on its
// way and starts a pass on fresh data. Versions are only compared for
// equality, never ordered.
type ownWrites struct {
	mu       sync.Mutex
	replaced map[types.UID]map[string]struct{}
}

// wrote records that a write replaced version before of the task.
func (w *ownWrites) wrote(uid types.UID, before string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.replaced == nil {
		w.replaced = map[types.UID]map[string]struct{}{}
	}
	if w.replaced[uid] == nil {
		w.replaced[uid] = map[string]struct{}{}
	}
	w.replaced[uid][before] = struct{}{}
}

// stale reports whether version rv of the task is one its own writes
// replaced. A version it did not replace means the cache has caught up (or
// someone else wrote), and the task's record is dropped.
func (w *ownWrites) stale(uid types.UID, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.replaced[uid][rv]; ok {
		return true
	}
	delete(w.replaced, uid)
	return false
}

// forget drops what is known of a task, once it is gone.
func (w *ownWrites) forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.replaced, uid)
}
