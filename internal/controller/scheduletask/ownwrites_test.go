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

import "testing"

func TestOwnWrites_AVersionReplacedByOwnWriteIsStaleUntilTheCacheCatchesUp(t *testing.T) {
	var w ownWrites
	if w.stale("a", "1") {
		t.Fatal("nothing written yet, but version 1 is stale")
	}
	w.wrote("a", "1") // finalizer: 1 -> 2
	w.wrote("a", "2") // status: 2 -> 3
	for _, rv := range []string{"1", "2"} {
		if !w.stale("a", rv) {
			t.Errorf("version %s was replaced by our own write, want stale", rv)
		}
	}
	if w.stale("b", "1") {
		t.Error("another task's version 1 is stale")
	}
	if w.stale("a", "3") {
		t.Error("version 3 is the newest, want fresh")
	}
	if w.stale("a", "1") {
		t.Error("the cache caught up: the record should be gone, so version 1 is no longer known as replaced")
	}
	w.wrote("a", "3")
	w.forget("a")
	if w.stale("a", "3") {
		t.Error("forgotten task still has replaced versions")
	}
}
