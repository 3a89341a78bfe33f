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

// Package guard is the webhook server's own defence, in front of every
// handler registered on it: a bound on the requests served at once, so that
// a burst of writes queues at the API server (where API Priority and
// Fairness shares it between tenants) instead of in the manager's memory,
// and optional client authentication on the admission paths, so that only
// the API server, presenting a certificate of a configured CA, is admitted.
package guard
