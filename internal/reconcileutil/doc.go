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

// Package reconcileutil holds what every reconciler of this project shares:
// server-side apply that writes only on change, a status writer that writes
// once and only on change, condition stamping, the expectations store that
// remembers this manager's own writes and deletions, per-kind cache blocks,
// conflict handling and label indexes. Nothing here knows a kind.
package reconcileutil
