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

package integration

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"github.com/example/platform-operator/internal/testutil"
)

func TestScheduleTask_CronJobKeepsMoreJobsThanTheTaskKeepsRuns(t *testing.T) {
	// With the task's own limits, `successfulRunsHistoryLimit: 0` would let
	// the CronJob controller delete a finished Job before the operator
	// records it. The CronJob keeps ten more of each outcome.
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "keeps-none")
	st.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](0)
	st.Spec.FailedRunsHistoryLimit = ptr.To[int32](2)
	createTask(t, st)
	g.Eventually(func(g Gomega) {
		cj := cronJobOf(g, st)
		g.Expect(cj.Spec.SuccessfulJobsHistoryLimit).To(Equal(ptr.To[int32](10)))
		g.Expect(cj.Spec.FailedJobsHistoryLimit).To(Equal(ptr.To[int32](12)))
	}, timeout, poll).Should(Succeed())
}
