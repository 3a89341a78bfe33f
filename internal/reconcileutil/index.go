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

package reconcileutil

import "sigs.k8s.io/controller-runtime/pkg/client"

// LabelIndex indexes objects by the value of one label, for a cache field
// index: a label selector on a cached List scans every object of the
// namespace, an index finds the few that match at once.
func LabelIndex(key string) client.IndexerFunc {
	return func(obj client.Object) []string {
		if v, ok := obj.GetLabels()[key]; ok {
			return []string{v}
		}
		return nil
	}
}
